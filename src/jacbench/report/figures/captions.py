"""The conditions a figure was measured under, for its caption: which shipped profile the rows
are a sweep of, M, dtype, threads, allocator and the GBM parameters."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from jacbench.measure import profiles
from jacbench.report.queries import where


@functools.cache
def _profile_cases(name: str) -> tuple:
    return tuple(profiles.expand(profiles.load_profile(name)))


def profile_of(df: pd.DataFrame) -> str:
    """Which shipped profile the rows are a sweep of, recognised by their cases' keys (a book
    stages its results under a name of its own): 'the quick profile', 'part of the quick
    profile (49 of its 98 cases)', or the results file's name when no profile matches."""
    keys = set(df["key"].dropna())
    envs = set(df["env"].dropna())
    best = None
    for name in profiles.profile_names():
        cases = {c.key(env) for c in _profile_cases(name) for env in envs}
        found = len(cases & keys) // max(len(envs), 1)
        total = len(_profile_cases(name))
        if found and (best is None or (found == total, found) > (best[1] == best[2], best[1])):
            best = (name, found, total)
    if best is None:
        return f"results file {Path(str(df.attrs.get('path', 'results.csv'))).name}"
    name, found, total = best
    return f"the {name} profile" + ("" if found == total else f" ({found} of its {total} cases)")


def caption_conditions(df: pd.DataFrame, dtype: str = "float32", allocator: str = "glibc") -> str:
    """The conditions of the scaling figures as a phrase for their captions: the profile, M,
    dtype, threads per worker, the allocator and the GBM parameters, read from the rows."""
    rows = where(df, problem="gbm", dtype=dtype, allocator=allocator)

    def values(column, fmt="{:g}"):
        found = sorted({float(v) for v in rows[column].dropna()})
        return "/".join(fmt.format(v) for v in found) or "–"

    threads = values("threads", "{:.0f}")
    return (
        f"{profile_of(df)}; M = {values('steps', '{:.0f}')} steps, {dtype}, {threads} "
        f"thread{'' if threads == '1' else 's'} per worker, {allocator} allocator; "
        f"S0 = {values('spot')}, σ = {values('vol')}, r = {values('drift')}, "
        f"T = {values('maturity')}"
    )
