"""Chapter 3's facts: what vectorized reverse mode holds in memory and how that grew, the
terminal-only forms beside the path forms, what each way of batching did at the question's N,
and each loop of VJPs against the strategy that vectorizes it, ranked by the book's one rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.problems.gbm import GBMParams
from jacbench.report import margins as noise
from jacbench.report import queries
from jacbench.report.picks import QUESTION_N
from jacbench.strategies import registry

# TensorFlow's default, GradientTape.jacobian with pfor: the vectorized reverse mode whose
# memory the chapter follows, and whose failure the question met.
PFOR = ("tensorflow", "tape-jacobian-pfor")
# Slopes are fitted from this N up: below it a fixed footprint (the framework's buffers, the
# import) dominates the peak, and a fit through it reads less than the growth.
SLOPE_FROM = 1000
TERMINAL = "-terminal"  # a terminal-only form's suffix: S_T from W_T, no path in the graph
WAYS = ("loop", "vectorized", "chunked", "terminal")  # the question-size table's columns


@dataclass(frozen=True)
class Held:
    """What reverse mode holds for a GBM case of N paths, in bytes: one path array (the size
    of one cotangent), N of them (vectorized), a chunk of them (chunked), and the model's
    predicted peak for TensorFlow's pfor."""

    paths: int
    steps: int
    path_array: int
    batch: int
    chunk_size: int
    chunk_batch: int
    pfor_predicted: int
    pfor_model_batches: float  # the memory model's batches of N path arrays for pfor


def held(paths: int = QUESTION_N) -> Held:
    """Held for N paths of the problem's default steps, chunk size and dtype."""
    p = GBMParams(paths=paths)
    chunk = min(p.chunk_size, paths)
    pfor = registry.get(*PFOR)
    predicted = pfor.memory.peak(pfor.framework, paths, p.steps, p.dtype, p.chunk_size)
    return Held(
        paths,
        p.steps,
        p.path_array_bytes,
        paths * p.path_array_bytes,
        chunk,
        chunk * p.path_array_bytes,
        predicted,
        pfor.memory.batch,
    )


@dataclass(frozen=True)
class Run:
    """One strategy at one N as numbers: times in seconds, memory in bytes beyond the inputs
    (None where it did not run correctly); cap and predicted say why one stopped."""

    framework: str
    name: str
    paths: int
    status: str
    warm_s: float | None
    cold_s: float | None
    beyond_inputs: float | None
    predicted: float | None  # the memory model's absolute peak
    cap: float | None

    @property
    def finished(self) -> bool:
        return self.status == "ok"


def run(df: pd.DataFrame, framework: str, name: str, paths: int) -> Run:
    """A strategy's row at N (float32, glibc); status "not measured" where there is none."""
    row = queries.one(queries.gbm(df, framework=framework, strategy=name), paths=paths)
    if row is None:
        return Run(framework, name, paths, "not measured", None, None, None, None, None)
    return Run(
        framework,
        name,
        paths,
        str(row["status"]),
        queries.number(row, "warm_median_s", ok_only=True),
        queries.number(row, "cold_s", ok_only=True),
        queries.number(row, "peak_over_inputs", ok_only=True),
        queries.number(row, "predicted_peak"),
        queries.number(row, "mem_cap"),
    )


def reverse_strategies(framework: str) -> list[str]:
    """A framework's reverse-mode GBM strategies of the whole-array form that are no variant of
    another (nor a build experiment): the question's
    program first, then by batching (loop, vectorized, chunked, single-pass), registry order."""
    rev = [
        s
        for s in registry.by_framework(framework, "gbm")
        if s.mode == "reverse" and not (s.variant_of or s.experiment) and s.form == "array"
    ]
    order = sorted(rev, key=lambda s: (not s.faithful, registry.BATCHINGS.index(s.batching)))
    return [s.name for s in order]


def loop_pairs() -> list[tuple[str, str, str]]:
    """(framework, loop, the strategy that vectorizes it) for every such pair of the registry."""
    return [
        (s.framework, s.vectorizes, s.name)
        for fw in registry.FRAMEWORKS
        for s in registry.by_framework(fw, "gbm")
        if s.vectorizes
    ]


def terminal_pairs() -> list[tuple[str, str, str]]:
    """(framework, terminal-only strategy, the path form it runs without the path)."""
    out = []
    for fw in registry.FRAMEWORKS:
        names = {s.name for s in registry.by_framework(fw, "gbm")}
        for name in sorted(n for n in names if n.endswith(TERMINAL)):
            base = name.removesuffix(TERMINAL)
            twin = next((t for t in (base, f"{base}-pfor") if t in names), None)
            if twin is not None:
                out.append((fw, name, twin))
    return out


def ways(framework: str) -> dict[str, str]:
    """A framework's reverse mode by way of batching, one strategy each: a loop of VJPs and
    the strategy that vectorizes it (the pair with the framework's default call), its chunked
    form and its terminal-only form, where it has them."""
    pairs = [(loop, vec) for fw, loop, vec in loop_pairs() if fw == framework]
    default = [p for p in pairs if any(registry.get(framework, n).default for n in p)]
    found = dict(zip(("loop", "vectorized"), (default or pairs)[0], strict=True)) if pairs else {}
    for s in registry.by_framework(framework, "gbm"):
        if s.mode == "reverse" and s.batching == "chunked" and not s.variant_of:
            found.setdefault("chunked", s.name)
    for fw, term, _ in terminal_pairs():
        if fw == framework:
            found.setdefault("terminal", term)
    return found


@dataclass(frozen=True)
class LoopPair:
    """A loop of VJPs against the strategy that vectorizes it, at one N where both ran."""

    framework: str
    paths: int
    loop: Run
    vectorized: Run
    repeated: noise.Comparison
    one_call: noise.Comparison

    def winner(self, wanted: str = "repeated") -> str | None:
        """ "loop" or "vectorized" where the rule ranks them, for repeated calls or one
        ("cold"); None for a tie."""
        c = self.repeated if wanted == "repeated" else self.one_call
        if not c.ranked:
            return None
        return "vectorized" if c.faster[1] == self.vectorized.name else "loop"

    @property
    def memory_ratio(self) -> float | None:
        """The vectorized form's memory beyond the inputs over the loop's."""
        a, b = self.loop.beyond_inputs, self.vectorized.beyond_inputs
        return b / a if a and b else None


def _loop_pairs(df: pd.DataFrame, margins: noise.Margins) -> list[LoopPair]:
    out = []
    for fw, loop, vec in loop_pairs():
        a = queries.gbm(df, framework=fw, strategy=loop, status="ok")
        b = queries.gbm(df, framework=fw, strategy=vec, status="ok")
        for n in sorted(set(a["paths"]) & set(b["paths"])):
            ra, rb = queries.one(a, paths=n), queries.one(b, paths=n)
            out.append(
                LoopPair(
                    fw,
                    int(n),
                    run(df, fw, loop, int(n)),
                    run(df, fw, vec, int(n)),
                    noise.compare(ra, rb, margins),
                    noise.compare(ra, rb, margins, "cold"),
                )
            )
    return out


@dataclass(frozen=True)
class Terminal:
    """A terminal-only form beside the path form whose vectorized reverse mode it runs, at one
    N where the terminal-only form was measured."""

    framework: str
    paths: int
    terminal: Run
    path: Run

    @property
    def memory_ratio(self) -> float | None:
        """The path form's memory beyond the inputs over the terminal-only form's."""
        a, b = self.terminal.beyond_inputs, self.path.beyond_inputs
        return b / a if a and b else None


def _terminals(df: pd.DataFrame) -> list[Terminal]:
    out = []
    for fw, term, path in terminal_pairs():
        sizes = queries.gbm(df, framework=fw, strategy=term)["paths"]
        for n in sorted({int(n) for n in sizes}):
            out.append(Terminal(fw, n, run(df, fw, term, n), run(df, fw, path, n)))
    return out


@dataclass(frozen=True)
class Facts:
    """What chapter 3 says, as numbers, names, flags and the rule's comparisons."""

    n: int  # the question's N
    held: Held  # at n
    slope: float | None  # log-log slope of pfor's memory against N, from SLOPE_FROM up
    loop_slope: float | None  # the same for the loop pfor vectorizes
    slope_sizes: tuple[int, int] | None  # the first and last N of that fit
    pfor_loop_largest: Run | None  # the loop pfor vectorizes, at its largest N
    pfor_largest: Run | None  # pfor itself at its largest N
    loop_pairs: tuple[LoopPair, ...]  # every N at which a loop and its vectorized form ran
    terminals: tuple[Terminal, ...]
    at_question: Mapping[str, Mapping[str, Run]]  # framework -> way (WAYS) -> run at n
    margins_measured: bool

    def verdicts(self, wanted: str = "repeated") -> dict[str | None, int]:
        """How many loop pairs each side won ("loop", "vectorized") and tied (None)."""
        found: dict[str | None, int] = {"loop": 0, "vectorized": 0, None: 0}
        for p in self.loop_pairs:
            found[p.winner(wanted)] += 1
        return found

    def winners(self, framework: str, wanted: str = "repeated", from_n: int = 0) -> set:
        """The winners ("loop", "vectorized", None for a tie) of a framework's pairs at N of
        from_n and above; empty where none was compared."""
        return {
            p.winner(wanted)
            for p in self.loop_pairs
            if p.framework == framework and p.paths >= from_n
        }

    def always(
        self, framework: str, winner: str | None, from_n: int = 0, wanted: str = "repeated"
    ) -> bool:
        """Whether every pair of a framework from N = from_n up went the same way."""
        return self.winners(framework, wanted, from_n) == {winner}

    @property
    def pfor_batches(self) -> float | None:
        """pfor's measured peak beyond the inputs at its largest N, in batches of N path
        arrays (N x (M+1) x N values)."""
        r = self.pfor_largest
        if r is None or r.beyond_inputs is None:
            return None
        return r.beyond_inputs / (r.paths * GBMParams(paths=r.paths).path_array_bytes)

    @property
    def grows_quadratically(self) -> bool:
        """Whether pfor's memory grew about as N squared (a fitted slope of 1.8 or more)."""
        return self.slope is not None and self.slope >= 1.8

    def terminal_smaller(self, paths: int) -> bool:
        """Whether at N every terminal-only form held less than its path form, all three
        frameworks having run both."""
        at = [t for t in self.terminals if t.paths == paths and t.memory_ratio is not None]
        return len(at) == len(AD_FRAMEWORKS) and all(t.memory_ratio > 1 for t in at)

    @property
    def terminal_gap_grows(self) -> bool:
        """Whether, in every framework, the path form held more than the terminal-only form
        at every N where both ran, and more so at each larger N."""
        for fw in AD_FRAMEWORKS:
            ratios = [t.memory_ratio for t in self.terminals if t.framework == fw]
            ratios = [r for r in ratios if r is not None]
            if not ratios or min(ratios) <= 1 or ratios != sorted(ratios):
                return False
        return True

    @property
    def both_ran_largest(self) -> int | None:
        """The largest N at which some terminal-only form and its path form both ran."""
        sizes = [t.paths for t in self.terminals if t.memory_ratio is not None]
        return max(sizes) if sizes else None

    def ran_at_question(self, way: str) -> list[str]:
        """The frameworks whose strategy of one way of batching ran correctly at n."""
        return [fw for fw, runs in self.at_question.items() if way in runs and runs[way].finished]


def _slope(
    df: pd.DataFrame, strategy: str = PFOR[1]
) -> tuple[float | None, tuple[int, int] | None]:
    ok = queries.gbm(df, framework=PFOR[0], strategy=strategy, status="ok")
    ok = ok[ok["paths"] >= SLOPE_FROM]
    slope = queries.loglog_slope(ok["paths"], ok["peak_over_inputs"])
    sizes = sorted({int(n) for n in ok["paths"]})
    return slope, ((sizes[0], sizes[-1]) if slope is not None else None)


def facts(df: pd.DataFrame, margins: noise.Margins | None = None, n: int = QUESTION_N) -> Facts:
    """Chapter 3's facts from the rows, ranked with the dataset's margins
    (report.dataset.margins; none given: unmeasured)."""
    margins = noise.measure(df) if margins is None else margins
    slope, sizes = _slope(df)
    loop = registry.get(*PFOR).vectorizes
    largest = queries.largest_ok(df, PFOR[0], loop)
    pfor_largest = queries.largest_ok(df, *PFOR)
    at_question = {
        fw: {way: run(df, fw, name, n) for way, name in ways(fw).items()} for fw in AD_FRAMEWORKS
    }
    return Facts(
        n=n,
        held=held(n),
        slope=slope,
        loop_slope=_slope(df, loop)[0],
        slope_sizes=sizes,
        pfor_loop_largest=None
        if largest is None
        else run(df, PFOR[0], loop, int(largest["paths"])),
        pfor_largest=None if pfor_largest is None else run(df, *PFOR, int(pfor_largest["paths"])),
        loop_pairs=tuple(_loop_pairs(df, margins)),
        terminals=tuple(_terminals(df)),
        at_question=at_question,
        margins_measured=margins.measured,
    )
