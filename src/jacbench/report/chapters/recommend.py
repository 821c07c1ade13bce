"""Chapter 6, the recommendation: per framework and Jacobian shape, the fastest strategy
overall and within each memory budget, next to the framework's default.
"""

from __future__ import annotations

from jacbench.constants import AD_FRAMEWORKS
from jacbench.measure.targets import SecondOrderTarget
from jacbench.report.chapters.common import (
    NOT_MEASURED,
    _base,
    _kind,
    _ok_strategies,
    _ratio,
    _short,
    _wide,
    best,
)
from jacbench.report.figures import FRAMEWORK_NAMES
from jacbench.report.publish import Section, markdown_table
from jacbench.report.results import Results, fmt_bytes, fmt_time, outcome, peak_bytes

# Shown for what they cost, never recommended: the question's own programs and the first-order
# loop that records a graph for second derivatives it never takes.
NOT_A_PICK = ("question", "grad-loop-create-graph")


def _describe(res: Results, row: dict | None) -> str:
    if row is None:
        return "–"
    t = fmt_time(row["warm_median_s"])
    return f"`{row['strategy']}` ({t}, {_ratio(res, row)} a simulation)"


def recommend(res: Results, budgets_gib: tuple[float, ...] = (1.0, 8.0)) -> Section:
    sec = Section()
    rows = []
    defaults = {"torch": "functional-loop", "tensorflow": "tape-jacobian-pfor", "jax": "jacrev"}
    dense_defaults = {
        fw: SecondOrderTarget(fw, name).text
        for fw, name in (("torch", "functional-hessian"), ("tensorflow", "nested-tapes"),
                         ("jax", "hessian"))
    }  # fmt: skip
    for fw in AD_FRAMEWORKS:
        key = fw if fw != "tensorflow" else "tf"
        sizes = sorted(
            {
                r["paths"]
                for r in res.select(framework=fw, status="ok", **_base())
                if r["target"] == "strategy"
            }
        )
        if sizes:
            n = sizes[-1]
            candidates = [
                r for r in _ok_strategies(res, fw, n, **_base()) if r["strategy"] != "question"
            ]
            fastest = best(res, fw, n)
            d = res.select(framework=fw, strategy=defaults[fw], **_base())
            rows.append(
                [FRAMEWORK_NAMES[fw], "tall (N × 2)", f"N = {n:,}", _describe(res, fastest)]
                + _within(candidates, budgets_gib)
                + [f"`{defaults[fw]}`: {outcome(d[-1])} at N = {d[-1]['paths']:,}" if d else "–"]
            )
            sec.value(f"pick_{key}", fastest["strategy"] if fastest else NOT_MEASURED)
        else:
            sec.value(f"pick_{key}", NOT_MEASURED)
        wide = [
            r
            for r in _wide(res, framework=fw)
            if r["target"] == "strategy" and r["strategy"] not in NOT_A_PICK
        ]
        # The diagonal by one product is exact for separable functions only: not a general pick.
        hess = [
            r
            for r in _wide(res, framework=fw)
            if r["target"] == "second" and _kind(r) in ("dense", "hvp")
        ]
        for label, group, default in (
            ("wide (3 × n)", wide, defaults[fw]),
            ("Hessian (n × n per output): dense or products Hv", hess, dense_defaults[fw]),
        ):
            ok = [r for r in group if r["status"] == "ok"]
            if not ok:
                continue
            n = max(r["inputs"] for r in ok)
            there = [r for r in ok if r["inputs"] == n]
            fastest = min(there, key=lambda r: r["warm_median_s"])
            d = [r for r in group if r["strategy"] == default]
            rows.append(
                [FRAMEWORK_NAMES[fw], label, f"n = {n:,}", _name_time(fastest)]
                + _within(there, budgets_gib)
                + [_default_cell(d, n)]
            )
            what = "wide" if label.startswith("wide") else "hessian"
            sec.value(f"pick_{what}_{key}", _short(fastest))
    for fw in AD_FRAMEWORKS:
        key = fw if fw != "tensorflow" else "tf"
        for what in ("wide", "hessian"):
            sec.values.setdefault(f"pick_{what}_{key}", NOT_MEASURED)
    sec.tables["decision"] = markdown_table(
        ["framework", "Jacobian shape", "largest size measured", "fastest there"]
        + [f"fastest within {b:g} GiB" for b in budgets_gib]
        + ["the framework's default"],
        rows,
    )
    return sec


def _name_time(row: dict) -> str:
    return f"`{_short(row)}` ({fmt_time(row['warm_median_s'])})"


def _within(rows: list[dict], budgets_gib: tuple[float, ...]) -> list[str]:
    """Per memory budget, the fastest row whose absolute peak fits in it."""
    cells = []
    for budget in budgets_gib:
        fits = [r for r in rows if peak_bytes(r) <= budget * 2**30]
        pick = min(fits, key=lambda r: r["warm_median_s"]) if fits else None
        cells.append(
            f"`{_short(pick)}` ({fmt_bytes(peak_bytes(pick))})" if pick else "none measured"
        )
    return cells


def _default_cell(rows: list[dict], n: int) -> str:
    """The default's outcome at n, or at the largest n it was tried."""
    if not rows:
        return "–"
    at = [r for r in rows if r["inputs"] == n] or [max(rows, key=lambda r: r["inputs"])]
    r = at[-1]
    size = f"n = {r['inputs']:,}" if r["problem"] != "gbm" else f"N = {r['paths']:,}"
    return f"`{_short(r)}`: {outcome(r)} at {size}"
