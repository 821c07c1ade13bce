"""The question (chapter 1): what became of the question's programs here, each allocator's
part in it, and the fastest strategy of each framework against the question's program at the
question's N, in time and in memory beyond the inputs; where the program did not finish, what
stopped it."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import ALLOCATORS, FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.problems.gbm import GBMParams
from jacbench.report import formats, queries
from jacbench.report.legacy.reproduced import (
    AS_ASKED,
    QUESTION_N,
    STANDARD_ONLY,
    TF_CAP,
    program,
    stopped,
)
from jacbench.strategies import registry

# Speed-ups at the question's N: the fastest strategy of each framework against the question's
# program (for JAX, which the question did not use, against the PyTorch one).
AGAINST = {"torch": "torch", "tensorflow": "tensorflow", "jax": "torch"}
# Two times or two memories within this factor of each other are "about the same".
ABOUT_SAME = 1.1


# --- What became of the question's programs ---------------------------------------------------


def torch_in_words(df: pd.DataFrame, allocator: str, paths: int = QUESTION_N) -> str:
    """What became of PyTorch's program at N under an allocator: '5.71 s for the first call,
    the process peaking at 264.1 MiB', or what stopped it."""
    row = program(df, "torch", paths, allocator)
    if row is None:
        return STANDARD_ONLY
    if row["status"] != "ok":
        return stopped(row)
    return (
        f"{formats.duration(row['cold_s'])} for the first call, "
        f"the process peaking at {formats.size(row['peak'])}"
    )


def tensorflow_in_words(df: pd.DataFrame, paths: int = QUESTION_N) -> str:
    """What became of TensorFlow's program at N under the question's 16 GiB: 'finished in
    4 min 2 s', or what stopped it ('killed at the 16.0 GiB cap after 1 min 41 s, ...')."""
    row = program(df, "tensorflow", paths, min_cap=TF_CAP)
    if row is None:
        return STANDARD_ONLY
    if row["status"] == "ok":
        return f"finished in {formats.duration(row['cold_s'])}"
    return stopped(row)


def mmap_against_jemalloc(df: pd.DataFrame, paths: int = QUESTION_N) -> str:
    """PyTorch's program under the two allocators that do not keep freed buffers, against each
    other in time: 'The two differ in time: under glibc-mmap the first call takes 10.8× as long
    as under jemalloc, ...', or that they do not differ, or what is missing."""
    mmap = program(df, "torch", paths, "glibc-mmap")
    jemalloc = program(df, "torch", paths, "jemalloc")
    if mmap is None or jemalloc is None:
        return f"Their times at this size are {STANDARD_ONLY}."
    finished = [r["status"] == "ok" for r in (mmap, jemalloc)]
    if not any(finished):
        return "Neither finished here: see the table."
    if not all(finished):
        return "Only one of the two finished here: see the table."
    if mmap["cold_s"] > ABOUT_SAME * jemalloc["cold_s"]:
        return (
            "The two differ in time: under glibc-mmap the first call takes "
            f"{mmap['cold_s'] / jemalloc['cold_s']:.1f}× as long as under jemalloc, which "
            "reuses the pages that glibc-mmap maps afresh for every row."
        )
    return "The two take about the same time, or jemalloc the longer: see the table."


def path_array_bytes(paths: int = QUESTION_N) -> int:
    """Bytes of one path array of the question's program, (M + 1) x N values in float32: the
    size of the buffers each of PyTorch's N backward passes allocates and frees."""
    asked = GBMParams(paths=paths, steps=AS_ASKED["steps"], dtype=AS_ASKED["dtype"])
    return asked.path_array_bytes


def tensorflow_predicted_peak(df: pd.DataFrame, paths: int = QUESTION_N) -> float:
    """The peak TensorFlow's program (vectorized reverse mode) needs at N, in bytes: the
    prediction the sweep recorded for its row, or the memory model's where there is no row."""
    row = program(df, "tensorflow", paths)
    recorded = queries.value(row, "predicted_peak")
    if recorded is not None:
        return float(recorded)
    model = registry.get("tensorflow", AS_ASKED["strategy"]).memory
    return float(model.peak("tensorflow", paths, AS_ASKED["steps"], AS_ASKED["dtype"]))


def as_written(df: pd.DataFrame, framework: str, paths: int = QUESTION_N) -> str:
    """What became of the question's program in a framework at N: its warm time, what stopped
    it ('memory cap (8.0 GiB)'), or that the question has no program in that framework."""
    if any(s.faithful for s in registry.by_framework(framework)):
        return formats.outcome(program(df, framework, paths))  # or "not measured"
    return "closed form, no program" if framework == "numpy" else "(no program in the question)"


def finished(df: pd.DataFrame, framework: str, paths: int) -> pd.Series | None:
    """The question's program in a framework at N (under glibc) where it ran correctly, else
    None."""
    row = program(df, framework, paths)
    return row if row is not None and row["status"] == "ok" else None


# --- The fastest strategies against it -------------------------------------------------------


def fastest(df: pd.DataFrame, paths: int = QUESTION_N) -> dict[str, pd.Series | None]:
    """The fastest strategy of every framework at N (None where none ran correctly)."""
    return {fw: queries.best(df, fw, paths) for fw in FRAMEWORKS}


def reference(df: pd.DataFrame, framework: str, paths: int = QUESTION_N) -> pd.Series | None:
    """The question's program a framework's fastest strategy is set against at N: PyTorch's
    under the allocator it ran fastest under (of those it finished under: a speed-up is never
    read against the slowest allocator), else whatever became of it under glibc; TensorFlow's
    under the question's 16 GiB."""
    framework = AGAINST[framework]
    if framework == "tensorflow":
        return program(df, framework, paths, min_cap=TF_CAP)
    finished = [
        r
        for a in ALLOCATORS
        if (r := program(df, framework, paths, a)) is not None and r["status"] == "ok"
    ]
    if finished:
        return min(finished, key=lambda r: r["warm_median_s"])
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
    if theirs > ABOUT_SAME * mine:
        return f"{_fold(theirs / mine)} less memory beyond the inputs"
    if mine > ABOUT_SAME * theirs:
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
            f"{formats.duration(ref['wall_s'])}"
        )
    if ref["status"] != "ok":
        return f"{whose}{where}: {stopped(ref)}"
    faster = ref["warm_median_s"] / best["warm_median_s"]
    pace = f"{_fold(faster)} faster" if faster >= 1 else f"{_fold(1 / faster)} slower"
    return f"{pace} than {whose}{where}, {memory_against(best, ref)}"


def speedup(df: pd.DataFrame, framework: str, paths: int = QUESTION_N) -> str:
    """The fastest strategy of a framework at N by name, against the question's program:
    'pathwise (9680× faster than the question's program under glibc-mmap, ...)'."""
    best = queries.best(df, framework, paths)
    vs = against(best, reference(df, framework, paths), framework)
    return f"{best['strategy']} ({vs})" if best is not None else vs


def against_brief(best: pd.Series | None, ref: pd.Series | None) -> str:
    """against() in a table cell's few words: '31× faster, 12× less memory', or what stopped
    the question's program ('the question's program failed at the 16.0 GiB cap')."""
    if best is None or ref is None:
        return formats.NOT_MEASURED if best is None else "standard profile only"
    if ref["status"] != "ok":
        cap = f"the question's program failed at the {formats.size(ref['mem_cap'])} cap"
        return cap if ref["status"] == "memory-cap" else (
            f"the question's program: {formats.outcome(ref)}")  # fmt: skip
    faster = ref["warm_median_s"] / best["warm_median_s"]
    pace = f"{_fold(faster)} faster" if faster >= 1 else f"{_fold(1 / faster)} slower"
    return f"{pace}, {memory_against(best, ref).replace(' beyond the inputs', '')}"


def speedups(df: pd.DataFrame, paths: int = QUESTION_N) -> pd.DataFrame:
    """The fastest strategy of each framework at N against the question's program: one row per
    PyTorch allocator the program was measured under, TensorFlow's at 16 GiB, JAX against the
    PyTorch program."""
    rows = []
    for fw in AGAINST:
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
        return f"{label}: {formats.duration(ref['warm_median_s'])}"
    return f"{label}: {formats.outcome(ref)}"


# --- In short -----------------------------------------------------------------------------------


def over_best(df: pd.DataFrame, paths: int = QUESTION_N) -> float | None:
    """The question's PyTorch program's warm time (under the allocator reference picks) over
    PyTorch's fastest strategy's at N; None where either did not finish."""
    best, ref = queries.best(df, "torch", paths), reference(df, "torch", paths)
    if best is None or ref is None or ref["status"] != "ok":
        return None
    return float(ref["warm_median_s"] / best["warm_median_s"])


def in_short(
    paths: int,
    outcomes: dict[str, str],
    best: dict[str, tuple[str, float] | None],
    over_best: float | None,
    first_call: float | None = None,
) -> str:
    """The chapter's answer: what became of the question's programs at N (outcomes: PyTorch's
    under glibc as torch_in_words says it, TensorFlow's under 16 GiB as tensorflow_in_words
    does), each framework's fastest correct strategy (best: {framework: (name, warm seconds)}
    or None) and the warm time of the question's PyTorch program under its fastest allocator
    over PyTorch's fastest strategy's (over_best; None where either did not finish), and that
    strategy's first call in seconds (first_call), which the warm figures leave out."""
    said = (
        f"At N = {paths:,} the question's PyTorch program, under glibc's allocator: "
        f"{outcomes['torch']}; its TensorFlow program, under 16 GiB: {outcomes['tensorflow']}."
    )
    found = [f"{formats.time(t)} in {FRAMEWORK_NAMES[fw]} ({name})"
             for fw, found in best.items() if found for name, t in [found]]  # fmt: skip
    if not found:
        said += " No other strategy ran correctly at that size."
    else:
        said += f" A warm call of the fastest correct strategy takes {formats.listing(found)}"
        if over_best is None:
            said += "."
        elif over_best >= 1:
            said += f"; PyTorch's is {formats.fold(over_best)} faster than the question's PyTorch"
            said += " program under its fastest allocator, warm call against warm call."
        else:
            said += f"; PyTorch's is {formats.fold(1 / over_best)} slower than the question's"
            said += " PyTorch program under its fastest allocator, warm call against warm call."
        if found and best.get("torch") and not formats.missing(first_call):
            said += f" The first call of {best['torch'][0]} takes {formats.time(first_call)}."
    return (
        f"{said} Both frameworks' default jacobian is reverse mode, one backward pass per "
        "output, and there are N outputs; a Jacobian with two inputs wants forward mode (two "
        "passes) or the pathwise gradient (one)."
    )
