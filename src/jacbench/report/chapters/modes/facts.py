"""Chapter 2's facts: the teaching example against the closed form, and each framework's forward
mode against its vectorized reverse mode at one N, ranked by the book's one rule (margins)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jacbench.report import margins as noise
from jacbench.report import queries
from jacbench.teaching import jacobian as example

FOCUS_N = 1_000  # the N at which the two modes are set side by side
TEACH_PATHS = 4  # the paths of the one-step example
# Each framework's forward mode (two JVPs; TensorFlow has no jacfwd, so a ForwardAccumulator
# pass per input) and its reverse mode as it comes, vectorized (N VJPs).
PAIRS = {
    "torch": ("jacfwd", "jacrev"),
    "tensorflow": ("forward-accumulator", "tape-jacobian-pfor"),
    "jax": ("jacfwd", "jacrev"),
}
# TensorFlow's forward mode traced into one tf.function: the eager one pays Python per operation.
TF_GRAPH_FORWARD = "forward-accumulator-function"
# The eager tapes whose size the chapter gives in path arrays: each framework's pathwise gradient
# recorded operation by operation, beside its eager simulation.
TAPES = {"torch": "pathwise", "tensorflow": "pathwise"}


@dataclass(frozen=True)
class Tape:
    """An eager pathwise gradient and its simulation at the largest N the gradient ran: the
    memory each held beyond the inputs, in path arrays ((M+1) x N values of the row's dtype)."""

    framework: str
    n: int
    arrays: float | None
    simulation_arrays: float | None


def tape(df: pd.DataFrame, framework: str, name: str) -> Tape | None:
    """A framework's eager tape in path arrays (Tape); None where the gradient never ran."""
    top = queries.largest_ok(df, framework, name)
    if top is None:
        return None
    path = (int(top["steps"]) + 1) * int(top["paths"]) * np.dtype(str(top["dtype"])).itemsize
    sim = queries.simulation_of(df, top)

    def arrays(row):
        held = queries.number(row, "peak_over_inputs")
        return None if held is None else held / path

    return Tape(framework, int(top["paths"]), arrays(top), arrays(sim))


@dataclass(frozen=True)
class Example:
    """The one-step example on `paths` paths: the passes each mode made and the largest relative
    error of each against the closed form; the tape of one backward pass."""

    paths: int
    forward_passes: int
    reverse_passes: int
    pathwise_passes: int
    forward_error: float
    reverse_error: float
    pathwise_error: float
    tape_entries: int
    tape_bytes: int

    @property
    def error(self) -> float:
        """The largest error of the three."""
        return max(self.forward_error, self.reverse_error, self.pathwise_error)


def teaching(paths: int = TEACH_PATHS, seed: int = example.SEED) -> Example:
    """The example's facts, computed by running it."""
    z = example.normals(paths, seed)
    exact = example.exact(z)
    t = example.recorded(z)
    return Example(
        paths=paths,
        forward_passes=exact.shape[1],  # one per input
        reverse_passes=exact.shape[0],  # one per output
        pathwise_passes=1,
        forward_error=example.relative_error(example.forward(z), exact),
        reverse_error=example.relative_error(example.reverse(z), exact),
        pathwise_error=example.relative_error(example.pathwise(z), exact),
        tape_entries=len(t.entries),
        tape_bytes=t.stored_bytes(),
    )


@dataclass(frozen=True)
class Run:
    """One strategy's row at N, as numbers (None where it did not run correctly)."""

    name: str
    status: str
    warm_s: float | None
    cold_s: float | None
    beyond_inputs: float | None  # bytes

    @property
    def finished(self) -> bool:
        return self.status == "ok"


def _run(row: pd.Series | None, name: str) -> Run:
    if row is None:
        return Run(name, "not measured", None, None, None)
    times = (
        queries.number(row, c, ok_only=True)
        for c in ("warm_median_s", "cold_s", "peak_over_inputs")
    )
    return Run(name, str(row["status"]), *times)


@dataclass(frozen=True)
class Pair:
    """A framework's forward mode against its reverse mode at N, for repeated calls."""

    framework: str
    forward: Run
    reverse: Run
    comparison: noise.Comparison | None  # None unless both ran

    @property
    def forward_wins(self) -> bool:
        c = self.comparison
        return bool(c and c.ranked and c.faster[1] == self.forward.name)

    @property
    def factor(self) -> float | None:
        """How many times longer reverse mode took, by the quantity the rule compared; None
        unless forward mode was the faster."""
        c = self.comparison
        return c.factor if c and c.faster[1] == self.forward.name else None

    @property
    def more_memory(self) -> bool:
        """Whether reverse mode held more memory beyond the inputs than forward mode."""
        a, b = self.forward.beyond_inputs, self.reverse.beyond_inputs
        return bool(a is not None and b is not None and b > a)


def pair(df: pd.DataFrame, margins: noise.Margins, framework: str, n: int) -> Pair:
    """One framework's pair of PAIRS at N."""
    fwd, rev = PAIRS[framework]
    rows = queries.gbm(df, framework=framework, paths=n)
    a, b = queries.one(rows, strategy=fwd), queries.one(rows, strategy=rev)
    both = a is not None and b is not None and (a["status"], b["status"]) == ("ok", "ok")
    return Pair(
        framework, _run(a, fwd), _run(b, rev), noise.compare(a, b, margins) if both else None
    )


@dataclass(frozen=True)
class Facts:
    """What chapter 2 says, as numbers and flags."""

    n: int
    example: Example
    pairs: Mapping[str, Pair]
    tf_graph_forward: Run  # TensorFlow's forward mode in one tf.function, at n
    tf_graph_against_eager: noise.Comparison | None  # it against the eager forward mode
    tapes: Mapping[str, Tape]  # each eager pathwise gradient's memory in path arrays

    @property
    def half_n(self) -> float:
        """Reverse over forward by the count of passes alone: N VJPs over two JVPs."""
        return self.n / 2

    @property
    def compared(self) -> list[Pair]:
        """The pairs where both modes ran."""
        return [p for p in self.pairs.values() if p.comparison is not None]

    @property
    def forward_wins_everywhere(self) -> bool:
        """Whether forward mode won in every framework, all three having been measured."""
        return len(self.compared) == len(PAIRS) and all(p.forward_wins for p in self.compared)

    @property
    def factors(self) -> tuple[float, float] | None:
        """The smallest and largest factor reverse mode took over forward mode where forward
        mode won; None where it won nowhere."""
        found = [p.factor for p in self.compared if p.forward_wins]
        return (min(found), max(found)) if found else None

    def above_half(self, framework: str) -> bool | None:
        """Whether reverse mode took more than N/2 times forward mode's time (None: unknown)."""
        p = self.pairs[framework]
        return None if p.factor is None else p.factor > self.half_n

    @property
    def more_memory_everywhere(self) -> bool:
        return len(self.compared) == len(PAIRS) and all(p.more_memory for p in self.compared)

    @property
    def tf_graph_faster(self) -> bool:
        c = self.tf_graph_against_eager
        return bool(c and c.ranked and c.faster[1] == TF_GRAPH_FORWARD)


def facts(
    df: pd.DataFrame,
    margins: noise.Margins | None = None,
    n: int = FOCUS_N,
    teach_paths: int = TEACH_PATHS,
) -> Facts:
    """Chapter 2's facts from the rows, ranked with the dataset's margins
    (report.dataset.margins; none given: unmeasured)."""
    margins = noise.measure(df) if margins is None else margins
    pairs = {fw: pair(df, margins, fw, n) for fw in PAIRS}
    rows = queries.gbm(df, framework="tensorflow", paths=n)
    graph = queries.one(rows, strategy=TF_GRAPH_FORWARD)
    eager = queries.one(rows, strategy=PAIRS["tensorflow"][0])
    both = graph is not None and eager is not None and graph["status"] == eager["status"] == "ok"
    return Facts(
        n=n,
        example=teaching(teach_paths),
        pairs=pairs,
        tf_graph_forward=_run(graph, TF_GRAPH_FORWARD),
        tf_graph_against_eager=noise.compare(graph, eager, margins) if both else None,
        tapes={fw: t for fw, name in TAPES.items() if (t := tape(df, fw, name))},
    )
