"""The tables of ``gmeter similarity show`` and ``gmeter similarity run``: printing only.

A pair that is not a measurement (insufficient, gap unresolved, forced by the design) is
printed without S and without an interval, after every measured pair; its matrix cells carry
a mark instead of a number (docs/similarity.md, "Which pairs are measurements").
"""

from __future__ import annotations

from typing import Any

from cli.context import console, info


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return "—" if v != v else f"{v:.{digits}f}"
    return str(v)


_MARK = {"insufficient": "insuff.", "gap unresolved": "unresolved",
         "forced by the design": "forced", "missing": "—"}  # fmt: skip
"""How a matrix cell that is not a measurement is printed (no number: eq. 3's value there is
saturated, unresolved or set by the design)."""


def print_tables(data: dict[str, Any]) -> None:
    """Print a similarity report (the mapping of ``report_json``).

    Per configuration: the matrices, the diversity over the sufficient pairs, the pairs most
    similar first with their status, and the 2-D map.
    """
    from rich.table import Table

    console.print(f"convention: {data['convention']}; intervals at {data['confidence']:.0%}")
    for cfg in data["configs"]:
        tests = cfg["tests"]
        console.print(f"\n{cfg['agent']} — {cfg['merge']} merge, p = {cfg['p']:g}", style="bold")
        status = cfg["status"]
        for name in ("similarity", "dissimilarity"):
            t = Table(title=f"{name} matrix", title_justify="left")
            t.add_column("")
            for test in tests:
                t.add_column(test, justify="right")
            for i, (test, row) in enumerate(zip(tests, cfg[name], strict=True)):
                t.add_row(test, *(_fmt(v) if status[i][j] in ("sufficient", "identity")
                                  else _MARK.get(status[i][j], status[i][j])
                                  for j, v in enumerate(row)))  # fmt: skip
            console.print(t)
        console.print(
            "cells marked insuff. (V_AB outside [V_B, V_A]: eq. 3 saturates at ±1), unresolved "
            "(the seeds do not resolve which test is easier) or forced (set by the design) are "
            "not measurements"
        )
        ci = cfg["diversity_ci"]
        ci_text = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        n_all = cfg["n_pairs"] + cfg["n_missing"]
        console.print(
            f"diversity (mean pairwise 1 − S over sufficient pairs): {_fmt(cfg['diversity'])}"
            f"{ci_text}, {cfg['n_pairs']} sufficient of {n_all} pair(s)"
        )
        t = Table(
            title="pairs, most similar first (A = the easier test, p = its share of the merge; "
            "S and its interval only where the pair is sufficient)",
            title_justify="left",
        )
        for col in ("A", "B", "p", "V_A", "V_B", "V_AB", "S", "interval", "status", "n"):
            t.add_column(col, justify="left" if col in ("A", "B", "status") else "right")
        for pr in cfg["pairs"]:
            interval = "—" if pr["ci_low"] is None else f"{pr['ci_low']:.2f}…{pr['ci_high']:.2f}"
            t.add_row(pr["test_a"], pr["test_b"], f"{pr['p']:g}", _fmt(pr["v_a"], 3),
                      _fmt(pr["v_b"], 3), _fmt(pr["v_ab"], 3), _fmt(pr["similarity"]),
                      interval, pr["measurement"], str(pr["n_seeds"]))  # fmt: skip
        console.print(t)
        if cfg["map"]:
            pts = ", ".join(f"{p['test']} ({p['x']:.3f}, {p['y']:.3f})" for p in cfg["map"])
            console.print(
                f"2-D map (classical MDS of eq. 3's values, non-measurements included; the two "
                f"axes keep {cfg['map_explained']:.1%} of the positive eigenvalue mass, "
                f"negative eigenvalues {cfg['map_negative_mass']:.1%} of the total): "
                f"{pts}"
            )
    for note in data["notes"]:
        info(f"note: {note}")
