"""The wide 3 x n Jacobian of the second question, measured: every strategy at its n, the book's
picks there and at the largest n, the loop of gradients against its vectorized forms, the
question's two solutions and its third answer's hand-written derivative."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORKS
from jacbench.problems import moments
from jacbench.report import margins as noise
from jacbench.report import queries
from jacbench.report.chapters.wide.crossover import Crossover, crossover
from jacbench.report.chapters.wide.products import Diagonals, Products, diagonals, products
from jacbench.report.chapters.wide.second import Greeks, Hessians, greeks, hessians
from jacbench.report.picks import LARGEST, QUESTION, QUESTION_INPUTS, WIDE, Pick, Picks
from jacbench.strategies import registry

MOMENTS = "moments"
# The question's solutions, by their registry roles: 1, a loop of torch.autograd.grad with
# create_graph=True (and the same loop without it, the answer: the wide Jacobian's); 2,
# X.repeat(3, 1) and one backward with the identity.
LOOP = registry.answer("torch", "wide").name
FUNCTIONAL_LOOP = "functional-loop"
CREATE_GRAPH = registry.question_role("torch", "solution-1").name
SOLUTION_2 = registry.question_role("torch", "solution-2").name
CLOSED_FORM = ("numpy", "analytic")
# The third answer's derivative written by hand, as it wrote it: PyTorch code, no autodiff.
BY_HAND = ("torch", "analytic")
# TensorFlow's default tape.jacobian called eagerly, its loop without pfor, and it inside one
# tf.function.
TF_EAGER, TF_LOOP, TF_FUNCTION = (
    "tape-jacobian-pfor",
    "tape-jacobian-loop",
    "tape-jacobian-function",
)
# What the question and its third answer reported, as they wrote it (seconds).
REPORTED = {
    "gpu_solution_1": 2e-3,  # the question, on a GPU
    "gpu_solution_2": 1e-3,
    "cpu_solution_2": 11.7e-3,  # the third answer, IPython's %timeit on its CPU
    "cpu_by_hand": 539e-6,  # torch.stack((2*X, 3*X.pow(2), 4*X.pow(3)), 1)
}
# A warm call that takes at least this share of its first call "costs nearly as much".
NEARLY = 0.5


@dataclass(frozen=True)
class Case:
    """One strategy's row at one size, as numbers: times in seconds, memory in bytes; a case
    that did not run has its status, the memory model's prediction and its cap."""

    framework: str
    name: str
    size: int
    status: str
    warm_s: float | None
    cold_s: float | None
    beyond_inputs: float | None
    predicted: float | None
    cap: float | None
    error: float | None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def case(row: pd.Series | None) -> Case | None:
    """A row as a Case (None stays None)."""
    if row is None:
        return None
    size = row["inputs"] if row["problem"] != "gbm" else row["paths"]
    columns = ("warm_median_s", "cold_s", "peak_over_inputs", "predicted_peak", "mem_cap")
    numbers = [queries.number(row, c) for c in (*columns, "max_rel_error")]
    return Case(
        str(row["framework"]), queries.short_name(row), int(size), str(row["status"]), *numbers
    )


def ok_row(rows: pd.DataFrame, **conditions) -> pd.Series | None:
    """The first correct row that meets the conditions, or None."""
    return queries.one(rows, status="ok", **conditions)


def compare(
    a: pd.Series | None, b: pd.Series | None, margins: noise.Margins, wanted: str = "repeated"
) -> noise.Comparison | None:
    """margins.compare where both rows ran correctly, else None."""
    if a is None or b is None or a["status"] != "ok" or b["status"] != "ok":
        return None
    return noise.compare(a, b, margins, wanted)


def listed() -> list[tuple[str, str]]:
    """Every (framework, strategy) of the moments problem in the registry's order: PyTorch,
    TensorFlow, JAX, then numpy's closed form."""
    return [(s.framework, s.name) for fw in FRAMEWORKS for s in registry.by_framework(fw, MOMENTS)]


def vectorized(framework: str = "torch") -> tuple[str, ...]:
    """The framework's vectorized reverse-mode candidates of the moments problem, in the
    registry's order (PyTorch: functional-vectorized, batched-backward, jacrev)."""
    return tuple(
        s.name
        for s in registry.by_framework(framework, MOMENTS)
        if s.mode == "reverse" and s.batching == "vectorized" and s.candidate
    )


@dataclass(frozen=True)
class Facts:
    """What chapter 6 says, as numbers, names, picks and comparisons."""

    n: int
    cases: Mapping[tuple[str, str], Case]  # at n, every listed strategy that has a row
    picks: Mapping[tuple[str, str], Pick]  # (framework, regime): the wide picks
    hessian_picks: Mapping[tuple[str, str], Pick]
    loop_against: Mapping[str, noise.Comparison]  # PyTorch's loop against each candidate at n
    loop_first_call: Mapping[str, noise.Comparison]  # the same, by first calls
    create_graph: noise.Comparison | None  # the loop with create_graph=True against without
    by_hand: noise.Comparison | None  # the answer's torch.stack by hand against solution 2, at n
    tf_loop_first_call: noise.Comparison | None  # TF's eager loop against tf.function, first calls
    tf_function: noise.Comparison | None  # tape.jacobian inside tf.function against eager
    jacfwd_largest: Mapping[str, Case]  # per framework, jacfwd at the largest n it ran
    hessians: Hessians
    products: Products
    diagonals: Diagonals
    greeks: Greeks
    crossover: Crossover

    def at(self, framework: str, name: str) -> Case | None:
        return self.cases.get((framework, name))

    def pick(self, framework: str, regime: str = QUESTION) -> Pick | None:
        return self.picks.get((framework, regime))

    @property
    def largest(self) -> int | None:
        """The largest n at which the wide Jacobian was picked (None: only the question's)."""
        found = [p.size for (_, regime), p in self.picks.items() if regime == LARGEST]
        return max(found, default=None)

    @property
    def dense_bytes(self) -> float:
        """One output's dense Hessian at n, in float32: as large as jacfwd's n x n basis."""
        return float(moments.dense_hessian_bytes(self.n, "float32", outputs=1))

    @property
    def reported_by_hand(self) -> float:
        """How many times faster the third answer found its hand-written derivative."""
        return REPORTED["cpu_solution_2"] / REPORTED["cpu_by_hand"]

    def loop_beats(self, names: tuple[str, ...], first_call: bool = False) -> bool:
        """Whether PyTorch's loop is ranked faster than every named strategy at n."""
        found = self.loop_first_call if first_call else self.loop_against
        return all((c := found.get(name)) is not None and c.winner() == LOOP for name in names)

    @property
    def loop_ties_functional(self) -> bool:
        """Whether the loop and functional.jacobian's loop are not ranked at n, both being
        under a millisecond."""
        c = self.loop_against.get(FUNCTIONAL_LOOP)
        return bool(c and c.tied and c.overhead)

    @property
    def tf_retraces(self) -> bool:
        """Whether eager tape.jacobian's warm call costs nearly as much as its first: its first
        call does not rank behind it by more than 1 / NEARLY (one call each, no floor)."""
        c = self.at("tensorflow", TF_EAGER)
        if not (c and c.ok):
            return False
        warm, first = noise.Spread.point(c.warm_s), noise.Spread.point(c.cold_s)
        return not noise.ranks(warm, first, 1 / NEARLY, floor=0.0)

    @property
    def jacfwd_skipped(self) -> bool:
        """Whether jacfwd was not started at n in PyTorch and JAX, on the memory model's
        prediction."""
        found = [self.at(fw, "jacfwd") for fw in ("torch", "jax")]
        return all(c is not None and c.status == "skipped-predicted" for c in found)


def _rows(df: pd.DataFrame, n: int) -> pd.DataFrame:
    return queries.wide(df, inputs=n, target="strategy")


def _picks(book: Picks, shape: str) -> dict[tuple[str, str], Pick]:
    return {
        (fw, regime): p
        for regime in (QUESTION, LARGEST)
        for fw, p in book.of(shape, regime).items()
    }


def facts(
    df: pd.DataFrame, book: Picks, shapes: list[dict] | None = None, n: int = QUESTION_INPUTS
) -> Facts:
    """Chapter 6's facts from the rows, the book's picks and the crossover rows (shapes)."""
    rows = _rows(df, n)
    found = {}
    for fw, name in listed():
        c = case(queries.one(rows, framework=fw, strategy=name))
        if c is not None:
            found[(fw, name)] = c
    margins = book.margins
    torch = rows[rows["framework"] == "torch"]
    loop = ok_row(torch, strategy=LOOP)
    others = [r for _, r in queries.candidates(torch).iterrows() if r["strategy"] != LOOP]
    against = {r["strategy"]: compare(loop, r, margins) for r in others}
    first = {r["strategy"]: compare(loop, r, margins, "cold") for r in others}
    tf = rows[rows["framework"] == "tensorflow"]
    largest_fwd = {}
    for fw in AD_FRAMEWORKS:
        c = case(queries.largest_ok(df, fw, "jacfwd", problem=MOMENTS))
        if c is not None:
            largest_fwd[fw] = c
    return Facts(
        n=n,
        cases=found,
        picks=_picks(book, WIDE),
        hessian_picks=_picks(book, "hessian"),
        loop_against={k: v for k, v in against.items() if v is not None},
        loop_first_call={k: v for k, v in first.items() if v is not None},
        create_graph=compare(loop, ok_row(torch, strategy=CREATE_GRAPH), margins),
        by_hand=compare(
            ok_row(rows, framework=BY_HAND[0], strategy=BY_HAND[1]),
            ok_row(torch, strategy=SOLUTION_2),
            margins,
        ),
        tf_loop_first_call=compare(
            ok_row(tf, strategy=TF_LOOP), ok_row(tf, strategy=TF_FUNCTION), margins, "cold"
        ),
        tf_function=compare(
            ok_row(tf, strategy=TF_FUNCTION), ok_row(tf, strategy=TF_EAGER), margins
        ),
        jacfwd_largest=largest_fwd,
        hessians=hessians(df, margins, n),
        products=products(df, margins),
        diagonals=diagonals(df, margins),
        greeks=greeks(df, margins),
        crossover=crossover(shapes or [], margins),
    )
