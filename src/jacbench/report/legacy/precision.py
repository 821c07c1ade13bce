"""What to use: float32 or float64, from the rows measured in both at the same N (what float64
costs in time per framework, and the page faults its larger arrays take under glibc's malloc)."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.measure import heap
from jacbench.report import formats, queries

# The largest block glibc's malloc serves from its heap when its thresholds are fixed
# (measure.heap.STEADY): a larger one is a mapping of its own, faulted in on every call.
HEAP_BLOCK_MAX = heap.MMAP_THRESHOLD


def float64_costs(df: pd.DataFrame) -> pd.DataFrame:
    """Every AD strategy measured correctly in float64 at some N beside its float32 row at the
    same N (allocator glibc): its two warm medians and float64's over float32's."""
    f64 = queries.gbm(df, framework=AD_FRAMEWORKS, dtype="float64", status="ok")
    rows = []
    for _, r in f64.iterrows():
        f32 = queries.one(queries.gbm(df, framework=r["framework"], status="ok"),
                          strategy=r["strategy"], paths=r["paths"])  # fmt: skip
        if f32 is None:
            continue
        rows.append({"framework": r["framework"], "strategy": r["strategy"],
                     "paths": int(r["paths"]), "float32_s": float(f32["warm_median_s"]),
                     "float64_s": float(r["warm_median_s"])})  # fmt: skip
    out = pd.DataFrame(rows, columns=["framework", "strategy", "paths", "float32_s", "float64_s"])
    out["over"] = out["float64_s"] / out["float32_s"]
    order = out["framework"].map(AD_FRAMEWORKS.index)
    return out.iloc[order.argsort(kind="stable")].reset_index(drop=True)


def float64_sentence(costs: pd.DataFrame) -> str:
    """What float64 costs per framework, as the range of float64/float32 over its strategies."""
    if costs.empty:
        return "float64 was not measured beside float32 in this build."
    parts = []
    for fw, rows in costs.groupby("framework", sort=False):
        lo, hi = rows.loc[rows["over"].idxmin()], rows.loc[rows["over"].idxmax()]
        span = (
            f"{formats.times(lo['over'])} ({lo['strategy']})"
            if lo.name == hi.name
            else f"{formats.times(lo['over'])} ({lo['strategy']}) to "
            f"{formats.times(hi['over'])} ({hi['strategy']})"
        )
        parts.append(f"{FRAMEWORK_NAMES[fw]} {span}")
    n = sorted(set(costs["paths"]))
    at = f"N = {n[0]:,}" if len(n) == 1 else "the N measured"
    return f"At {at}, float64 takes " + "; ".join(parts) + " the float32 time."


def faults_sentence(df: pd.DataFrame, costs: pd.DataFrame) -> str:
    """Where float64's path array is above the largest block glibc's heap serves and float32's
    is not, how many page faults a warm call took in each (medians over the compared rows): part
    of what float64 costs there is mapping its arrays again on every call. Empty otherwise."""
    if costs.empty:
        return ""
    n = int(costs["paths"].max())
    steps = int(queries.gbm(df, paths=n, status="ok")["steps"].max())
    f32, f64 = ((steps + 1) * n * size for size in (4, 8))
    if not f32 <= HEAP_BLOCK_MAX < f64:
        return ""
    faults = {}
    for dtype in ("float32", "float64"):
        rows = queries.gbm(df, framework=AD_FRAMEWORKS, dtype=dtype, paths=n, status="ok")
        rows = rows[rows["strategy"].isin(costs[costs["paths"] == n]["strategy"])]
        faults[dtype] = rows["warm_faults"].dropna().median()
    if any(pd.isna(v) for v in faults.values()):
        return ""
    return (
        f" Part of it, at N = {formats.count(n)}, is the allocator: a float64 path array "
        f"({formats.size(f64)}) is above the {formats.size(HEAP_BLOCK_MAX)} that glibc's malloc "
        f"serves from its heap, a float32 one ({formats.size(f32)}) is not, so a float64 call "
        f"maps its arrays afresh: a median of {formats.count(round(faults['float64']))} page "
        f"faults a warm call against {formats.count(round(faults['float32']))} in float32."
    )
