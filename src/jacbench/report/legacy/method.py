"""The GBM chapter's method, said from the rows: in how many processes its ratios were timed, how
the two sides of a pair were timed, how far one simulation's processes moved apart, and how
glibc's malloc ran in them."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES, HEAP_ALLOCATOR
from jacbench.measure import heap as malloc_heap
from jacbench.measure import store, targets, worker
from jacbench.problems.gbm import GBMParams
from jacbench.report import formats, queries


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
    where = formats.listing(names)
    return f"at N = {where} in up to {words.get(count, str(count))} such processes"


def settling_phrase(df: pd.DataFrame) -> str:
    """How the two sides of a pair were timed and where a row's warm time comes from, as the
    chapter's method says it, from the method the ratio rows were measured with (store.METHOD):
    settled and pooled (2), back to back and from the first process (1, and a file from before
    the method column), and how many of each in a dataset being measured again."""
    timed = queries.gbm(df, status="ok").dropna(subset=["ratio_median"])
    current = sum(store.row_method(row) >= 2 for _, row in timed.iterrows())
    older = (
        "each side is timed right after the other's call, and a row's warm time comes from "
        "its first process only"
    )
    if current == 0:
        return older
    said = (
        f"a side whose call takes under {worker.SETTLE_BELOW_S:g} s is called once, untimed, "
        "right before its timed call, so that it is timed in the state its own call leaves (as "
        "its warm calls are), not in the cache the other side's call left. A row's warm time "
        "pools the warm calls of all its processes; the dataset keeps each process's median "
        "(warm_by_process) and the page faults of a call (warm_faults)"
    )
    if current == len(timed):
        return said
    return (
        f"{said}. That is how {current} of the {len(timed)} ratios here were measured; the "
        f"other {len(timed) - current}, of the dataset's older method, were not: there "
        f"{older}"
    )


def process_medians(text) -> list[float]:
    """A row's warm median in each of its processes (its warm_by_process, '0.0154;0.0497')."""
    if formats.missing(text) or not str(text).strip():
        return []
    return [float(x) for x in str(text).split(";") if x]


def process_spread_sentence(df: pd.DataFrame) -> str:
    """How far the processes of one simulation moved apart, the largest case in the rows: 'The
    processes of one simulation differ by up to 3.2×: PyTorch's eager simulation at N = 100,000
    took a median of 15.4 ms in one and 49.7 ms in another.' Where no simulation was timed in
    more than one process, it says so."""
    widest = None
    for _, row in queries.gbm(df, "simulation", status="ok").iterrows():
        medians = process_medians(row["warm_by_process"])
        if len(medians) > 1 and min(medians) > 0:
            spread = max(medians) / min(medians)
            if widest is None or spread > widest[0]:
                widest = (spread, row, medians)
    if widest is None:
        return "Each simulation's warm calls come from one process."
    spread, row, medians = widest
    mode = targets.parse(row["framework"], row["strategy"]).name
    under = "" if row["allocator"] == "glibc" else f" under {row['allocator']}"
    return (
        f"The processes of one simulation differ by up to {spread:.1f}×: "
        f"{FRAMEWORK_NAMES[row['framework']]}'s {mode} simulation at N = "
        f"{formats.count(row['paths'])}{under} took a median of {formats.time(min(medians))} "
        f"in one and {formats.time(max(medians))} in another."
    )


def heap_sentence(df: pd.DataFrame) -> str:
    """How glibc ran in the workers of the cases timed in several processes, from the rows'
    malloc_env: with its thresholds fixed (method 3), how many page faults a warm call of their
    simulations then took at each N, and why there are any; in a dataset being measured again,
    how many were not."""
    rows = queries.gbm(df, ("strategy", "simulation"), status="ok")
    several = rows[(rows["ratio_processes"] > 1) & (rows["allocator"] == "glibc")]
    if several.empty:
        return "Every worker ran glibc's malloc as it comes."
    fixed = several[[not formats.missing(v) and bool(str(v).strip())
                     for v in several["malloc_env"]]]  # fmt: skip
    if fixed.empty:
        return (
            "Every worker ran glibc's malloc as it comes, which decides by what else a process "
            "holds whether a call's freed arrays go back to the kernel, to be faulted in again "
            "by the next call: one cause of the differences between processes."
        )
    mmap, trim = (formats.size(v) for v in (malloc_heap.MMAP_THRESHOLD, malloc_heap.TRIM_THRESHOLD))
    said = (
        "The workers of a case timed in several processes run glibc's malloc with its two "
        f"thresholds fixed (MALLOC_MMAP_THRESHOLD_ at {mmap}, the most its own rule raises it "
        f"to, and MALLOC_TRIM_THRESHOLD_ at {trim}), so that a call may reuse what the last one "
        "freed; left to adjust them, glibc gives a call's freed arrays back to the kernel in one "
        "process and keeps them in the next, by what else each holds"
    )
    sims = fixed[fixed["target"] == "simulation"].dropna(subset=["warm_faults"])
    if not sims.empty:
        said += ". " + _heap_faults(sims)
    if len(fixed) < len(several):
        said += (
            f". That is how {len(fixed)} of the {len(several)} cases timed in several processes "
            f"were measured; the other {len(several) - len(fixed)}, of an older method, ran "
            "glibc as it comes"
        )
    return said + ". The allocator variants and the cases timed in one process run it as it comes."


def _heap_faults(sims: pd.DataFrame) -> str:
    """The page faults a warm call of the simulations timed with the thresholds fixed took at
    each N, and why, only where a path array (the largest array a simulation allocates) is
    above the mmap threshold: such a block is a mapping of its own. Where the path array is
    below it and a call faulted anyway, the faults' source is said to be not established."""
    # A call's faults are bimodal (none where the heap held a free region, thousands where it
    # did not): the range, not a median, says what they were.
    spans = sims.groupby("paths")["warm_faults"]
    at = [f"{formats.span(f, lambda v: formats.count(round(float(v))))} at "
          f"N = {formats.count(n)}" for n, f in spans]  # fmt: skip
    at[0] = at[0].replace(" at N", " page faults at N", 1)
    said = f"So timed, a warm call of their simulations took {formats.listing(at)}."
    above, below = [], []
    for n, g in sims.groupby("paths"):
        first = g.iloc[0]
        threshold = fixed_mmap_threshold(first["malloc_env"])
        array = GBMParams(paths=int(n), steps=int(first["steps"]), dtype=first["dtype"])
        size = array.path_array_bytes
        if threshold is None:
            continue
        (above if size > threshold else below).append((int(n), size, threshold, g))
    if above:
        threshold = above[0][2]
        said += (
            f" At N = {_sizes_at(above)} is above the {formats.size(threshold)} threshold. A "
            "block that large is a mapping of its own whatever the threshold, given back to the "
            "kernel when freed, unless the heap holds a free region that large already (as "
            "after a Jacobian's call)."
        )
    faulted = [b for b in below if b[3]["warm_faults"].max() > 0]
    if faulted:
        threshold = faulted[0][2]
        said += (
            f" At N = {_sizes_at(faulted)} is below the {formats.size(threshold)} threshold; "
            "where the faults there come from is not established."
        )
    return said[:-1]


def _sizes_at(found: list) -> str:
    """'1,000,000 a path array (202.2 MiB)', or for several N each array's size in turn."""
    return (f"{formats.listing([formats.count(f[0]) for f in found])} a path array "
            f"({formats.listing([formats.size(f[1]) for f in found])})")  # fmt: skip


# Side by side and from the warm medians, a ratio may differ by this factor before the two
# disagree (issue 24's bar for the reference dataset).
AGREE = 1.5


def mapping_costs(df: pd.DataFrame) -> pd.DataFrame:
    """Each case measured again with no block a mapping of its own (HEAP_ALLOCATOR) beside its
    row under glibc: warm times, page faults a warm call, memory beyond the inputs and, for a
    strategy, its ratio side by side and from the warm medians, under each."""
    out = []
    for target in ("simulation", "strategy"):
        for _, heap in queries.gbm(df, target, allocator=HEAP_ALLOCATOR, status="ok").iterrows():
            glibc = queries.one(queries.gbm(df, target, status="ok"), paths=heap["paths"],
                                framework=heap["framework"], strategy=heap["strategy"])  # fmt: skip
            if glibc is None:
                continue
            row = {"framework": heap["framework"], "strategy": heap["strategy"],
                   "target": target, "paths": int(heap["paths"])}  # fmt: skip
            for name, r in (("glibc", glibc), ("heap", heap)):
                # A strategy's own simulation, under the same allocator.
                sim = (queries.simulation_of(df, r, allocator=r["allocator"])
                       if target == "strategy" else None)  # fmt: skip
                warm, sim_faults = (
                    (None, None)
                    if sim is None
                    else (float(r["warm_median_s"] / sim["warm_median_s"]), sim["warm_faults"])
                )
                row |= {f"{name}_s": float(r["warm_median_s"]), f"{name}_faults": r["warm_faults"],
                        f"{name}_peak": float(r["peak_over_inputs"]),
                        f"{name}_ratio": queries.ratio(r), f"{name}_warm_ratio": warm,
                        f"{name}_sim_faults": sim_faults,
                        f"{name}_pair_faults": r["pair_baseline_faults"]}  # fmt: skip
            out.append(row)
    return pd.DataFrame(out)


def apart(a, b) -> float:
    """How far apart two ratios are, as a factor either way (1 for equal, 2 for double or half)."""
    return max(a / b, b / a)


def _disagree(a, b) -> bool:
    return not (formats.missing(a) or formats.missing(b)) and apart(a, b) > AGREE


def _group_sentence(rows: pd.DataFrame) -> str:
    """One framework at one N: its simulation's and Jacobians' warm times and faults under both,
    their side-by-side ratios and the memory the heap held."""
    first = rows.iloc[0]
    name = FRAMEWORK_NAMES[first["framework"]]
    parts = []
    for _, r in rows.iterrows():
        mode = targets.parse(r["framework"], r["strategy"]).name
        whose = f"{name}'s" if not parts else "its"
        what = (f"{whose} {mode} simulation"
                if r["target"] == "simulation" else r["strategy"])  # fmt: skip
        part = f"{what} took {formats.time(r['heap_s'])} instead of {formats.time(r['glibc_s'])}"
        faults = (r["heap_faults"], r["glibc_faults"])
        if not any(formats.missing(f) for f in faults) and max(faults) > 0:
            part += (f" ({formats.count(round(r['heap_faults']))} page faults a call instead of "
                     f"{formats.count(round(r['glibc_faults']))})")  # fmt: skip
        parts.append(part)
    said = f"At N = {formats.count(first['paths'])}, " + formats.listing(parts)
    ratios = [f"{r['strategy']} {formats.times(r['heap_ratio'], 2)} against "
              f"{formats.times(r['glibc_ratio'], 2)}"
              for _, r in rows.iterrows() if not formats.missing(r["heap_ratio"])]  # fmt: skip
    if ratios:
        said += f"; side by side, {formats.listing(ratios)} its simulation"
    memory = rows["heap_peak"] / rows["glibc_peak"].where(rows["glibc_peak"] > 0)
    if memory.notna().any():
        top = rows.loc[memory.idxmax()]
        said += (
            f"; and the heap, which keeps what is freed, held up to "
            f"{formats.times(memory.max(), 1)} the memory beyond the inputs "
            f"({top['strategy']}: {formats.size(top['heap_peak'])} against "
            f"{formats.size(top['glibc_peak'])})"
        )
    return said + "."


def _settled_sentence(rows: pd.DataFrame) -> str:
    """The strategies whose two ratios disagree under glibc and agree with no block mapped,
    and why: the simulation's own processes mapped its arrays on every call, the Jacobian's
    processes did not."""
    said = []
    for _, r in rows[rows["target"] == "strategy"].iterrows():
        if not (_disagree(r["glibc_ratio"], r["glibc_warm_ratio"])
                and not _disagree(r["heap_ratio"], r["heap_warm_ratio"])):  # fmt: skip
            continue
        # The one to read is the nearer to what both give without mappings.
        settled = (r["heap_ratio"] * r["heap_warm_ratio"]) ** 0.5
        if apart(r["glibc_ratio"], settled) >= apart(r["glibc_warm_ratio"], settled):
            continue
        faults = ""
        if not any(formats.missing(r[c]) for c in ("glibc_sim_faults", "glibc_pair_faults")):
            faults = (f" ({formats.count(round(r['glibc_sim_faults']))} page faults a call "
                      f"against {formats.count(round(r['glibc_pair_faults']))} as the pairs' "
                      "baseline)")  # fmt: skip
        said.append(
            f" {FRAMEWORK_NAMES[r['framework']]}'s {r['strategy']} at N = "
            f"{formats.count(r['paths'])} is {formats.times(r['glibc_ratio'], 2)} its "
            f"simulation side by side but {formats.times(r['glibc_warm_ratio'], 2)} by the warm "
            "medians under glibc as the dataset runs it, and "
            f"{formats.times(r['heap_ratio'], 2)} side by side and "
            f"{formats.times(r['heap_warm_ratio'], 2)} by the warm medians with no block mapped: "
            "the simulation's own processes mapped its arrays afresh on "
            f"every call, a process that had run the Jacobian did not{faults}, so the ratio to "
            "read is the one side by side, the nearer to both without mappings."
        )
    return "".join(said)


def mapping_sentence(df: pd.DataFrame) -> str:
    """What glibc's mapping of every block above 32 MiB costs the cases that measured it again
    with no block mapped (mapping_costs), framework by framework and N by N; where a ratio's two
    measures disagree under glibc and agree without mappings, which one to read."""
    costs = mapping_costs(df)
    if costs.empty:
        return f"No case was measured again with no block mapped ({HEAP_ALLOCATOR}) in this build."
    said = (
        "What those mappings cost was measured again with no block a mapping of its own "
        f"(MALLOC_MMAP_MAX_=0 besides the fixed thresholds: allocator {HEAP_ALLOCATOR})."
    )
    for _, rows in costs.groupby(["paths", "framework"], sort=True):
        said += " " + _group_sentence(rows)
    said += _settled_sentence(costs)
    return said + (
        " The tables keep glibc's mappings: they are part of what a program under glibc pays."
    )


def malloc_words(env, detail: bool = True) -> str:
    """A malloc_env as a caption says it: 'as it comes', or 'with its thresholds fixed
    (MALLOC_MMAP_THRESHOLD_ = 32.0 MiB, MALLOC_TRIM_THRESHOLD_ = 4.0 GiB)' (sizes in bytes);
    without detail, 'with its thresholds fixed' alone."""
    if formats.missing(env) or not str(env).strip():
        return "as it comes"
    if not detail:
        return "with its thresholds fixed"
    settings = [f"{name} = {formats.size(int(value)) if value.isdigit() else value}"
                for name, value in _settings(env).items()]  # fmt: skip
    return f"with its thresholds fixed ({', '.join(settings)})"


def _settings(env) -> dict[str, str]:
    """A malloc_env ('NAME=value NAME=value') as {name: value}; {} where it is blank."""
    if formats.missing(env):
        return {}
    return dict(item.partition("=")[::2] for item in str(env).split())


def fixed_mmap_threshold(env) -> int | None:
    """The MALLOC_MMAP_THRESHOLD_ a malloc_env fixes, in bytes; None where it fixes none."""
    value = _settings(env).get("MALLOC_MMAP_THRESHOLD_", "")
    return int(value) if value.isdigit() else None


def malloc_phrase(df: pd.DataFrame) -> str:
    """How glibc's malloc ran in the workers of the GBM rows the scaling figures draw (glibc,
    the simulations that measure drawing left out), N by N, for their captions, which name the
    glibc allocator just before: "malloc as it comes at N = 100, 1,000 and 10,000,000, with its
    thresholds fixed (MALLOC_MMAP_THRESHOLD_ = 32.0 MiB, ...) at N = 100,000 and 1,000,000"; the
    sizes left out where every N ran alike."""
    rows = queries.without_draws(queries.gbm(df, ("strategy", "simulation")))
    by = pd.DataFrame({"paths": rows["paths"].astype(int),
                       "setting": [malloc_words(v) for v in rows["malloc_env"]]})  # fmt: skip
    groups = {s: sorted(set(g["paths"])) for s, g in by.groupby("setting", sort=False)}
    if len(groups) <= 1:
        return f"malloc {next(iter(groups), 'as it comes')}"
    said = [f"{s} at N = {formats.listing([formats.count(n) for n in ns])}"
            for s, ns in sorted(groups.items(), key=lambda g: g[1][0])]  # fmt: skip
    return "malloc " + ", ".join(said)
