"""Helpers several chapters share: the fastest strategy, ratios to one simulation, row
filters for the tall and wide problems, and the text for what a profile did not measure.
"""

from __future__ import annotations

from jacbench.measure.targets import parse
from jacbench.report.results import Results

NOT_MEASURED = "not measured in this profile"


def frame(res: Results):
    """The results as a DataFrame, for the figures (until the chapter is a notebook)."""
    from jacbench.report.data import load

    return load(res.path)


def _ok_strategies(res: Results, framework: str, paths: int, **where) -> list[dict]:
    return [
        r
        for r in res.select(framework=framework, paths=paths, status="ok", **where)
        if r["target"] == "strategy"
    ]


def _base(**kw) -> dict:
    return {"dtype": "float32", "allocator": "glibc", **kw}


def best(res: Results, framework: str, paths: int, exclude=("question",)) -> dict | None:
    """The fastest correct strategy of a framework at N (warm median time)."""
    rows = [
        r for r in _ok_strategies(res, framework, paths, **_base()) if r["strategy"] not in exclude
    ]
    return min(rows, key=lambda r: r["warm_median_s"]) if rows else None


def _ratio(res: Results, row: dict | None) -> str:
    """The row's time over its simulation's, measured side by side: '2.1×'."""
    q = res.ratio_to_simulation(row) if row is not None else None
    return f"{q:.1f}×" if q is not None else "–"


def largest_common(res: Results, framework: str, strategies: list[str]) -> int | None:
    """The largest N at which every named strategy of a framework ran correctly."""
    sizes = None
    for s in strategies:
        ns = {
            r["paths"] for r in res.select(framework=framework, strategy=s, status="ok", **_base())
        }
        sizes = ns if sizes is None else sizes & ns
    return max(sizes) if sizes else None


def _wide(res: Results, problem: str = "moments", **where) -> list[dict]:
    return res.select_wide(problem=problem, **_base(**where))


def _kind(row: dict) -> str:
    target = parse(row["framework"], row["strategy"])
    if target.kind == "second":
        return target.record.kind
    return target.record.mode + " mode"


def _short(row: dict) -> str:
    """The row's method or strategy by its own name (no kind prefix)."""
    return parse(row["framework"], row["strategy"]).name
