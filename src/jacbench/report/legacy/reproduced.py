"""The question's own observations beside what this machine measured under the same conditions.

Each of the question's four observations (REPORTED_* below) is set beside the same program
measured here, as written, at the same N, with M = 52 steps in float32 (PyTorch's at N = 10,000
under each allocator), with a verdict computed from the numbers: reproduced, or how it differs
and, where the measurements show it, why. Memory is compared like with like: the question's
figures are the whole process's, as a task manager shows it, so beside them is the worker's
peak resident memory (``peak``, libraries and inputs included) and what its libraries alone held
once loaded (``import_peak``). A program a cap stopped is described by how long its process ran
(``wall_s``) and what it held when it was killed (``watched_peak_rss``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jacbench.constants import ALLOCATORS, FRAMEWORK_NAMES, GIB
from jacbench.report import formats, queries

QUESTION_N = 10_000
SMALL_N = 1_000  # the largest of the question's "N <= 1,000"
# The question's program as it asked it: its own code, M = 52 steps, float32.
AS_ASKED = {"problem": "gbm", "strategy": "question", "steps": 52, "dtype": "float32"}
# The cases the quick profile leaves out (it keeps its caps small and its sweep short).
STANDARD_ONLY = "measured in the standard profile only"
MB = 10**6

# The question's figures, as it gave them (round numbers, read as such below).
REPORTED_SMALL_S = 1.0  # "about a second", both programs, N <= 1,000
REPORTED_SMALL_MB = {"torch": 140, "tensorflow": 340}  # the process, N <= 1,000
REPORTED_BIG_S = 60.0  # PyTorch at N = 10,000: "about a minute"
REPORTED_BIG_MB = 140  # ... with its memory "still about 140 MB"
REPORTED_FAIL_GB = 16  # TensorFlow at N = 10,000: "exhausted 16 GB", after "minutes"
TF_CAP = REPORTED_FAIL_GB * GIB  # the cap its program runs under here

# How far a measured figure may sit from a round reported one and still be the same figure:
# within a factor of ABOUT_TIME of "about a second" or "about a minute", of ABOUT_MEMORY of
# "about 140 MB"; a process whose peak at N = 10,000 is within FLAT of its peak at N = 1,000
# has memory that "stays" where it was.
ABOUT_TIME = 3.0
ABOUT_MEMORY = 2.0
FLAT = 1.25


@dataclass(frozen=True)
class Line:
    """One line of the Reproduced table."""

    observation: str
    reported: str
    measured: str
    verdict: str

    def as_row(self) -> dict[str, str]:
        return {
            "the question's observation": self.observation,
            "it reported": self.reported,
            "measured here": self.measured,
            "verdict": self.verdict,
        }


def program(
    df: pd.DataFrame, framework: str, paths: int, allocator: str = "glibc", min_cap: int = 0
) -> pd.Series | None:
    """The question's program in a framework at N (M = 52, float32) under an allocator and a
    cap of at least min_cap, or None: a row that ran correctly first, then the largest cap, then
    the longest timeout (a sweep may hold the same program under several limits)."""
    rows = queries.where(df, framework=framework, paths=paths, allocator=allocator, **AS_ASKED)
    rows = rows[(rows["mem_cap"] >= min_cap).fillna(False).astype(bool)]
    if rows.empty:
        return None
    order = rows.assign(_failed=(rows["status"] != "ok").astype(int))
    order = order.sort_values(["_failed", "mem_cap", "timeout"], ascending=[True, False, False])
    return rows.loc[order.index[0]]


def stopped(row: pd.Series) -> str:
    """What stopped a program that did not finish: its cap and when, and what it held."""
    status = row["status"]
    if status == "memory-cap":
        return (
            f"killed at the {formats.size(row['mem_cap'])} cap after "
            f"{formats.duration(row['wall_s'])}, holding {formats.size(row['watched_peak_rss'])}"
        )
    if status == "timeout":
        return (
            f"still running at the {formats.duration(row['timeout'])} timeout, holding "
            f"{formats.size(row['watched_peak_rss'])}"
        )
    if status == "skipped-predicted":
        return (
            f"not run: the model predicts {formats.size(row['predicted_peak'])}, above "
            f"its {formats.size(row['mem_cap'])} cap"
        )
    message = "" if formats.missing(row["message"]) else f": {str(row['message'])[:80]}"
    return f"{status}{message}"


def _off_by(measured: float, reported: float, factor: float, less: str, more: str) -> str:
    """'' if measured is within factor of reported, else '5.2× less' (or more)."""
    if measured * factor < reported:
        return f"{reported / measured:.1f}× {less}"
    if measured > reported * factor:
        return f"{measured / reported:.1f}× {more}"
    return ""


def _names(frameworks) -> str:
    return " and ".join(FRAMEWORK_NAMES[fw] for fw in frameworks)


def small_time(df: pd.DataFrame) -> Line:
    """Both programs at N = 1,000: about a second each (the first call, as the question ran
    each program once)."""
    rows = {fw: program(df, fw, SMALL_N) for fw in ("torch", "tensorflow")}
    observation = f"N ≤ {SMALL_N:,}: time"
    reported = "about 1 s each"
    if any(r is None for r in rows.values()):
        return Line(observation, reported, formats.NOT_MEASURED, formats.NOT_MEASURED)
    failed = {fw: r for fw, r in rows.items() if r["status"] != "ok"}
    measured = ", ".join(
        f"{FRAMEWORK_NAMES[fw]} {formats.time(r['cold_s']) if r['status'] == 'ok' else stopped(r)}"
        for fw, r in rows.items()
    )
    measured += f" (first call, N = {SMALL_N:,})"
    if failed:
        return Line(observation, reported, measured, f"differs: {_names(failed)} did not finish")
    off = {
        fw: _off_by(r["cold_s"], REPORTED_SMALL_S, ABOUT_TIME, "faster", "slower")
        for fw, r in rows.items()
    }
    off = {fw: o for fw, o in off.items() if o}
    if not off:
        verdict = f"reproduced: both within {ABOUT_TIME:g}× of a second"
    else:
        verdict = "differs: " + ", ".join(f"{FRAMEWORK_NAMES[fw]} {o}" for fw, o in off.items())
    return Line(observation, reported, measured, verdict)


def small_memory(df: pd.DataFrame) -> Line:
    """Both programs at N = 1,000: the process's peak against the question's 140 and 340 MB."""
    rows = {fw: program(df, fw, SMALL_N) for fw in ("torch", "tensorflow")}
    observation = f"N ≤ {SMALL_N:,}: memory of the process"
    reported = ", ".join(
        f"{FRAMEWORK_NAMES[fw]} about {mb} MB" for fw, mb in REPORTED_SMALL_MB.items()
    )
    if any(r is None or r["status"] != "ok" for r in rows.values()):
        return Line(observation, reported, formats.NOT_MEASURED, formats.NOT_MEASURED)
    measured = "the process's peak: " + ", ".join(
        f"{FRAMEWORK_NAMES[fw]} {formats.size(r['peak'])} "
        f"({formats.size(r['peak'] - r['import_peak'])} above its libraries once loaded)"
        for fw, r in rows.items()
    )
    off = {
        fw: _off_by(r["peak"], REPORTED_SMALL_MB[fw] * MB, ABOUT_MEMORY, "less", "more")
        for fw, r in rows.items()
    }
    off = {fw: o for fw, o in off.items() if o}
    if not off:
        verdict = f"reproduced: both within {ABOUT_MEMORY:g}× of the question's figures"
        return Line(observation, reported, measured, verdict)
    parts = [", ".join(f"{FRAMEWORK_NAMES[fw]} {o}" for fw, o in off.items())]
    heavy = [fw for fw in off if rows[fw]["import_peak"] > REPORTED_SMALL_MB[fw] * MB]
    if heavy:
        parts.append(
            f"the libraries alone ({_names(heavy)}) hold more here than the "
            "question's whole process (other versions)"
        )
    torch, tf = rows["torch"]["peak"], rows["tensorflow"]["peak"]
    reported_ratio = REPORTED_SMALL_MB["tensorflow"] / REPORTED_SMALL_MB["torch"]
    if tf > torch:
        parts.append(
            f"the order stands: TensorFlow {tf / torch:.1f}× PyTorch "
            f"(the question: {reported_ratio:.1f}×)"
        )
    return Line(observation, reported, measured, "differs: " + "; ".join(parts))


def _flat(big: pd.Series, small: pd.Series | None) -> bool | None:
    """Whether the process's peak at the large N stays within FLAT of the small N's (None
    without a small row to compare with)."""
    if small is None or small["status"] != "ok" or formats.missing(small["peak"]):
        return None
    return bool(big["peak"] <= FLAT * small["peak"])


def big_torch(df: pd.DataFrame, allocator: str, paths: int = QUESTION_N) -> Line:
    """PyTorch's program at N = 10,000 under one allocator: about a minute, memory flat."""
    row = program(df, "torch", paths, allocator)
    observation = f"N = {paths:,}, PyTorch under {allocator}"
    reported = f"about 1 min, memory still about {REPORTED_BIG_MB} MB"
    if row is None:
        return Line(observation, reported, STANDARD_ONLY, STANDARD_ONLY)
    small = program(df, "torch", SMALL_N, allocator)
    if row["status"] != "ok":
        return Line(observation, reported, stopped(row), "differs: " + _why_not(df, row))
    flat = _flat(row, small)
    grown = "" if flat is None else f", {_change(row, small)} from N = {SMALL_N:,}"
    measured = (
        f"{formats.duration(row['cold_s'])} (first call), {formats.duration(row['warm_median_s'])} "
        f"warm; the process's peak {formats.size(row['peak'])}{grown}"
    )
    parts = []
    off = _off_by(row["cold_s"], REPORTED_BIG_S, ABOUT_TIME, "faster", "slower")
    if off:
        parts.append(f"{off} than a minute" + _why_faster(df, row))
    if flat is None:
        parts.append(f"memory: no N = {SMALL_N:,} row under {allocator} to compare with")
    elif not flat:
        parts.append(f"memory grows: {_change(row, small)} from N = {SMALL_N:,}")
    if not parts:
        verdict = f"reproduced: within {ABOUT_TIME:g}× of a minute, memory flat"
        return Line(observation, reported, measured, verdict)
    if flat:
        parts.append("memory flat, as reported")
    return Line(observation, reported, measured, "differs: " + "; ".join(parts))


def _change(big: pd.Series, small: pd.Series) -> str:
    delta = big["peak"] - small["peak"]
    return f"{'+' if delta >= 0 else '−'}{formats.size(abs(delta))}"


def _why_not(df: pd.DataFrame, row: pd.Series) -> str:
    """Why PyTorch's program stopped where the question's finished: where another allocator ran
    it at the same N with flat memory, glibc's threshold; else what stopped it."""
    if row["status"] != "memory-cap":
        return f"it does not finish ({row['status']})"
    what = "its memory grows until the cap stops it"
    if row["allocator"] != "glibc":
        return what
    flat = []
    for other in ALLOCATORS[1:]:
        r = program(df, "torch", int(row["paths"]), other)
        if r is not None and r["status"] == "ok" and _flat(r, program(df, "torch", SMALL_N, other)):
            flat.append(f"{other} ({formats.size(r['peak'])})")
    if not flat:
        return f"{what}; the same program under the other allocators is {STANDARD_ONLY}"
    return (
        f"{what}, where under {' and '.join(flat)} it stays flat: glibc's dynamic mmap "
        "threshold rises to the size of the first freed multi-MB buffer, after which buffers "
        "of that size come from the heap, where freed ones stay with the process"
    )


def _why_faster(df: pd.DataFrame, row: pd.Series) -> str:
    """Under jemalloc, faster than under glibc-mmap where both ran: the reason."""
    if row["allocator"] != "jemalloc":
        return ""
    mmap = program(df, "torch", int(row["paths"]), "glibc-mmap")
    if mmap is None or mmap["status"] != "ok" or not mmap["cold_s"] > row["cold_s"]:
        return ""
    return (
        f" (glibc-mmap: {formats.duration(mmap['cold_s'])}; jemalloc reuses the freed per-row "
        "buffers, where glibc-mmap maps fresh pages for every row and returns them)"
    )


def tf_fails(df: pd.DataFrame, paths: int = QUESTION_N) -> Line:
    """TensorFlow's program at N = 10,000 under the question's 16 GiB: minutes, then fails."""
    row = program(df, "tensorflow", paths, min_cap=TF_CAP)
    observation = f"N = {paths:,}, TensorFlow"
    reported = f"runs for minutes, then fails: {REPORTED_FAIL_GB} GB exhausted"
    if row is None:
        return Line(observation, reported, STANDARD_ONLY, STANDARD_ONLY)
    predicted = row["predicted_peak"]
    model = "" if formats.missing(predicted) else f"; the model predicts {formats.size(predicted)}"
    if row["status"] == "memory-cap":
        if row["wall_s"] >= 60:
            verdict = "reproduced: fails for lack of memory after minutes"
        else:
            verdict = (
                f"reproduced, sooner: fails for lack of memory after "
                f"{formats.duration(row['wall_s'])}, not minutes"
            )
        return Line(observation, reported, stopped(row) + model, verdict)
    if row["status"] == "ok":
        peak = formats.size(row["peak"])
        measured = f"finished: {formats.duration(row['cold_s'])}, the process's peak {peak}"
        return Line(observation, reported, measured, "differs: it finished within the cap")
    return Line(observation, reported, stopped(row) + model, "differs: not stopped by memory")


def table(df: pd.DataFrame, paths: int = QUESTION_N) -> pd.DataFrame:
    """The Reproduced table: the question's four observations, PyTorch's at N = 10,000 once
    per allocator."""
    lines = [small_time(df), small_memory(df)]
    lines += [big_torch(df, a, paths) for a in ALLOCATORS]
    lines.append(tf_fails(df, paths))
    return pd.DataFrame([line.as_row() for line in lines])
