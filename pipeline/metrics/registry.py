"""One registry of metrics: name, direction, label, unit, description.

It drives ranking (``higher`` or ``lower`` is better), column labels on the site and the
family of invariance tests. A metric a track emits that is missing here still works (it is
shown with its raw name and ranked higher-is-better) but a test flags it, so none is forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricInfo:
    """How one metric is read.

    Attributes
    ----------
    name : str
        The snake_case name stored in ``scores.metric``.
    track : str
        The track that emits it.
    direction : str
        ``higher`` or ``lower`` (is better), or ``none`` for descriptive numbers.
    label : str
        Column heading.
    unit : str
        Unit or range, shown in axis labels.
    description : str
        One sentence for the site's methodology section.
    """

    name: str
    track: str
    direction: str
    label: str
    unit: str
    description: str


_METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("g_index", "gindex", "higher", "g-index", "index",
               "Skill-acquisition efficiency: task contributions averaged over test tasks "
               "(Venkatasubramanian et al. 2021, eq. 9)."),
    MetricInfo("theta_mean", "gindex", "higher", "mean θ", "0–1",
               "Mean performance θ = 1 − Δ over the test tasks."),
    MetricInfo("omega_mean", "gindex", "none", "mean Ω", "0–1",
               "Mean generalisation difficulty: distance of test tasks from the curriculum."),
    MetricInfo("compute_log2", "gindex", "lower", "E = log2 compute", "log2 PFLOP·s",
               "Experience: log2 of the training compute."),
    MetricInfo("capability", "generality", "higher", "capability Ψ", "difficulty units",
               "Area under the agent characteristic curve (Hernández-Orallo et al. 2021)."),
    MetricInfo("spread", "generality", "lower", "spread S", "difficulty units",
               "Dispersion of the agent characteristic curve, S = sqrt(2M − Ψ²)."),
    MetricInfo("generality", "generality", "higher", "generality Γ", "1/difficulty",
               "Γ = 1/S; infinite for a step curve."),
    MetricInfo("normalised_generality", "generality", "higher", "normalised generality γ", "−1–1",
               "Generality normalised by the range possible at that capability."),
    MetricInfo("expected_difficulty", "generality", "none", "expected difficulty",
               "difficulty units", "M/Ψ: the mean difficulty of the items an agent solves."),
    MetricInfo("aiq", "aiq", "higher", "AIQ", "reward per cycle, −100–100",
               "Algorithmic intelligence quotient: expected average reward over BF "
               "environments (Legg & Veness 2013)."),
    MetricInfo("similarity", "similarity", "none", "similarity S", "−1–1",
               "S(A, B, p, π) of Pereyda & Holder 2020, eq. 3."),
    MetricInfo("dissimilarity", "similarity", "none", "dissimilarity 1 − S", "0–2",
               "1 − S(A, B, p, π)."),
    MetricInfo("diversity", "similarity", "higher", "suite diversity", "0–2",
               "Mean pairwise dissimilarity of the suite's tests."),
)

METRICS: dict[str, MetricInfo] = {m.name: m for m in _METRICS}


def metric_info(name: str, track: str = "") -> MetricInfo:
    """Return the registry entry of ``name``, or a neutral default for unknown metrics."""
    found = METRICS.get(name)
    if found is not None:
        return found
    return MetricInfo(name, track, "higher", name.replace("_", " "), "", "")


def sort_key_sign(name: str) -> int:
    """+1 when higher is better, −1 when lower is better (0 for descriptive metrics)."""
    d = metric_info(name).direction
    return {"higher": 1, "lower": -1}.get(d, 0)
