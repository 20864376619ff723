"""The g-index lab (Venkatasubramanian et al. 2021): published experiments and flow files.

The companion code's published experiments and their conversion into reported bundles
(``gmeter import maya-experiment``, ``gmeter gindex``).
"""
