"""The generality lab (Hernández-Orallo et al. 2021): response files on disk.

Response files read as a population (``gmeter generality RESPONSES.csv``, ``gmeter fa``,
``gmeter irt``) and the per-agent tables.
"""
