"""The GBM comparison (chapter 4): what its prose and tables compute from the rows. The price of
compilation is in chapters.compilation, accuracy and the pathwise check in chapters.accuracy,
the path-blocked strategies in chapters.blocked."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import ALLOCATOR_EXPERIMENTS, ALLOCATORS, FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.problems import gbm
from jacbench.report import formats, queries
from jacbench.strategies import registry

# The question's programs, as the registry names them (one per framework that has one).
QUESTION = "question"
# numpy's closed form: the one strategy that does not contain the simulation (it exponentiates
# S_T alone where the simulation exponentiates every step), so its ratio may be below 1.
CLOSED_FORM = ("numpy", "analytic")
# The slope of log time against log N is fitted from this N up (below it a call is overhead).
SLOPE_FROM = 1000


def whose(framework: str, strategy: str) -> str:
    """A strategy with its framework's name: "PyTorch's compiled-pathwise"."""
    return f"{FRAMEWORK_NAMES[framework]}'s {strategy}"


def named(row: pd.Series | dict | None) -> str:
    """A row's strategy with its framework's name, "JAX's blocked-jvp"; '–' where there is none."""
    return "–" if row is None else whose(row["framework"], row["strategy"])


# --- the question's programs ------------------------------------------------------------------


def log_terminal_spread(paths: int = 100_000) -> dict[str, float]:
    """The standard deviation of log(S_T / S0) from the same float64 normals with W cumulated
    ("gbm") and without, as the question's TensorFlow program does ("tf"); their ratio
    ("ratio") and the square root of the number of steps that predicts it ("sqrt_steps")."""
    case = gbm.make_case(gbm.GBMParams(paths=paths, dtype="float64"))
    p = case.params
    spread_gbm = float(np.log(gbm.terminal_closed_form(case) / p.spot).std())
    spread_tf = float(np.log(gbm.terminal_without_cumsum(case) / p.spot).std())
    return {
        "gbm": spread_gbm,
        "tf": spread_tf,
        "ratio": spread_gbm / spread_tf,
        "sqrt_steps": float(np.sqrt(p.steps)),
    }


def loop_peaks(df: pd.DataFrame) -> str | None:
    """The question's PyTorch program under glibc at every N measured, its peak beyond the
    inputs (or what stopped it) beside the one tape its loop holds: 'N = 1,000: 131.1 MiB, one
    tape 10.2 MiB; N = 10,000: memory cap (8.0 GiB), one tape 30.2 MiB'; None where none ran."""
    tape = registry.get("torch", QUESTION).memory
    said = []
    for _, r in queries.gbm(df, framework="torch", strategy=QUESTION).iterrows():
        n = int(r["paths"])
        held = formats.size(r["peak_over_inputs"]) if r["status"] == "ok" else formats.outcome(r)
        said.append(
            f"N = {formats.count(n)}: {held}, one tape "
            f"{formats.size(tape.working(n, int(r['steps']), r['dtype']))}"
        )
    return "; ".join(said) or None


def loop_growth(df: pd.DataFrame) -> dict | None:
    """How the question's PyTorch program's peak beyond the inputs grows under glibc, over the
    N from SLOPE_FROM up at which it ran correctly: the least-squares log-log slope over them,
    and at the largest, how many path arrays ((M + 1) x N values) stay
    resident per backward pass (the peak over N path arrays). None with fewer than two N."""
    rows = queries.gbm(df, framework="torch", strategy=QUESTION, status="ok")
    rows = rows[rows["paths"] >= SLOPE_FROM]
    if len(rows) < 2:
        return None
    slope = queries.loglog_slope(rows["paths"], rows["peak_over_inputs"])
    top = rows.iloc[-1]
    n = int(top["paths"])
    array = gbm.GBMParams(paths=n, steps=int(top["steps"]), dtype=top["dtype"]).path_array_bytes
    return {"from": int(rows["paths"].iloc[0]), "to": n, "slope": slope,
            "per_pass": float(top["peak_over_inputs"]) / (n * array)}  # fmt: skip


def loop_growth_sentence(df: pd.DataFrame) -> str:
    """'between N = 1,000 and 3,000, the sizes measured there, its peak grows as N^1.97, as if
    ...', from loop_growth; says where it cannot be fitted."""
    g = loop_growth(df)
    if g is None or g["slope"] is None:
        return ("the program did not run at two sizes from N = 1,000 up, so how its memory grows "
                "is not fitted here")  # fmt: skip
    slope = g["slope"]
    said = (
        f"between N = {formats.count(g['from'])} and {formats.count(g['to'])}, the sizes "
        f"measured there, its peak grows as N^{slope:.2f}"
    )
    if slope >= 1.75:
        said += (f", as if each of the N backward passes left {g['per_pass']:.2f} of a path "
                 f"array behind (at N = {formats.count(g['to'])}), where the loop needs one tape "
                 "at a time")  # fmt: skip
    elif slope >= 1.25:
        said += ", faster than the one tape the loop needs (linear in N)"
    else:
        said += ", no faster than the one tape the loop needs"
    return said


# --- cost relative to one simulation ----------------------------------------------------------


def costs(df: pd.DataFrame) -> pd.DataFrame:
    """Each strategy's row at the largest N it ran correctly, in the registry's order (any
    other last), with its memory beyond the inputs over its simulation's ("memory_ratio"; NaN
    where the simulation is missing or held nothing) and the log-log slope of its warm time
    in N from N = SLOPE_FROM ("slope"; NaN with fewer than two sizes)."""
    strategies = [s for fw in FRAMEWORKS for s in registry.by_framework(fw)]
    order = {(s.framework, s.name): i for i, s in enumerate(strategies)}
    rows = []
    for (fw, name), runs in queries.gbm(df, status="ok").groupby(["framework", "strategy"]):
        top = runs.iloc[-1]  # the largest N it ran correctly (rows are sorted by N)
        sim = queries.simulation_of(df, top)  # the simulation in the same execution mode and N
        held = queries.value(sim, "peak_over_inputs")
        fit = runs[runs["paths"] >= SLOPE_FROM]
        rows.append(
            top.to_dict()
            | {
                "order": order.get((fw, name), len(order)),
                "memory_ratio": top["peak_over_inputs"] / held if held and held > 0 else None,
                "slope": queries.loglog_slope(fit["paths"], fit["warm_median_s"]),
            }
        )
    out = pd.DataFrame(rows, columns=[*df.columns, "order", "memory_ratio", "slope"])
    out[["memory_ratio", "slope"]] = out[["memory_ratio", "slope"]].astype(float)
    return out.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)


def processes_phrase(df: pd.DataFrame) -> str:
    """Where the ratios come from more than one worker process, as the chapter says it: 'at
    N = 100,000 and 1,000,000 in three such processes' (the largest count), or 'in that
    process only' where no ratio was measured in more than one."""
    timed = queries.gbm(df, status="ok").dropna(subset=["ratio_median"])
    more = timed[timed["ratio_processes"] > 1]
    if more.empty:
        return "in that process only"
    sizes = sorted({int(n) for n in more["paths"]})
    count = int(more["ratio_processes"].max())
    words = {2: "two", 3: "three", 4: "four", 5: "five"}
    names = [formats.count(n) for n in sizes]
    where = " and ".join(filter(None, [", ".join(names[:-1]), names[-1]]))
    return f"at N = {where} in up to {words.get(count, str(count))} such processes"


def ratio_cell(row: pd.Series) -> str:
    """'2.6× [2.3–2.8]', whole numbers from 10× up ('2310× [1996–2525]'); '–' unmeasured."""
    big = not formats.missing(row["ratio_median"]) and row["ratio_median"] >= 10
    return formats.ratio_with_spread(row, digits=0 if big else 1)


def times_cell(ratio: float | None) -> str:
    """'2.6×', whole numbers from 10× up ('2310×'); '–' unmeasured."""
    if formats.missing(ratio):
        return "–"
    return formats.times(ratio, digits=0 if ratio >= 10 else 1)


def memory_cell(peak: float, ratio: float | None) -> str:
    """'13.6 MiB (1.5×)': a peak beyond the inputs and its ratio to the simulation's (whole
    numbers from 10× up); the peak alone where there is no ratio."""
    if formats.missing(ratio):
        return formats.size(peak)
    return f"{formats.size(peak)} ({formats.times(ratio, digits=0 if ratio >= 10 else 1)})"


def timed_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """The correct strategy rows timed against their simulation, numpy's closed form left out
    (the one strategy that does not contain the simulation)."""
    ratios = queries.gbm(df, status="ok").dropna(subset=["ratio_median"])
    closed = (ratios["framework"] == CLOSED_FORM[0]) & (ratios["strategy"] == CLOSED_FORM[1])
    return ratios[~closed]


def below_one(df: pd.DataFrame) -> str | None:
    """How many ratios are below 1 for a computation that contains the simulation: 'in these
    results none is', 'in these results 2 are, all at N ≤ 1,000'; None where none was timed."""
    ratios = timed_ratios(df)
    if not len(ratios):
        return None
    low = ratios[ratios["ratio_median"] < 1]
    if not len(low):
        return "in these results none is"
    return f"in these results {len(low)} are, all at N ≤ {formats.count(low['paths'].max())}"


def compiled_pairs() -> list[tuple[str, str, str]]:
    """(framework, eager strategy, its compiled variant) for every compiled variant that has
    an eager twin (PyTorch's and TensorFlow's; JAX is jitted throughout), in the registry's
    order."""
    return [
        (fw, eager, comp)
        for fw in FRAMEWORKS
        for comp, eager in registry.compiled_variants(fw)
        if eager
    ]


def largest_timed_n(df: pd.DataFrame, compiled: bool = False) -> int | None:
    """The largest N at which a ratio to the simulation was measured (of the compiled variants
    with an eager twin only, if compiled), or None."""
    ratios = timed_ratios(df)
    if compiled:
        keys = {(fw, comp) for fw, _, comp in compiled_pairs()}
        pairs = zip(ratios["framework"], ratios["strategy"], strict=True)
        ratios = ratios[[k in keys for k in pairs]]
    return int(ratios["paths"].max()) if len(ratios) else None


def compiled_beside_eager(df: pd.DataFrame) -> list[dict]:
    """Each compiled variant beside its eager twin at the largest N both ran correctly: their
    ratios to their own simulations and the compiled warm time over the eager one. A variant
    that never ran correctly at a size where its twin did is left out."""
    out = []
    for fw, eager, comp in compiled_pairs():
        n = queries.largest_common(df, fw, [eager, comp])
        if n is None:
            continue
        found = queries.gbm(df, framework=fw, paths=n, status="ok")
        e, c = (queries.one(found, strategy=name) for name in (eager, comp))
        out.append(
            {
                "framework": fw,
                "compiled": comp,
                "eager": eager,
                "paths": n,
                "compiled_ratio": queries.ratio(c),
                "eager_ratio": queries.ratio(e),
                "warm_ratio": c["warm_median_s"] / e["warm_median_s"],
            }
        )
    return out


# --- the allocator ----------------------------------------------------------------------------


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
    "glibc-mmap": "with the threshold fixed (glibc-mmap)",
    "jemalloc": "under jemalloc",
    "glibc-arena1": "with one arena (MALLOC_ARENA_MAX=1)",
    "glibc-trim": "with malloc_trim(0) after every call",
}


def _against_glibc(k: float | None) -> str:
    """'6.3× glibc's time', 'about glibc's time' (within 15%), '1.8× faster than glibc'."""
    if k is None:
        return "its time not comparable"
    if 1 / 1.15 < k < 1.15:
        return "about glibc's time"
    return f"{formats.times(k)} glibc's time" if k > 1 else f"{formats.times(1 / k)} faster"


def allocator_sentence(df: pd.DataFrame) -> str:
    """What the allocator does to PyTorch's default jacobian loop, from the rows: peaks and
    times under each allocator at allocator_compared_size, then what became of it under each at
    the larger N measured with another allocator (allocator_size), and whether choosing one is
    worth it there (the peak at most half glibc's and the time at most 1.15× glibc's)."""
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
        f"glibc's default, {formats.size(peak['glibc-mmap'])} with the threshold fixed "
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
    if jem is not None and peak["glibc"] and jem <= peak["glibc"] / 2 and k["jemalloc"] <= 1.15:
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
    said = f"After the warm calls at N = {formats.count(n)} under glibc's default, "
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


# --- why such a difference --------------------------------------------------------------------


def question_speedup(df: pd.DataFrame, framework: str, paths: int) -> float | None:
    """The question's program's warm time over the framework's fastest strategy's at N, or
    None where either did not run correctly."""
    question = queries.one(
        queries.gbm(df, framework=framework, paths=paths, status="ok"), strategy=QUESTION
    )
    best = queries.best(df, framework, paths)
    if question is None or best is None:
        return None
    return float(question["warm_median_s"] / best["warm_median_s"])


def question_memory_over_pathwise(df: pd.DataFrame, framework: str, paths: int) -> float | None:
    """The question's program's memory beyond the inputs over the framework's pathwise
    gradient's (the answer's) at N, or None where either is missing or the latter held nothing."""
    found = queries.gbm(df, framework=framework, paths=paths, status="ok")
    question = queries.one(found, strategy=QUESTION)
    pathwise = queries.one(found, strategy=registry.answer(framework, "pathwise").name)
    if question is None or pathwise is None or not pathwise["peak_over_inputs"] > 0:
        return None
    return float(question["peak_over_inputs"] / pathwise["peak_over_inputs"])


def vectorized_against_loop(
    df: pd.DataFrame, framework: str, vectorized: str, paths: int
) -> dict[str, float | str | None]:
    """A vectorized reverse mode's warm time ("vectorized") against that of the loop it batches
    ("loop", the registry's vectorizes) at N, and the comparison in words ("phrase": '2.0 times
    slower', '14.3 times faster', 'no comparison in this profile')."""
    loop = registry.get(framework, vectorized).vectorizes
    found = queries.gbm(df, framework=framework, paths=paths, status="ok")
    v, lp = (
        queries.value(queries.one(found, strategy=name), "warm_median_s")
        for name in (vectorized, loop)
    )
    if v is None or lp is None:
        phrase = "no comparison in this profile"
    else:
        r = v / lp
        phrase = f"{r:.1f} times slower" if r >= 1 else f"{1 / r:.1f} times faster"
    return {"vectorized": v, "loop": lp, "phrase": phrase}
