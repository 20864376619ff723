"""Pure maths of the generality paper (Hernández-Orallo et al. 2021).

Transformations, agent characteristic curves, the full study and its bootstrap.
"""
