"""The allocators and page faults, as numbers and flags: PyTorch's loops under each allocator,
what glibc kept (mallinfo2), and what a mapping of its own costs a large array."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from jacbench.constants import ALLOCATOR_EXPERIMENTS, ALLOCATORS, HEAP_ALLOCATOR
from jacbench.measure import harness, heap
from jacbench.problems.gbm import GBMParams
from jacbench.report import margins, queries
from jacbench.strategies import registry

# The experiment's reading: glibc "keeps" what it holds freed where that is at least this share
# of the peak; a variant leaves the peak "unchanged" within UNCHANGED either way.
KEPT = 0.5
# The smallest page a minor fault maps on x86-64 Linux: a call's faults times this is the least
# memory it faulted in.
PAGE = 4096
UNCHANGED = 1.33


def num(row: pd.Series | None, column: str) -> float | None:
    value = None if row is None else row.get(column)
    return None if value is None or pd.isna(value) else float(value)


@dataclass(frozen=True)
class Run:
    """One PyTorch row under one allocator: its warm call and memory beyond the inputs (None
    where it did not finish)."""

    strategy: str
    allocator: str
    paths: int
    status: str
    warm_s: float | None
    beyond_inputs: float | None
    cap: float | None

    @property
    def finished(self) -> bool:
        return self.status == "ok"


def _run(row: pd.Series) -> Run:
    ok = row["status"] == "ok"
    return Run(
        str(row["strategy"]),
        str(row["allocator"]),
        int(row["paths"]),
        str(row["status"]),
        num(row, "warm_median_s") if ok else None,
        num(row, "peak_over_inputs") if ok else None,
        num(row, "mem_cap"),
    )


@dataclass(frozen=True)
class Allocators:
    """PyTorch's strategies measured under another allocator than glibc's as it comes."""

    loop: str  # torch.autograd.functional.jacobian's loop: the registry's default
    compared_n: int | None  # the largest N where the loop ran under all three
    top_n: int | None  # the largest N measured under another allocator
    runs: tuple[Run, ...]  # each such strategy under each allocator at compared_n and top_n
    mmap_threshold: int  # what glibc-mmap fixes, bytes
    mmap_against_glibc: margins.Comparison | None  # the loop at compared_n
    jemalloc_against_glibc: margins.Comparison | None
    jemalloc_against_mmap_top: margins.Comparison | None  # the loop at top_n

    def run(self, allocator: str, paths: int | None, strategy: str | None = None) -> Run | None:
        name = strategy or self.loop
        return next(
            (
                r
                for r in self.runs
                if (r.strategy, r.allocator, r.paths) == (name, allocator, paths)
            ),
            None,
        )

    def faster(self, a: str, b: str, paths: int | None) -> bool:
        """Whether the loop under allocator a beats it under b at N by the book's rule."""
        c, a_first = {  # the comparison, and whether it was given a first
            ("glibc", "glibc-mmap"): (self.mmap_against_glibc, False),
            ("jemalloc", "glibc"): (self.jemalloc_against_glibc, True),
            ("jemalloc", "glibc-mmap"): (self.jemalloc_against_mmap_top, True),
        }.get((a, b), (None, True))
        return bool(c is not None and c.size == paths and c.ranked and c.a_faster == a_first)

    def stopped(self, allocator: str, paths: int | None) -> bool:
        """Whether the memory cap stopped the loop under an allocator at N."""
        run = self.run(allocator, paths)
        return run is not None and run.status == "memory-cap"

    @property
    def jemalloc_no_slower(self) -> bool:
        """Whether the loop under jemalloc is at least as fast as under glibc at compared_n: a
        tie by the book's rule, or faster."""
        c = self.jemalloc_against_glibc  # given jemalloc first
        return bool(c is not None and (not c.ranked or c.a_faster))

    @property
    def glibc_over_others(self) -> float | None:
        """The loop's memory beyond its inputs under glibc over the larger of the other two's,
        at compared_n."""
        peaks = [self.run(a, self.compared_n) for a in ALLOCATORS]
        if any(p is None or p.beyond_inputs is None for p in peaks):
            return None
        return peaks[0].beyond_inputs / max(p.beyond_inputs for p in peaks[1:])


def _rows(df: pd.DataFrame, allocator) -> pd.DataFrame:
    return queries.gbm(df, framework="torch", allocator=allocator)


def _compare(a: pd.Series | None, b: pd.Series | None, found: margins.Margins):
    if a is None or b is None or a["status"] != "ok" or b["status"] != "ok":
        return None
    return margins.compare(a, b, found)


def allocators(df: pd.DataFrame, found: margins.Margins) -> Allocators:
    """The allocator factor's facts (see Allocators)."""
    loop = registry.default("torch").name
    other = _rows(df, ALLOCATORS[1:])
    names = [s.name for s in registry.by_framework("torch") if s.name in set(other["strategy"])]
    sizes = None
    for alloc in ALLOCATORS:
        ok = set(_rows(df, alloc).query("strategy == @loop and status == 'ok'")["paths"])
        sizes = ok if sizes is None else sizes & ok
    compared = int(max(sizes)) if sizes else None
    top = int(other["paths"].max()) if len(other) else None
    rows = _rows(df, ALLOCATORS)
    wanted = rows[rows["strategy"].isin(names) & rows["paths"].isin([compared, top])]
    order = {n: i for i, n in enumerate(names)}
    wanted = wanted.sort_values(
        ["paths", "strategy", "allocator"],
        key=lambda c: c.map(
            order if c.name == "strategy" else ALLOCATORS.index if c.name == "allocator" else int
        ),
    )

    def at(alloc: str, n: int | None) -> pd.Series | None:
        return queries.one(rows, strategy=loop, allocator=alloc, paths=n)

    return Allocators(
        loop=loop,
        compared_n=compared,
        top_n=top,
        runs=tuple(_run(r) for _, r in wanted.iterrows()),
        mmap_threshold=int(harness.MMAP_THRESHOLD),
        mmap_against_glibc=_compare(at("glibc-mmap", compared), at("glibc", compared), found),
        jemalloc_against_glibc=_compare(at("jemalloc", compared), at("glibc", compared), found),
        jemalloc_against_mmap_top=_compare(at("jemalloc", top), at("glibc-mmap", top), found),
    )


@dataclass(frozen=True)
class Held:
    """One row of the allocator experiment: what glibc's malloc held after the warm calls."""

    strategy: str
    paths: int
    allocator: str
    warm_s: float | None
    beyond_inputs: float | None
    in_use: float | None  # in use after the warm calls, beyond what was before the first call
    kept: float | None  # freed by the program, kept by malloc
    faults: float | None = None  # page faults of a warm call

    @property
    def faulted(self) -> float | None:
        """The least memory a warm call faulted in: its page faults times a 4 KiB page."""
        return None if self.faults is None else self.faults * PAGE


@dataclass(frozen=True)
class Experiment:
    """The allocator experiment: PyTorch's programs under glibc as it comes, with one arena and
    with malloc_trim after every call; `loop` is the default loop at the largest N measured."""

    runs: tuple[Held, ...]
    loop: Mapping[str, Held]  # by allocator

    @property
    def kept_most(self) -> bool:
        """Whether what stays resident under glibc is mostly memory the program freed."""
        g = self.loop.get("glibc")
        if g is None or None in (g.kept, g.in_use, g.beyond_inputs):
            return False
        return g.kept >= KEPT * g.beyond_inputs > g.in_use

    def unchanged(self, allocator: str) -> bool:
        """Whether a variant left the loop's peak where glibc's default had it."""
        g, v = self.loop.get("glibc"), self.loop.get(allocator)
        if g is None or v is None or not (g.beyond_inputs and v.beyond_inputs):
            return False
        return 1 / UNCHANGED <= v.beyond_inputs / g.beyond_inputs <= UNCHANGED

    def faulted_share(self, allocator: str) -> float | None:
        """What a warm call of the loop faulted in over its peak beyond the inputs: near 1 where
        each call builds its peak in fresh pages, near 0 where it reuses memory kept from the
        call before."""
        h = self.loop.get(allocator)
        if h is None or h.faulted is None or not h.beyond_inputs:
            return None
        return h.faulted / h.beyond_inputs


def _held(row: pd.Series) -> Held:
    before, after = num(row, "inputs_heap_in_use"), num(row, "warm_heap_in_use")
    ok = row["status"] == "ok"
    in_use = max(after - before, 0.0) if None not in (before, after) else None
    return Held(
        str(row["strategy"]),
        int(row["paths"]),
        str(row["allocator"]),
        num(row, "warm_median_s") if ok else None,
        num(row, "peak_over_inputs") if ok else None,
        in_use,
        num(row, "warm_heap_free_kept"),
        num(row, "warm_faults") if ok else None,
    )


def experiment(df: pd.DataFrame) -> Experiment | None:
    """The experiment's rows, each strategy and N it measured under glibc and both variants;
    None where it was not run."""
    variants = _rows(df, ALLOCATOR_EXPERIMENTS)
    if variants.empty:
        return None
    keys = set(zip(variants["strategy"], variants["paths"], strict=True))
    rows = _rows(df, ("glibc", *ALLOCATOR_EXPERIMENTS))
    rows = rows[[k in keys for k in zip(rows["strategy"], rows["paths"], strict=True)]]
    runs = tuple(_held(r) for _, r in rows.iterrows())
    loop = registry.default("torch").name
    sizes = [h.paths for h in runs if h.strategy == loop]
    top = max(sizes, default=None)
    return Experiment(runs, {h.allocator: h for h in runs if (h.strategy, h.paths) == (loop, top)})


@dataclass(frozen=True)
class Mapped:
    """One case under glibc, and measured again with no block a mapping of its own."""

    framework: str
    name: str  # the strategy, or the simulation's execution mode
    simulation: bool
    paths: int
    warm_s: tuple[float, float]  # glibc, no mappings
    faults: tuple[float | None, float | None]  # page faults a warm call
    beyond_inputs: tuple[float, float]
    ratio: tuple[float | None, float | None]  # side by side with its simulation
    comparison: margins.Comparison  # the two warm medians, by the book's rule

    @property
    def faster_unmapped(self) -> bool:
        """Whether it ran faster without mappings, beyond the noise (compared unmapped first)."""
        return self.comparison.ranked and self.comparison.a_faster


@dataclass(frozen=True)
class Faults:
    """Where page faults cost time: glibc's mappings of large blocks, and its fixed thresholds
    in the workers of a case timed several times over."""

    mapped: tuple[Mapped, ...]
    fault_s: float | None  # seconds a fault, from the time the mapped cases saved
    mmap_threshold: int  # fixed where a case runs in several workers
    trim_threshold: int
    fixed_sizes: tuple[int, ...]  # the N at which they were fixed
    path_array: Mapping[int, int]  # bytes of one path array at each of fixed_sizes
    simulation_faults: Mapping[int, tuple[float, float]]  # fewest and most, a warm call

    @property
    def ratios_held(self) -> bool:
        """Whether every side-by-side ratio moved no further than its framework's margin: the
        two ratios tied by the rule (a ratio has no floor)."""
        pairs = [(m.ratio, m.comparison.margin) for m in self.mapped if None not in m.ratio]
        return bool(pairs) and all(
            margins.tied(*map(margins.Spread.point, r), m, floor=0.0) for r, m in pairs
        )

    @property
    def faster_unmapped(self) -> bool:
        """Whether every case that faulted less without mappings ran faster, beyond the noise."""
        saved = [m for m in self.mapped if None not in m.faults and m.faults[0] > m.faults[1]]
        return bool(saved) and all(m.faster_unmapped for m in saved)

    @property
    def most_memory(self) -> float | None:
        """The most memory beyond the inputs the heap held without mappings, over glibc's."""
        found = [
            m.beyond_inputs[1] / m.beyond_inputs[0] for m in self.mapped if m.beyond_inputs[0] > 0
        ]
        return max(found, default=None)


def _mapped(df: pd.DataFrame, found: margins.Margins) -> list[Mapped]:
    out = []
    for target in ("simulation", "strategy"):
        for _, b in queries.gbm(df, target, allocator=HEAP_ALLOCATOR, status="ok").iterrows():
            a = queries.one(
                queries.gbm(df, target, status="ok"),
                framework=b["framework"],
                strategy=b["strategy"],
                paths=b["paths"],
            )
            if a is None:
                continue
            out.append(
                Mapped(
                    str(b["framework"]),
                    queries.short_name(b),
                    target == "simulation",
                    int(b["paths"]),
                    (float(a["warm_median_s"]), float(b["warm_median_s"])),
                    (num(a, "warm_faults"), num(b, "warm_faults")),
                    (float(a["peak_over_inputs"]), float(b["peak_over_inputs"])),
                    (queries.ratio(a), queries.ratio(b)),
                    margins.compare(b, a, found),
                )
            )
    return out


def fixed_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The GBM rows (draws left out) that ran with glibc's mmap and trim thresholds fixed."""
    rows = queries.without_draws(queries.gbm(df, ("strategy", "simulation")))
    return rows[rows["malloc_env"].fillna("").str.contains("MALLOC_MMAP_THRESHOLD_")]


def fixed_sizes(df: pd.DataFrame) -> tuple[int, ...]:
    """The N at which glibc's thresholds were fixed."""
    return tuple(sorted({int(n) for n in fixed_rows(df)["paths"]}))


def faults(df: pd.DataFrame, found: margins.Margins) -> Faults:
    """The page faults' facts (see Faults)."""
    mapped = _mapped(df, found)
    costs = [
        (m.warm_s[0] - m.warm_s[1]) / (m.faults[0] - m.faults[1])
        for m in mapped
        if None not in m.faults and m.faults[0] - m.faults[1] > 1_000
    ]
    fixed = fixed_rows(df)
    sizes = fixed_sizes(df)
    steps = int(fixed["steps"].iloc[0]) if len(fixed) else 0
    sims = fixed[(fixed["target"] == "simulation") & (fixed["status"] == "ok")]
    sims = sims.dropna(subset=["warm_faults"])
    return Faults(
        mapped=tuple(mapped),
        fault_s=statistics.median(costs) if costs else None,
        mmap_threshold=heap.MMAP_THRESHOLD,
        trim_threshold=heap.TRIM_THRESHOLD,
        fixed_sizes=sizes,
        path_array={n: GBMParams(paths=n, steps=steps).path_array_bytes for n in sizes},
        simulation_faults={
            int(n): (float(g.min()), float(g.max()))
            for n, g in sims.groupby("paths")["warm_faults"]
        },
    )
