"""Chapter 7, what to use: the book's picks (report.picks) read by the rule of the shapes, the
picks under a memory budget, and the one-argument fix's place among them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from jacbench.constants import GIB
from jacbench.report import margins as noise
from jacbench.report import picks as book
from jacbench.report.chapters.recommend import bends
from jacbench.report.picks import BLOCKED, HESSIAN, IN_MEMORY, LARGEST, QUESTION, TALL, WIDE
from jacbench.second import registry as second
from jacbench.strategies import registry

# The question's PyTorch call with one argument more (chapter 1 measures it).
FIX = registry.question_role("torch", "fix").name
# The regimes of each shape, in the order the tables show them.
REGIMES = {
    TALL: (QUESTION, IN_MEMORY, BLOCKED),
    WIDE: (QUESTION, LARGEST),
    HESSIAN: (QUESTION, LARGEST),
}


def compiled(framework: str, name: str) -> bool:
    """Whether a Jacobian strategy runs compiled (torch.compile, tf.function, XLA, jax.jit)."""
    return registry.get(framework, name).compiled


def pathwise(framework: str, name: str) -> bool:
    """Whether a strategy is a pathwise gradient: one reverse pass of the summed paths, of
    either form, compiled, blocked, or recomputing the loop's states."""
    s = registry.get(framework, name)
    return s.mode == "reverse" and s.batching == "single-pass"


def drawn(framework: str, name: str) -> bool:
    """Whether a strategy draws its own normals inside the loop (catalog.DRAWN)."""
    return registry.get(framework, name).drawn


def holds_normals(framework: str, name: str) -> bool:
    """Whether a strategy holds every path's normals: neither blocked nor drawing its own."""
    s = registry.get(framework, name)
    return not (s.blocked or s.drawn)


def follows_rule(shape: str, framework: str, name: str) -> bool:
    """Whether a strategy is what the rule of its shape says: forward mode or the pathwise
    gradient (tall), reverse mode (wide), Hessian-vector products (Hessians)."""
    if shape == HESSIAN:
        return second.get(framework, name).kind == "hvp"
    s = registry.get(framework, name)
    if shape == WIDE:
        return s.mode == "reverse"
    return s.mode == "forward" or pathwise(framework, name)


@dataclass(frozen=True)
class Budgeted:
    """The repeated-call winners at one pick's size among the candidates whose peak, the whole
    process's, fits in a budget; smallest: the smallest peak of any that ran (bytes)."""

    framework: str
    budget: float  # bytes
    winners: tuple[str, ...]
    peaks: Mapping[str, float]
    smallest: float | None

    @property
    def fits(self) -> bool:
        return bool(self.winners)


@dataclass(frozen=True)
class Facts:
    """What chapter 7 says, as picks, flags and numbers."""

    picks: book.Picks
    budgets: tuple[float, ...]  # bytes
    budgeted: Mapping[tuple[str, str, str], tuple[Budgeted, ...]]  # (shape, regime, fw)
    finite: bends.FiniteDifferences | None
    precision: tuple[bends.Precision, ...]
    faults: bends.Faults | None
    dense: bends.DenseLimit | None
    allocators: tuple[str, ...]  # of every candidate row the picks read

    def pick(self, shape: str, regime: str, framework: str) -> book.Pick | None:
        return self.picks.get(shape, framework, regime)

    def size(self, shape: str, regime: str) -> int | None:
        """The size of a regime (the same in every framework that ran it)."""
        found = [p.size for p in self.picks.of(shape, regime).values()]
        return found[0] if found else None

    def follows_rule(self, shape: str) -> bool:
        """Whether every winner of a shape, for one call and for repeated calls, at every size
        and in every framework, is what the rule of the shape says (False where none ran)."""
        shown = [p for p in self.picks.all if p.shape == shape]
        return bool(shown) and all(
            follows_rule(shape, p.framework, name)
            for p in shown
            for name in (*p.repeated, *p.one_call)
        )

    def loops_win_later(self, shape: str) -> bool:
        """Whether every repeated-call winner of a shape, at every size and in every framework,
        is written as a loop over the steps (registry.FORMS; False where none ran)."""
        shown = [p for p in self.picks.all if p.shape == shape]
        return bool(shown) and all(
            registry.get(p.framework, n).form == "steps" for p in shown for n in p.repeated
        )

    def compiled_wins_later(self, shape: str, regime: str, framework: str) -> bool:
        """Whether the repeated-call winners are all compiled and the fastest first call is
        not, so that the compiled form overtakes from some call on."""
        p = self.pick(shape, regime, framework)
        return bool(
            p
            and all(compiled(framework, n) for n in p.repeated)
            and not compiled(framework, p.one_call[0])
            and p.overtakes_at
        )

    def ties(self, shape: str, regime: str, framework: str, *names: str) -> bool:
        """Whether the named strategies are all among the repeated-call and the one-call
        winners."""
        p = self.pick(shape, regime, framework)
        return bool(p and set(names) <= set(p.repeated) & set(p.one_call))

    def alone(self, shape: str, regime: str, framework: str, name: str | None = None) -> bool:
        """Whether one strategy (the named one, where given) wins repeated calls alone."""
        p = self.pick(shape, regime, framework)
        return bool(p and p.clear and (name is None or p.repeated == (name,)))

    def tied(self, shape: str, regime: str, framework: str) -> bool:
        """Whether two or more strategies tie for repeated calls."""
        p = self.pick(shape, regime, framework)
        return bool(p and not p.clear)

    def overhead(self, shape: str, regime: str, framework: str) -> bool:
        """Whether every repeated-call winner's later calls take under the floor below which
        the book ranks nothing."""
        p = self.pick(shape, regime, framework)
        return bool(p and all(p.entry(n).warm_s < noise.FLOOR_S for n in p.repeated))

    def overtakes_at(self, shape: str, regime: str, framework: str) -> int | None:
        """From which call the repeated-call winner is ahead of the one-call winner in total."""
        p = self.pick(shape, regime, framework)
        return p.overtakes_at if p else None

    def overtakes_range(
        self, shape: str, regime: str, framework: str
    ) -> tuple[int | None, int | None] | None:
        """overtakes_at's earliest and latest call within the margins (Pick.overtakes_range)."""
        p = self.pick(shape, regime, framework)
        return p.overtakes_range if p else None

    def only(self, shape: str, framework: str) -> bool:
        """Whether a single candidate of a shape ran in a framework, at every size picked (so
        that it wins by default)."""
        shown = [p for p in self.picks.all if (p.shape, p.framework) == (shape, framework)]
        return bool(shown) and all(len(p.entries) == 1 for p in shown)

    def only_products(self, framework: str) -> bool:
        """Whether every Hessian candidate that ran in a framework, at every size picked, is a
        Hessian-vector product (no dense Hessian among them)."""
        shown = [p for p in self.picks.all if (p.shape, p.framework) == (HESSIAN, framework)]
        return bool(shown) and all(
            follows_rule(HESSIAN, framework, name) for p in shown for name in p.entries
        )

    def forward_beats_pathwise(self, regime: str, framework: str) -> bool:
        """Whether forward mode alone wins a tall pick's repeated calls, the pathwise gradient
        among the candidates there."""
        p = self.pick(TALL, regime, framework)
        if p is None:
            return False
        ran = any(pathwise(framework, n) for n in p.entries)
        forward = all(registry.get(framework, n).mode == "forward" for n in p.repeated)
        return ran and forward

    def blocked_within(self, regime: str) -> bool:
        """Whether, within the smallest budget, every framework's tall winners at a regime hold
        no normals of every path: blocked, or drawing their own (False where none fits)."""
        found = [b[0] for (s, r, _), b in self.budgeted.items() if (s, r) == (TALL, regime) and b]
        return bool(found) and all(
            b.fits and not any(holds_normals(b.framework, n) for n in b.winners) for b in found
        )

    @property
    def fix_is_picked(self) -> bool | None:
        """Whether the one-argument fix is among PyTorch's winners at the question's N, for one
        call or repeated calls (None: no pick there)."""
        p = self.pick(TALL, QUESTION, "torch")
        if p is None:
            return None
        return FIX in p.repeated or FIX in p.one_call

    @property
    def fix_measured(self) -> bool:
        p = self.pick(TALL, QUESTION, "torch")
        return bool(p and FIX in p.entries)


def _ok(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[(rows["status"] == "ok").fillna(False).astype(bool)]


def budgeted(cands: pd.DataFrame, p: book.Pick, budgets: tuple[float, ...], margins) -> tuple:
    """The repeated-call winners by the book's rule among one pick's candidates whose peak fits
    in each budget (book.pick on the rows that fit)."""
    rows = _ok(cands[(cands["framework"] == p.framework) & (cands["shape"] == p.shape)])
    rows = rows[rows["size"] == p.size]
    smallest = float(rows["peak"].min()) if rows["peak"].notna().any() else None
    found = []
    for budget in budgets:
        fit = rows[(rows["peak"] <= budget).fillna(False).astype(bool)]
        winners = book.pick(fit, p.shape, p.regime, p.size, margins).repeated if len(fit) else ()
        peaks = {n: p.entries[n].peak for n in winners}
        found.append(Budgeted(p.framework, budget, winners, peaks, smallest))
    return tuple(found)


def facts(df: pd.DataFrame, picks: book.Picks, budgets_gib=(1.0, 4.0)) -> Facts:
    """Chapter 7's facts from the rows and the book's picks; budgets in GiB."""
    budgets = tuple(float(b) * GIB for b in budgets_gib)
    cands = book.candidates(df)
    within = {
        (p.shape, p.regime, p.framework): budgeted(cands, p, budgets, picks.margins)
        for p in picks.all
    }
    return Facts(
        picks=picks,
        budgets=budgets,
        budgeted=within,
        finite=bends.finite_differences(df, picks),
        precision=bends.precision(df, picks.margins),
        faults=bends.faults(df),
        dense=bends.dense_limit(df),
        allocators=tuple(sorted(set(cands["allocator"].dropna()))),
    )
