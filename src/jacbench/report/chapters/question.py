"""The question (chapter 1): the fastest strategy of each framework against the question's
program at the question's N, in time and in memory beyond the inputs; where the program did not
finish, what stopped it."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.report.chapters.reproduced import (
    ALLOCATORS,
    QUESTION_N,
    STANDARD_ONLY,
    TF_CAP,
    duration,
    program,
    stopped,
)

# Speed-ups at the question's N: the fastest strategy of each framework against the question's
# program (for JAX, which the question did not use, against the PyTorch one).
AGAINST = {"torch": "torch", "tensorflow": "tensorflow", "jax": "torch"}


def reference(df: pd.DataFrame, framework: str, paths: int = QUESTION_N) -> pd.Series | None:
    """The question's program a framework's fastest strategy is set against at N: PyTorch's
    under the first allocator it finished under (glibc, glibc-mmap, jemalloc), else whatever
    became of it under glibc; TensorFlow's under the question's 16 GiB."""
    framework = AGAINST[framework]
    if framework == "tensorflow":
        return program(df, framework, paths, min_cap=TF_CAP)
    for allocator in ALLOCATORS:
        row = program(df, framework, paths, allocator)
        if row is not None and row["status"] == "ok":
            return row
    return program(df, framework, paths, "glibc")


def _fold(x: float) -> str:
    return f"{x:.0f}×" if x >= 10 else f"{x:.1f}×"


def memory_against(best: pd.Series, ref: pd.Series) -> str:
    """'3.2× less memory beyond the inputs' (or more, or about the same)."""
    mine, theirs = best["peak_over_inputs"], ref["peak_over_inputs"]
    if formats.missing(mine) or formats.missing(theirs):
        return "memory not measured"
    if mine <= 0 or theirs <= 0:
        return f"memory beyond the inputs {formats.size(mine)} against {formats.size(theirs)}"
    if theirs > 1.1 * mine:
        return f"{_fold(theirs / mine)} less memory beyond the inputs"
    if mine > 1.1 * theirs:
        return f"{_fold(mine / theirs)} more memory beyond the inputs"
    return "about the same memory beyond the inputs"


def against(best: pd.Series | None, ref: pd.Series | None, framework: str) -> str:
    """The fastest strategy against the question's program, in time and memory; where the
    program did not finish, what stopped it instead of a ratio."""
    if best is None:
        return formats.NOT_MEASURED
    if ref is None:
        return f"the question's program at this size is {STANDARD_ONLY}"
    whose = "the question's " + ("PyTorch program" if framework == "jax" else "program")
    where = f" under {ref['allocator']}" if ref["framework"] == "torch" else ""
    if ref["status"] == "memory-cap":
        return (
            f"{whose}{where} failed at the {formats.size(ref['mem_cap'])} cap after "
            f"{duration(ref['wall_s'])}"
        )
    if ref["status"] != "ok":
        return f"{whose}{where}: {stopped(ref)}"
    faster = ref["warm_median_s"] / best["warm_median_s"]
    pace = f"{_fold(faster)} faster" if faster >= 1 else f"{_fold(1 / faster)} slower"
    return f"{pace} than {whose}{where}, {memory_against(best, ref)}"


def against_brief(best: pd.Series | None, ref: pd.Series | None) -> str:
    """against() in a table cell's few words: '31× faster, 12× less memory', or what stopped
    the question's program ('it failed at the 16.0 GiB cap')."""
    if best is None or ref is None:
        return formats.NOT_MEASURED if best is None else "standard profile only"
    if ref["status"] != "ok":
        cap = f"it failed at the {formats.size(ref['mem_cap'])} cap"
        return cap if ref["status"] == "memory-cap" else f"it: {formats.outcome(ref)}"
    faster = ref["warm_median_s"] / best["warm_median_s"]
    pace = f"{_fold(faster)} faster" if faster >= 1 else f"{_fold(1 / faster)} slower"
    return f"{pace}, {memory_against(best, ref).replace(' beyond the inputs', '')}"


def speedups(df: pd.DataFrame, paths: int = QUESTION_N) -> pd.DataFrame:
    """The fastest strategy of each framework at N against the question's program: one row per
    PyTorch allocator the program was measured under, TensorFlow's at 16 GiB, JAX against the
    PyTorch program."""
    rows = []
    for fw in ("torch", "tensorflow", "jax"):
        best = queries.best(df, fw, paths)
        if fw == "torch":
            refs = [program(df, "torch", paths, a) for a in ALLOCATORS]
            refs = [r for r in refs if r is not None] or [None]
        else:
            refs = [reference(df, fw, paths)]
        for ref in refs:
            name = best["strategy"] if best is not None else "–"
            rows.append([FRAMEWORK_NAMES[fw], name, _program_label(ref), against(best, ref, fw)])
    columns = ["framework", "fastest strategy", "the question's program", "the fastest against it"]
    return pd.DataFrame(rows, columns=columns)


def _program_label(ref: pd.Series | None) -> str:
    """'PyTorch, glibc-mmap: 62.1 s' - which program, and its warm time or what stopped it."""
    if ref is None:
        return STANDARD_ONLY
    torch = ref["framework"] == "torch"
    limit = ref["allocator"] if torch else f"{formats.size(ref['mem_cap'])} cap"
    label = f"{FRAMEWORK_NAMES[ref['framework']]}, {limit}"
    if ref["status"] == "ok":
        return f"{label}: {duration(ref['warm_median_s'])}"
    return f"{label}: {formats.outcome(ref)}"
