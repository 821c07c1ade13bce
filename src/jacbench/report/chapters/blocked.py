"""The path-blocked strategies against the strategies they block: the numbers of the GBM
chapter's "beyond memory" section (its figure is figures.blocked; strategies.blocked says what
blocking is)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.problems.gbm import GBMParams
from jacbench.report import formats, queries
from jacbench.report.formats import NOT_MEASURED
from jacbench.strategies import registry
from jacbench.strategies.memory_model import block_paths

# The size the section's prose is about: where one path array no longer fits in memory.
LARGE_N = 10**8


def path_array_bytes(paths: int = LARGE_N, steps: int = 52, dtype: str = "float32") -> int:
    """The bytes of one (M+1) x N path array: 21,200,000,000 (19.7 GiB) at N = 10^8 in float32."""
    return GBMParams(paths=paths, steps=steps, dtype=dtype).path_array_bytes


def default_block(paths: int = LARGE_N, steps: int = 52, dtype: str = "float32") -> int:
    """The paths of one block under the default memory budget (GBMParams.chunk_size MiB):
    65,536 at N = 10^8, M = 52 in float32."""
    return block_paths(paths, steps, dtype, GBMParams().chunk_size)


def summary(df: pd.DataFrame, framework: str, name: str) -> dict[str, str]:
    """The numbers of one blocked strategy: the largest N it ran, its time, peak and ratio to
    its blocked simulation there, its peak at N = 10^6, and the largest N the strategy it
    blocks ran. Missing values read NOT_MEASURED."""
    twin = registry.get(framework, name).blocks
    top = queries.largest_ok(df, framework, name)
    at_million = queries.one(queries.gbm(df, framework=framework, strategy=name, status="ok"),
                             paths=1_000_000)  # fmt: skip
    twin_top = queries.largest_ok(df, framework, twin)
    return {
        "name": name,
        "twin": twin,
        "n": NOT_MEASURED if top is None else formats.count(top["paths"]),
        "time": NOT_MEASURED if top is None else formats.time(top["warm_median_s"]),
        "peak": NOT_MEASURED if top is None else formats.size(top["peak"]),
        "ratio": NOT_MEASURED if top is None else formats.ratio_with_spread(top),
        "peak_1e6": NOT_MEASURED if at_million is None else formats.size(at_million["peak"]),
        "twin_n": NOT_MEASURED if twin_top is None else formats.count(twin_top["paths"]),
    }


def table(df: pd.DataFrame, frameworks=AD_FRAMEWORKS) -> pd.DataFrame:
    """One row per blocked strategy ("jax/blocked-jvp"): summary's numbers, the last the
    largest N of the strategy it blocks, with short column names so that the table fits the
    book's column; "–" where a value was not measured."""
    rows = [summary(df, fw, b) | {"key": f"{fw}/{b}"}
            for fw in frameworks for b, _ in registry.blocked_pairs(fw)]  # fmt: skip
    columns = {"key": "strategy", "n": "largest N", "time": "time", "peak": "peak",
               "peak_1e6": "peak at 10^6", "ratio": "× simulation",
               "twin_n": "unblocked to N"}  # fmt: skip
    # In a cell a dash says "not measured" (the prose says it in words).
    out = pd.DataFrame(rows, columns=list(columns)).replace(NOT_MEASURED, "–")
    return out.rename(columns=columns)


def furthest(df: pd.DataFrame, framework: str) -> str | None:
    """The framework's blocked strategy that ran correctly at the largest N (the lower ratio
    to its simulation among equals), or None where none ran."""
    best = None
    for name, _ in registry.blocked_pairs(framework):
        top = queries.largest_ok(df, framework, name)
        if top is None:
            continue
        ratio = top["ratio_median"] if pd.notna(top["ratio_median"]) else np.inf
        key = (-int(top["paths"]), ratio)
        if best is None or key < best[0]:
            best = (key, name)
    return None if best is None else best[1]


def phrase(df: pd.DataFrame, framework: str) -> str:
    """'blocked-pathwise to N = 10,000,000: peak 715.6 MiB (572.5 MiB at N = 10^6), 1.33×
    [1.30–1.36] its blocked simulation's time' for the framework's furthest blocked strategy;
    NOT_MEASURED where none ran."""
    name = furthest(df, framework)
    if name is None:
        return NOT_MEASURED
    s = summary(df, framework, name)
    at_million = "" if s["peak_1e6"] == NOT_MEASURED else f" ({s['peak_1e6']} at N = 10^6)"
    ratio = "" if s["ratio"] == "–" else f", {s['ratio']} its blocked simulation's time"
    return f"{name} to N = {s['n']}: {s['time']} a call, peak {s['peak']}{at_million}{ratio}"
