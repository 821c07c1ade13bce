"""Chapter 5, how fast it can be: the machine's limit (one read of the normals, the dispatch
floor), each framework's fastest Jacobian of each form of the simulation against it, the step
form's strategies and loops, drawing inside the loop, and a payoff that needs every date."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORKS
from jacbench.measure.targets import LimitTarget, SimulationTarget, parse
from jacbench.report import margins as noise
from jacbench.report import queries
from jacbench.report.chapters.gbm.costs import num
from jacbench.strategies import catalog, registry

# The size the chapter's tables are read at: the largest N where both forms hold the normals.
TABLE_N = 1_000_000
# The largest N where the normals are held (the step form's); beyond, the loops draw their own.
HELD_N = 10_000_000
READ, DISPATCH = LimitTarget("numpy", "read").text, LimitTarget("torch", "dispatch").text


@dataclass(frozen=True)
class Best:
    """A framework's fastest correct candidate of one form at N (by warm median), against one
    read of the normals there."""

    framework: str
    form: str
    n: int
    name: str
    warm_s: float
    cold_s: float
    beyond_inputs: float | None  # bytes: the peak over the memory before the first call
    read_s: float | None  # numpy's read of the normals at N

    @property
    def over_read(self) -> float | None:
        return None if self.read_s is None else self.warm_s / self.read_s


@dataclass(frozen=True)
class Timed:
    """One strategy or simulation of the step form at N: its time, against one read and (for a
    strategy) against its loop's simulation, side by side, and its memory beyond the inputs."""

    framework: str
    name: str
    target: str  # strategy or simulation
    warm_s: float
    cold_s: float
    read_s: float | None
    ratio: float | None  # a strategy's time over its loop's simulation's, side by side
    beyond_inputs: float | None  # bytes: the peak (first call or later) over the inputs
    # bytes: the later calls' peak over the memory just before them (a call's own, compiling
    # and the inputs left out), and what making the inputs added (a framework's own copy)
    call_held: float | None = None
    inputs_held: float | None = None

    @property
    def over_read(self) -> float | None:
        return None if self.read_s is None else self.warm_s / self.read_s

    @property
    def compiled(self) -> bool:
        execution = (
            parse(self.framework, self.name).record.execution
            if self.target == "strategy"
            else self.name
        )
        return catalog.engine(execution) in catalog.COMPILED


@dataclass(frozen=True)
class Drawn:
    """A loop drawing its own normals at N: the Jacobian's time and the whole process's peak,
    the same draws alone (where measured) and the Jacobian's ratio to its drawn simulation."""

    framework: str
    name: str
    n: int
    warm_s: float
    peak: float  # bytes, the whole process
    over_baseline: float | None  # bytes: the peak over the memory before the warm calls
    draws_s: float | None
    ratio: float | None

    @property
    def draw_share(self) -> float | None:
        """The share of a call that drawing the normals alone takes."""
        return None if self.draws_s is None else self.draws_s / self.warm_s


@dataclass(frozen=True)
class Facts:
    """What chapter 5 says, as numbers and names."""

    reads: Mapping[int, float]  # N -> numpy's read of the normals (seconds)
    own_reads: Mapping[tuple[str, int], float]  # (framework, N) -> its own compiled read
    bandwidth: float | None  # GB/s, the sweep's probe (the metadata)
    bandwidth_read: float | None  # GB/s, the normals' bytes over numpy's read at TABLE_N
    dispatch: Mapping[str, float]  # framework -> an empty compiled call (the GBM's arguments)
    best: tuple[Best, ...]
    steps: tuple[Timed, ...]  # every step-form strategy and simulation at TABLE_N
    held: tuple[Timed, ...]  # the same at HELD_N
    normals_held: int | None  # bytes of the normals at HELD_N: M x N float32 values
    drawn: tuple[Drawn, ...]
    blocked_draw_share: Mapping[str, float]  # framework -> drawing's share of its blocked best
    blocked_n: int | None
    philox: tuple[float, float] | None  # TensorFlow's draws under XLA: auto_select, philox
    asian: Mapping[tuple[str, str], Timed]  # (framework, form) -> the Asian payoff's best
    moments_read: Mapping[int, float]  # n -> numpy's read of X with 3 n written
    moments_dispatch: Mapping[str, float]  # framework -> an empty compiled call at n = 10^5
    # Every pair of one framework's step-form strategies at TABLE_N, by the book's one rule.
    comparisons: tuple[noise.Comparison, ...] = ()

    def beats(self, framework: str, faster: str, slower: str) -> bool:
        """Whether one strategy over the steps is faster than another at TABLE_N beyond the
        noise (margins.compare)."""
        return any(
            c.ranked and c.faster == (framework, faster) and c.slower == (framework, slower)
            for c in self.comparisons
        )

    def of(self, framework: str, form: str, n: int = TABLE_N) -> Best | None:
        return next(
            (b for b in self.best if (b.framework, b.form, b.n) == (framework, form, n)), None
        )

    def step(self, framework: str, name: str, n: int = TABLE_N) -> Timed | None:
        """One strategy or simulation over the steps at TABLE_N (or HELD_N)."""
        rows = self.held if n == HELD_N else self.steps
        return next((s for s in rows if (s.framework, s.name) == (framework, name)), None)

    def per_path(self, framework: str, name: str) -> float | None:
        """Bytes a path of a step-form strategy's peak beyond the inputs: its growth from
        TABLE_N to HELD_N over the paths added, which leaves out what does not grow with N
        (the compiled code, the compilers' own memory)."""
        small, large = self.step(framework, name), self.step(framework, name, HELD_N)
        if not (small and large and small.beyond_inputs and large.beyond_inputs):
            return None
        return (large.beyond_inputs - small.beyond_inputs) / (HELD_N - TABLE_N)

    def drawn_at(self, n: int) -> list[Drawn]:
        return [d for d in self.drawn if d.n == n]

    @property
    def largest_drawn(self) -> int | None:
        return max((d.n for d in self.drawn), default=None)

    def gain(self, framework: str, n: int = TABLE_N) -> float | None:
        """How many times faster the step form's best is than the whole-array form's."""
        a, s = self.of(framework, "array", n), self.of(framework, "steps", n)
        return a.warm_s / s.warm_s if a and s else None


def _ok(df: pd.DataFrame, **conditions) -> pd.DataFrame:
    return queries.where(df, status="ok", **{**queries.BASE, **conditions})


def reads(df: pd.DataFrame, problem: str, framework: str = "numpy") -> dict[int, float]:
    """One read of a problem's inputs by size (limit:read): numpy's, or the framework's own."""
    size = "paths" if problem == "gbm" else "inputs"
    rows = _ok(df, problem=problem, target="limit", framework=framework, strategy=READ)
    return {int(r[size]): float(r["warm_median_s"]) for _, r in rows.iterrows()}


def dispatch(df: pd.DataFrame, problem: str, size: int) -> dict[str, float]:
    """An empty compiled call with a problem's arguments at one size (limit:dispatch), by
    framework."""
    column = "paths" if problem == "gbm" else "inputs"
    rows = _ok(df, problem=problem, target="limit", strategy=DISPATCH, **{column: size})
    return {str(r["framework"]): float(r["warm_median_s"]) for _, r in rows.iterrows()}


def _best(df: pd.DataFrame, reads: Mapping[int, float]) -> list[Best]:
    found = []
    rows = queries.gbm(df, form=None, status="ok")
    for fw in AD_FRAMEWORKS:
        for form in registry.FORMS:
            for n in sorted({int(x) for x in rows["paths"]}):
                there = queries.candidates(queries.where(rows, framework=fw, form=form, paths=n))
                top = queries.fastest(there)
                if top is None:
                    continue
                found.append(
                    Best(
                        fw,
                        form,
                        n,
                        queries.short_name(top),
                        float(top["warm_median_s"]),
                        float(top["cold_s"]),
                        num(top, "peak_over_inputs"),
                        reads.get(n),
                    )
                )
    return found


def _timed(row: pd.Series, read_s: float | None) -> Timed:
    return Timed(
        str(row["framework"]),
        queries.short_name(row),
        str(row["target"]),
        float(row["warm_median_s"]),
        float(row["cold_s"]),
        read_s,
        num(row, "ratio_median"),
        num(row, "peak_over_inputs"),
        num(row, "warm_peak_over_baseline"),
        _difference(row, "cold_rss_before", "inputs_rss_before"),
    )


def _difference(row: pd.Series, after: str, before: str) -> float | None:
    a, b = num(row, after), num(row, before)
    return None if a is None or b is None else a - b


def _steps(df: pd.DataFrame, reads: Mapping[int, float], n: int) -> list[Timed]:
    rows = queries.gbm(df, ("strategy", "simulation"), form="steps", paths=n, status="ok")
    drawing = [
        catalog.draws_own(queries.short_name(r))
        or (r["target"] == "strategy" and parse(r["framework"], r["strategy"]).record.drawn)
        for _, r in rows.iterrows()
    ]
    rows = rows[~pd.Series(drawing, index=rows.index, dtype=bool)]
    return [_timed(r, reads.get(n)) for _, r in rows.iterrows()]


def _drawn(df: pd.DataFrame) -> list[Drawn]:
    found = []
    for fw in AD_FRAMEWORKS:
        for s in registry.by_framework(fw, "gbm"):
            if not s.drawn:
                continue
            draws = SimulationTarget(
                fw, catalog.DRAWS + s.execution.removeprefix(catalog.DRAWN)
            ).text
            for _, r in queries.gbm(
                df, form="steps", framework=fw, strategy=s.name, status="ok"
            ).iterrows():
                n = int(r["paths"])
                alone = queries.one(
                    queries.gbm(
                        df,
                        "simulation",
                        form="steps",
                        framework=fw,
                        strategy=draws,
                        paths=n,
                        status="ok",
                    )
                )
                found.append(
                    Drawn(
                        fw,
                        s.name,
                        n,
                        float(r["warm_median_s"]),
                        float(r["peak"]),
                        num(r, "warm_peak_over_baseline"),
                        num(alone, "warm_median_s"),
                        num(r, "ratio_median"),
                    )
                )
    return found


def _blocked_share(df: pd.DataFrame) -> tuple[dict[str, float], int | None]:
    """Per framework, at the largest N its blocked strategies ran, the share of its fastest
    blocked strategy's call that drawing the normals alone takes (simulation:blocked-draws)."""
    shares, top = {}, None
    for fw in AD_FRAMEWORKS:
        names = [b for b, _ in registry.blocked_pairs(fw)]
        rows = queries.gbm(df, framework=fw, strategy=names, status="ok")
        if rows.empty:
            continue
        n = int(rows["paths"].max())
        best = queries.fastest(queries.where(rows, paths=n))
        draws = queries.simulation(df, fw, catalog.BLOCKED_DRAWS, n)
        if best is not None and draws is not None:
            shares[fw] = float(draws["warm_median_s"]) / float(best["warm_median_s"])
            top = n if top is None else max(top, n)
    return shares, top


def _philox(df: pd.DataFrame) -> tuple[float, float] | None:
    """TensorFlow drawing inside XLA at TABLE_N: with the default algorithm, and with philox."""
    found = [
        queries.simulation(df, "tensorflow", name, TABLE_N)
        for name in ("xla-draws", "xla-philox-draws")
    ]
    if any(r is None for r in found):
        return None
    return tuple(float(r["warm_median_s"]) for r in found)  # type: ignore[return-value]


def _asian(df: pd.DataFrame) -> dict[tuple[str, str], Timed]:
    found = {}
    rows = queries.where(
        df, problem="asian", target="strategy", status="ok", paths=TABLE_N, **queries.BASE
    )
    for fw in AD_FRAMEWORKS:
        for form in registry.FORMS:
            top = queries.fastest(queries.where(rows, framework=fw, form=form))
            if top is not None:
                found[(fw, form)] = _timed(top, None)
    return found


def _comparisons(df: pd.DataFrame, margins: noise.Margins) -> list[noise.Comparison]:
    rows = queries.candidates(queries.gbm(df, form="steps", paths=TABLE_N, status="ok"))
    found = []
    for fw in AD_FRAMEWORKS:
        mine = [r for _, r in rows.iterrows() if r["framework"] == fw]
        found += [noise.compare(a, b, margins) for a, b in itertools.combinations(mine, 2)]
    return found


def facts(df: pd.DataFrame, margins: noise.Margins | None = None) -> Facts:
    """Chapter 5's facts from the rows (the machine's bandwidth from their metadata), its
    comparisons ranked with the dataset's margins (report.dataset.margins; none given:
    unmeasured)."""
    margins = noise.measure(df) if margins is None else margins
    numpy_reads = reads(df, "gbm")
    own = {
        (fw, n): s for fw in FRAMEWORKS if fw != "numpy" for n, s in reads(df, "gbm", fw).items()
    }
    probe = (df.attrs.get("meta") or {}).get("read_bandwidth") or {}
    read = queries.one(
        _ok(df, problem="gbm", target="limit", framework="numpy", strategy=READ, paths=TABLE_N)
    )
    # A path's normals in bytes: M float32 values (queries.BASE's dtype); N of them at N.
    path_bytes = None if read is None else int(read["steps"]) * 4
    shares, blocked_n = _blocked_share(df)
    return Facts(
        reads=numpy_reads,
        own_reads=own,
        bandwidth=probe.get("gb_per_s"),
        bandwidth_read=path_bytes and path_bytes * TABLE_N / numpy_reads[TABLE_N] / 1e9,
        dispatch=dispatch(df, "gbm", 1000),
        best=tuple(_best(df, numpy_reads)),
        steps=tuple(_steps(df, numpy_reads, TABLE_N)),
        held=tuple(_steps(df, numpy_reads, HELD_N)),
        normals_held=path_bytes and path_bytes * HELD_N,
        drawn=tuple(_drawn(df)),
        blocked_draw_share=shares,
        blocked_n=blocked_n,
        philox=_philox(df),
        asian=_asian(df),
        moments_read=reads(df, "moments"),
        moments_dispatch=dispatch(df, "moments", 100_000),
        comparisons=tuple(_comparisons(df, margins)),
    )
