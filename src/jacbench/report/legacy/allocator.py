"""The allocator (chapter 4): PyTorch's loops under glibc's default, glibc with a fixed mmap
threshold and jemalloc, where each can be compared and what became of them beyond, and the
allocator experiment (mallinfo2 after the calls, one arena, malloc_trim)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import ALLOCATOR_EXPERIMENTS, ALLOCATORS
from jacbench.measure import harness
from jacbench.report import formats, queries
from jacbench.strategies import registry


def _stopped(row: pd.Series) -> str:
    """What stopped a failed run, as a clause: 'it reached the memory cap (8.0 GiB)'."""
    if row["status"] == "memory-cap":
        return f"it reached the memory cap ({formats.size(row['mem_cap'])})"
    return f"it did not finish: {formats.outcome(row)}"


def loop_peaks(df: pd.DataFrame) -> str | None:
    """The question's PyTorch program under glibc, its peak beyond the inputs over the N at
    which it ran correctly, beside the memory model's one-tape prediction over the same N (said
    with what it is made of: the model's fixed allowance and its path arrays), and what stopped
    a failed run: 'grows from 12.2 MiB at N = 100 to 1.1 GiB at N = 3,000 (the memory model's
    one-tape prediction, 8 MiB fixed plus 11 path arrays: 8.2 MiB to 14.7 MiB); at N = 10,000
    it reached the memory cap (8.0 GiB)'. 'Grows' only where each N's peak is above the last's.
    None where none ran."""
    rows = queries.gbm(df, framework="torch", strategy="question").sort_values("paths")
    if rows.empty:
        return None
    model = registry.get("torch", "question").memory
    ok = rows[rows["status"] == "ok"]
    said = []
    if len(ok):
        peaks = ok["peak_over_inputs"].astype(float)
        first, last = ok.iloc[0], ok.iloc[-1]
        tapes = [model.working(int(r["paths"]), int(r["steps"]), r["dtype"])
                 for _, r in ok.iterrows()]  # fmt: skip
        made = (f"{model.fixed_mib:g} MiB fixed plus {model.arrays:g} path arrays: "
                if model.batch == model.chunk == 0 else "")  # fmt: skip
        predicted = (f"the memory model's one-tape prediction, {made}"
                     f"{formats.span(tapes, formats.size)}")  # fmt: skip
        if len(ok) == 1:
            said.append(f"is {formats.size(first['peak_over_inputs'])} at N = "
                        f"{formats.count(first['paths'])} ({predicted})")  # fmt: skip
        else:
            lo, hi = formats.count(first["paths"]), formats.count(last["paths"])
            if (peaks.diff().dropna() > 0).all():
                how = (f"grows from {formats.size(peaks.iloc[0])} at N = {lo} to "
                       f"{formats.size(peaks.iloc[-1])} at N = {hi}")  # fmt: skip
            else:
                how = f"is {formats.span(peaks, formats.size)} from N = {lo} to {hi}"
            said.append(f"{how} ({predicted})")
    said += [f"at N = {formats.count(r['paths'])} {_stopped(r)}"
             for _, r in rows[rows["status"] != "ok"].iterrows()]  # fmt: skip
    return "; ".join(said)


def _other_allocators(df: pd.DataFrame) -> pd.DataFrame:
    return queries.gbm(df, framework="torch", allocator=ALLOCATORS[1:])


def allocator_loops(df: pd.DataFrame) -> list[tuple[str, str]]:
    """PyTorch's strategies measured under another allocator than glibc's default, in the
    registry's order: [('torch', 'question'), ('torch', 'functional-loop'), ...]."""
    measured = set(_other_allocators(df)["strategy"])
    return [("torch", s.name) for s in registry.by_framework("torch") if s.name in measured]


def allocator_size(df: pd.DataFrame) -> int | None:
    """The largest N at which a PyTorch strategy was measured under another allocator than
    glibc's default (whatever became of it), or None."""
    other = _other_allocators(df)
    return int(other["paths"].max()) if len(other) else None


def under_allocators(
    df: pd.DataFrame, paths: int | None = None
) -> dict[tuple[str, str], pd.Series]:
    """The rows of allocator_loops at N = paths (by default allocator_size) under each
    allocator, whatever became of them, keyed (strategy, allocator) in the loops' and
    ALLOCATORS' order; missing ones left out."""
    n = allocator_size(df) if paths is None else paths
    out = {}
    for _, name in allocator_loops(df) if n is not None else ():
        for alloc in ALLOCATORS:
            row = queries.one(
                queries.gbm(df, framework="torch", allocator=alloc), strategy=name, paths=n
            )
            if row is not None:
                out[name, alloc] = row
    return out


def allocators_table(df: pd.DataFrame, sizes: list[int]) -> pd.DataFrame:
    """under_allocators at each of sizes as the chapter's table: N, strategy, allocator, warm time
    (or what stopped it) and peak beyond the inputs ('–' for a failed case); no rows where none
    was measured."""
    rows = [
        (formats.count(n), name, alloc, formats.outcome(r),
         formats.size(r["peak_over_inputs"]) if r["status"] == "ok" else "–")
        for n in sizes for (name, alloc), r in under_allocators(df, n).items()
    ]  # fmt: skip
    return pd.DataFrame(
        rows, columns=["N", "strategy", "allocator", "warm time", "peak beyond inputs"]
    )


def allocator_compared_size(df: pd.DataFrame) -> int | None:
    """The largest N at which PyTorch's default jacobian loop ran correctly under every allocator
    of ALLOCATORS (where its peaks and times can be set side by side), or None."""
    name = registry.default("torch").name
    sizes = None
    for alloc in ALLOCATORS:
        rows = queries.gbm(df, framework="torch", strategy=name, allocator=alloc, status="ok")
        sizes = set(rows["paths"]) if sizes is None else sizes & set(rows["paths"])
    return int(max(sizes)) if sizes else None


def allocator_effect(df: pd.DataFrame, paths: int | None = None) -> dict[str, dict]:
    """PyTorch's default jacobian loop at N = paths (by default allocator_compared_size) under
    each allocator of ALLOCATORS: its peak beyond the inputs ("peak"), its warm time ("time")
    and, for the other two, its warm time over glibc's ("time_over_glibc"); None where a row is
    missing or failed."""
    n = allocator_compared_size(df) if paths is None else paths
    name = registry.default("torch").name
    ok = {}
    for alloc in ALLOCATORS:
        rows = queries.gbm(df, framework="torch", allocator=alloc, status="ok")
        ok[alloc] = None if n is None else queries.one(rows, strategy=name, paths=n)
    warm = {alloc: queries.value(r, "warm_median_s") for alloc, r in ok.items()}
    glibc = warm[ALLOCATORS[0]]
    return {
        "n": n,
        "peak": {alloc: queries.value(r, "peak_over_inputs") for alloc, r in ok.items()},
        "time": warm,
        "time_over_glibc": {
            alloc: None if glibc is None or warm[alloc] is None else warm[alloc] / glibc
            for alloc in ALLOCATORS[1:]
        },
    }


# How each allocator is named in a sentence.
ALLOCATOR_WORDS = {
    "glibc": "under glibc's default",
    "glibc-mmap": f"with the mmap threshold fixed at {formats.size(int(harness.MMAP_THRESHOLD))} "
    "(glibc-mmap)",
    "jemalloc": "under jemalloc",
    "glibc-arena1": "with one arena (MALLOC_ARENA_MAX=1)",
    "glibc-trim": "with malloc_trim(0) after every call",
}


def _against_glibc(k: float | None) -> str:
    """'6.3× glibc's time', 'about glibc's time' (within 15%), '1.8× faster than glibc'."""
    if k is None:
        return "its time not comparable"
    return formats.compared(k, "glibc's time", "about glibc's time")


def allocator_sentence(df: pd.DataFrame) -> str:
    """What the allocator does to PyTorch's default jacobian loop, from the rows: peaks and
    times under each allocator at allocator_compared_size, then what became of it under each at
    the larger N measured with another allocator (allocator_size), and whether choosing one is
    worth it there (the peak at most half glibc's, the time within formats.ABOUT_THE_SAME)."""
    name = registry.default("torch").name
    effect = allocator_effect(df)
    n = effect["n"]
    if n is None:
        return ("PyTorch's default loop was not measured under all three allocators in this "
                "build, so the allocator's effect is not known here.")  # fmt: skip
    peak, k = effect["peak"], effect["time_over_glibc"]
    said = (
        f"At N = {formats.count(n)}, the largest N at which it ran under all three, PyTorch's "
        f"default loop ({name}) holds {formats.size(peak['glibc'])} beyond its inputs under "
        f"glibc's default, {formats.size(peak['glibc-mmap'])} with the mmap threshold fixed "
        f"({_against_glibc(k['glibc-mmap'])}) and {formats.size(peak['jemalloc'])} under "
        f"jemalloc ({_against_glibc(k['jemalloc'])})."
    )
    top = allocator_size(df)
    if top is not None and top > n:
        parts = []
        for alloc in ALLOCATORS:
            r = queries.one(queries.gbm(df, framework="torch", allocator=alloc),
                            strategy=name, paths=top)  # fmt: skip
            if r is None:
                continue
            held = (f"held {formats.size(r['peak_over_inputs'])} in "
                    f"{formats.time(r['warm_median_s'])} a call" if r["status"] == "ok"
                    else f"stopped: {formats.outcome(r)}")  # fmt: skip
            parts.append(f"{ALLOCATOR_WORDS[alloc]} it {held}")
        if parts:
            said += f" At N = {formats.count(top)}, " + "; ".join(parts) + "."
    jem = peak["jemalloc"]
    if (
        jem is not None
        and peak["glibc"]
        and jem <= peak["glibc"] / 2
        and k["jemalloc"] < formats.ABOUT_THE_SAME
    ):
        said += (" For code that loops over many backward passes the allocator is worth "
                 "choosing: jemalloc keeps the memory down at no cost in time.")  # fmt: skip
    elif jem is not None and peak["glibc"] and jem <= peak["glibc"] / 2:
        said += (" jemalloc keeps the memory down, at a cost in time: a trade, not a free "
                 "choice.")  # fmt: skip
    return said


def allocator_experiment(df: pd.DataFrame) -> pd.DataFrame:
    """PyTorch's programs of the allocator experiment (those measured under glibc-arena1 or
    glibc-trim) at each N measured there, under glibc's default and each experiment: status,
    warm time, peak beyond the inputs, and what glibc's malloc held after the warm calls (in
    use, beyond what it held before the first call, and freed but kept). Empty without them."""
    allocs = ("glibc", *ALLOCATOR_EXPERIMENTS)
    exp = queries.gbm(df, framework="torch", allocator=ALLOCATOR_EXPERIMENTS)
    rows = []
    for name in [s.name for s in registry.by_framework("torch") if s.name in set(exp["strategy"])]:
        for n in sorted(set(exp.loc[exp["strategy"] == name, "paths"])):
            for alloc in allocs:
                r = queries.one(queries.gbm(df, framework="torch", allocator=alloc),
                                strategy=name, paths=n)  # fmt: skip
                if r is None:
                    continue
                ok = r["status"] == "ok"
                rows.append({
                    "strategy": name, "paths": int(n), "allocator": alloc,
                    "outcome": formats.outcome(r),
                    "time_s": r["warm_median_s"] if ok else np.nan,
                    "peak": r["peak_over_inputs"] if ok else np.nan,
                    "in_use": _heap(r, "warm_heap_in_use") - _heap(r, "inputs_heap_in_use"),
                    "kept": _heap(r, "warm_heap_free_kept"),
                })  # fmt: skip
    columns = ["strategy", "paths", "allocator", "outcome", "time_s", "peak", "in_use", "kept"]
    out = pd.DataFrame(rows, columns=columns)
    out[["time_s", "peak", "in_use", "kept"]] = out[["time_s", "peak", "in_use", "kept"]].astype(
        float
    )
    return out


def _heap(row: pd.Series, column: str) -> float:
    value = row.get(column, np.nan)
    return float(value) if not formats.missing(value) else np.nan


def allocator_experiment_sentence(exp: pd.DataFrame) -> str:
    """What the experiment shows for PyTorch's default loop at its largest N: how much of what
    stays resident under glibc is memory the program still holds and how much is freed memory
    malloc keeps, and what one arena and malloc_trim do to the peak and the time."""
    name = registry.default("torch").name
    loop = exp[(exp["strategy"] == name)]
    if loop.empty:
        return "The allocator experiment (one arena, malloc_trim) was not run in this build."
    n = int(loop["paths"].max())
    at = loop[loop["paths"] == n].set_index("allocator")
    if "glibc" not in at.index or pd.isna(at.loc["glibc", "peak"]):
        return (f"At N = {formats.count(n)} the loop did not run under glibc's default, so the "
                "experiment has nothing to compare with.")  # fmt: skip
    g = at.loc["glibc"]
    said = (f"After the warm calls of PyTorch's default loop ({name}) at N = {formats.count(n)} "
            "under glibc's default, ")  # fmt: skip
    if pd.isna(g["kept"]):
        said += "malloc's own figures could not be read (mallinfo2 missing). "
    else:
        said += (f"malloc had {formats.size(max(g['in_use'], 0))} more in use than before the "
                 f"first call and {formats.size(g['kept'])} freed but kept, against a peak of "
                 f"{formats.size(g['peak'])} beyond the inputs: ")  # fmt: skip
        said += ("what stays resident is memory the program has freed and glibc keeps, not "
                 "memory the program holds. " if g["kept"] >= 0.5 * g["peak"] > g["in_use"]
                 else "the program itself still holds most of it. ")  # fmt: skip
    parts = []
    for alloc in ALLOCATOR_EXPERIMENTS:
        if alloc not in at.index:
            continue
        r = at.loc[alloc]
        if pd.isna(r["peak"]):
            parts.append(f"{ALLOCATOR_WORDS[alloc]} it stopped: {r['outcome']}")
            continue
        parts.append(
            f"{ALLOCATOR_WORDS[alloc]} the peak was {formats.size(r['peak'])} "
            f"({formats.times(r['peak'] / g['peak'], 2)} glibc's default peak, "
            f"{_against_glibc(r['time_s'] / g['time_s'])})"
        )
    if not parts:
        return said.rstrip()
    rest = "; ".join(parts) + "."
    said += rest[0].upper() + rest[1:]
    kept = not pd.isna(g["kept"]) and g["kept"] >= 0.5 * g["peak"] > g["in_use"]
    return said + (_experiment_reading(at, g) if kept else "")


def _experiment_reading(at: pd.DataFrame, g: pd.Series) -> str:
    """What the variants' peaks say, where they left glibc's peak where it was (within a
    quarter): not other threads' arenas (one arena), and a peak reached within one call
    (malloc_trim between calls), whose passes do not reuse what the earlier ones freed."""

    def unchanged(alloc: str) -> bool:
        return alloc in at.index and 0.75 <= at.loc[alloc, "peak"] / g["peak"] <= 1.33

    said = ""
    if unchanged("glibc-arena1"):
        said += (" One arena leaves the peak where it was, so the memory is not kept in other "
                 "threads' arenas.")  # fmt: skip
    if unchanged("glibc-trim"):
        said += (" Trimming between calls does not lower it either: the peak is reached within "
                 "one call, whose backward passes do not reuse the buffers the earlier ones "
                 "freed.")  # fmt: skip
    return said


def glibc_mmap_threshold() -> int:
    """The mmap threshold glibc-mmap fixes, in bytes (65,536)."""
    return int(harness.MMAP_THRESHOLD)


def question_under_mmap(df: pd.DataFrame, paths: int | None) -> str:
    """The question's PyTorch program at N with the mmap threshold fixed against glibc's
    default: 'holds 18.3 MiB instead of 1.1 GiB'; what stopped it, or that it was not measured."""
    rows = {alloc: queries.one(queries.gbm(df, framework="torch", allocator=alloc),
                               strategy="question", paths=paths)
            for alloc in ("glibc", "glibc-mmap")}  # fmt: skip
    if paths is None or any(r is None for r in rows.values()):
        return "was not measured under both at that N"
    if any(r["status"] != "ok" for r in rows.values()):
        said = [f"{formats.outcome(r)} under {a}" for a, r in rows.items()]
        return f"did not finish under both ({formats.listing(said)})"
    held = {a: formats.size(r["peak_over_inputs"]) for a, r in rows.items()}
    return f"holds {held['glibc-mmap']} instead of {held['glibc']}"
