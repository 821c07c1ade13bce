"""Vectorized Jacobians (chapter 3): each loop of VJPs against the strategy that vectorizes it
(the registry's ``vectorizes`` role), at every N where both ran."""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats, queries
from jacbench.strategies import registry


def loop_and_vectorized() -> list[tuple[str, str, str]]:
    """(framework, loop, the strategy that vectorizes it) for every such pair of the registry, in
    its order."""
    return [
        (s.framework, s.vectorizes, s.name)
        for fw in registry.FRAMEWORKS
        for s in registry.by_framework(fw, "gbm")
        if s.vectorizes
    ]


def loop_against_vectorized(df: pd.DataFrame, pairs: list[tuple[str, str, str]]) -> pd.DataFrame:
    """One row per (framework, loop, vectorized) pair and N at which both ran correctly: their
    warm times and peaks beyond the inputs, and the vectorized over the loop for each."""
    rows = []
    for fw, loop, vec in pairs:
        a = queries.gbm(df, framework=fw, strategy=loop, status="ok").set_index("paths")
        b = queries.gbm(df, framework=fw, strategy=vec, status="ok").set_index("paths")
        for n in sorted(set(a.index) & set(b.index)):
            ra, rb = a.loc[n], b.loc[n]
            ra = ra.iloc[0] if isinstance(ra, pd.DataFrame) else ra
            rb = rb.iloc[0] if isinstance(rb, pd.DataFrame) else rb
            rows.append({
                "framework": fw, "loop": loop, "vectorized": vec, "paths": int(n),
                "loop_s": float(ra["warm_median_s"]), "vectorized_s": float(rb["warm_median_s"]),
                "loop_peak": ra["peak_over_inputs"], "vectorized_peak": rb["peak_over_inputs"],
            })  # fmt: skip
    out = pd.DataFrame(rows, columns=["framework", "loop", "vectorized", "paths", "loop_s",
                                      "vectorized_s", "loop_peak", "vectorized_peak"])  # fmt: skip
    out["time_ratio"] = out["vectorized_s"] / out["loop_s"]
    out["memory_ratio"] = out["vectorized_peak"] / out["loop_peak"]
    return out


def which_is_faster(name_a: str, time_a, name_b: str, time_b) -> str:
    """'grad-loop, 3.4× faster than jacrev (253 ms against 856 ms)': the faster of two warm
    times named first; NOT_MEASURED where either is missing."""
    if formats.missing(time_a) or formats.missing(time_b) or min(time_a, time_b) <= 0:
        return formats.NOT_MEASURED
    if time_b < time_a:
        name_a, time_a, name_b, time_b = name_b, time_b, name_a, time_a
    return (
        f"{name_a}, {formats.times(time_b / time_a)} faster than {name_b} "
        f"({formats.time(time_a)} against {formats.time(time_b)})"
    )
