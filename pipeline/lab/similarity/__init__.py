"""The similarity lab (Pereyda & Holder 2020): what ``gmeter similarity`` runs and writes.

The experiments of ``gmeter similarity run`` (AIQ environment families, scikit-learn
classification, Gymnasium), the published tables as reported bundles, and the bundle writers.
"""
