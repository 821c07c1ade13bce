"""The book's picks: per Jacobian shape, regime and framework, the winner for one call and for
repeated calls, by the one rule of ``margins``. Every chapter that names a winner reads them
from here, computed once from the same rows, so no two pages can disagree.

Candidates are the registry's (the question's programs left out), float32 under glibc's malloc
as it comes, so compiled and eager forms are compared under one allocator setting. Regimes: the
tall N x 2 Jacobian at the first question's N, at the largest N where a strategy holding the
normals ran, and at the largest N (forms that hold no M x N array: blocked, or drawing their
own normals); the wide 3 x n Jacobian and the Hessians at the second question's n and at the
largest n. The tall Jacobian's candidates are those of every form of the simulation (the
book's answer), or of the whole-array form only (the GBM chapter's comparison).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.report import machines, queries
from jacbench.report import margins as noise
from jacbench.strategies import registry

TALL, WIDE, HESSIAN = "tall", "wide", "hessian"
SHAPES = (TALL, WIDE, HESSIAN)
# The questions' sizes: N paths of the first, n inputs of the second.
QUESTION_N = 10_000
QUESTION_INPUTS = 100_000
QUESTION, IN_MEMORY, BLOCKED, LARGEST = "question", "in-memory", "blocked", "largest"


@dataclass(frozen=True)
class Entry:
    """A candidate's row at a pick's size, as numbers."""

    name: str
    warm_s: float
    cold_s: float
    peak: float  # bytes, the whole process
    beyond_inputs: float  # bytes
    ratio: float | None  # time over its own simulation, side by side (tall only)


@dataclass(frozen=True)
class Pick:
    """One framework's winners for one shape at one size."""

    shape: str
    regime: str
    size: int
    framework: str
    repeated: tuple[str, ...]  # the fastest warm and every candidate it does not beat
    one_call: tuple[str, ...]  # the same by first call, compilation included
    # The first call from which one of the repeated-call winners has taken less time in all
    # than the one-call winner (one_call[0]); None where they share a strategy, or never.
    overtakes_at: int | None
    entries: Mapping[str, Entry]
    comparisons: tuple[noise.Comparison, ...]  # each winner against every other candidate
    # How far the quotient of two strategies' first calls, and of their warm calls, moved
    # between sessions in this framework (1: one session): what bounds a break-even.
    cold_margin: float = 1.0
    warm_margin: float = 1.0

    @property
    def clear(self) -> bool:
        """Whether one strategy wins repeated calls alone."""
        return len(self.repeated) == 1

    @property
    def same(self) -> bool:
        """Whether the repeated-call winner is also among the one-call winners."""
        return self.repeated[0] in self.one_call

    def entry(self, name: str) -> Entry:
        return self.entries[name]

    @property
    def first_to_catch_up(self) -> str | None:
        """The repeated-call winner that overtakes the one-call winner first (at overtakes_at),
        None where none does."""
        if not self.one_call:
            return None
        found = {n: overtakes(self.entry(self.one_call[0]), self.entry(n)) for n in self.repeated}
        return min((n for n, k in found.items() if k is not None), key=found.get, default=None)

    def overtakes_between(self, first: str, then: str) -> tuple[int | None, int | None]:
        """The call from which then has taken less in all than first, earliest and latest, with
        the quotients of their first and warm calls moved by the margins in then's favour and
        against it (overtakes_within)."""
        return overtakes_within(
            self.entry(first), self.entry(then), self.cold_margin, self.warm_margin
        )

    @property
    def overtakes_range(self) -> tuple[int | None, int | None] | None:
        """overtakes_between for overtakes_at's pair; None where overtakes_at is None."""
        then = self.first_to_catch_up
        if self.overtakes_at is None or then is None:
            return None
        return self.overtakes_between(self.one_call[0], then)


def candidates(df: pd.DataFrame, form: str | None = None) -> pd.DataFrame:
    """Every candidate row of the three shapes in the AD frameworks, with its shape and its
    growing size (Hessians: the dense matrix or products Hv; the exact diagonal by one product
    holds for separable functions only, so it is no general pick). The tall Jacobian's of
    every form of the simulation, or of one (registry.FORMS)."""
    tall = queries.gbm(df, form=form).assign(shape=TALL, size=lambda d: d["paths"])
    wide = queries.wide(df, target="strategy").assign(shape=WIDE, size=lambda d: d["inputs"])
    hessian = queries.second_order(df, "moments", kind=("dense", "hvp"))
    hessian = hessian.assign(shape=HESSIAN, size=lambda d: d["inputs"])
    found = pd.concat([tall, wide, hessian])
    found = queries.candidates(found[found["framework"].isin(AD_FRAMEWORKS)])
    return found.assign(name=[queries.short_name(r) for _, r in found.iterrows()])


def _ok(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[(rows["status"] == "ok").fillna(False).astype(bool)]


def regimes(rows: pd.DataFrame, shape: str) -> list[tuple[str, int]]:
    """The (regime, size) pairs at which a framework's candidates of one shape are picked, each
    size once, in order of size."""
    ok = _ok(rows)
    if ok.empty:
        return []
    top = int(ok["size"].max())
    found = []
    if shape == TALL:
        if (ok["size"] == QUESTION_N).any():
            found.append((QUESTION, QUESTION_N))
        # Blocked, or drawing its own normals inside the loop: no (M, N) array held.
        streams = [
            (r := registry.get(fw, s)).blocked or r.drawn
            for fw, s in zip(ok["framework"], ok["strategy"], strict=True)
        ]
        unblocked = ok[~pd.Series(streams, index=ok.index, dtype=bool)]
        if len(unblocked):
            found.append((IN_MEMORY, int(unblocked["size"].max())))
        found.append((BLOCKED, top))
    else:
        if (ok["size"] == QUESTION_INPUTS).any():
            found.append((QUESTION, QUESTION_INPUTS))
        found.append((LARGEST, top))
    out, seen = [], set()
    for regime, n in found:
        if n not in seen:
            seen.add(n)
            out.append((regime, n))
    return out


def _entry(row: pd.Series) -> Entry:
    ratio = row["ratio_median"] if "ratio_median" in row and pd.notna(row["ratio_median"]) else None
    return Entry(
        str(row["name"]),
        float(row["warm_median_s"]),
        float(row["cold_s"]),
        float(row["peak"]),
        float(row["peak_over_inputs"]),
        None if ratio is None else float(ratio),
    )


def overtakes(first: Entry, then: Entry) -> int | None:
    """The first call n at which n calls of `then` (compiled, say) take less in all than n calls
    of `first`: then.cold + (n-1) then.warm < first.cold + (n-1) first.warm; None where then's
    warm call is no faster; 1 where its first call already is."""
    if then.cold_s < first.cold_s:
        return 1
    if then.warm_s >= first.warm_s:
        return None
    n = 1 + (then.cold_s - first.cold_s) / (first.warm_s - then.warm_s)
    return int(n) + 1


def overtakes_within(
    first: Entry, then: Entry, cold: float, warm: float
) -> tuple[int | None, int | None]:
    """overtakes(first, then) at its earliest and latest where the quotient of their first
    calls may be off by a factor cold and that of their warm calls by warm (the margins): then's
    times divided by them, then multiplied; a latest of None: within the margins then's warm
    call may be no faster, and it may never overtake."""

    def moved(by_cold: float, by_warm: float) -> Entry:
        return replace(then, cold_s=then.cold_s * by_cold, warm_s=then.warm_s * by_warm)

    return overtakes(first, moved(1 / cold, 1 / warm)), overtakes(first, moved(cold, warm))


def pick(rows: pd.DataFrame, shape: str, regime: str, size: int, margins: noise.Margins) -> Pick:
    """The pick among one framework's candidate rows of one shape at one size."""
    there = _ok(rows[rows["size"] == size])
    repeated = noise.group(there, margins)
    one_call = noise.group(there, margins, "cold")
    entries = {str(r["name"]): _entry(r) for _, r in there.iterrows()}
    comparisons = []
    for winners, wanted in ((repeated, "repeated"), (one_call, "cold")):
        if winners:
            first = winners[0]
            for _, r in there.iterrows():
                if r["name"] != first["name"]:
                    comparisons.append(noise.compare(first, r, margins, wanted))
    names = [tuple(str(r["name"]) for r in g) for g in (repeated, one_call)]
    after = None
    if names[0] and names[1] and not set(names[0]) & set(names[1]):
        # The repeated-call winners tie: the first of them to catch up with the one-call
        # winner says when repeated calls start to pay.
        found = [overtakes(entries[names[1][0]], entries[n]) for n in names[0]]
        after = min((n for n in found if n is not None), default=None)
    fw = str(there["framework"].iloc[0]) if len(there) else ""
    return Pick(
        shape,
        regime,
        size,
        fw,
        names[0],
        names[1],
        after,
        entries,
        tuple(comparisons),
        margins.of("cold", fw) if fw else 1.0,
        margins.of("warm", fw) if fw else 1.0,
    )


@dataclass(frozen=True)
class Picks:
    """Every pick of the book, and the margins they were made with."""

    margins: noise.Margins
    all: tuple[Pick, ...]

    def get(self, shape: str, framework: str, regime: str) -> Pick | None:
        for p in self.all:
            if (p.shape, p.framework, p.regime) == (shape, framework, regime):
                return p
        return None

    def at(self, shape: str, framework: str, size: int) -> Pick | None:
        for p in self.all:
            if (p.shape, p.framework, p.size) == (shape, framework, size):
                return p
        return None

    def of(self, shape: str, regime: str) -> dict[str, Pick]:
        """The picks of every framework for one shape and regime."""
        return {p.framework: p for p in self.all if (p.shape, p.regime) == (shape, regime)}


def compute(
    df: pd.DataFrame, margins: noise.Margins | None = None, form: str | None = None
) -> Picks:
    """The picks from the dataset's rows, ranked with its margins (report.dataset.margins; none
    given: every margin unmeasured, as for rows no other session measured again): the tall
    Jacobian's among every form of the simulation (the book's answer), or among one (the GBM
    chapter compares the whole-array form, the question's, with itself). MixedMachines (one
    line naming them) where the rows come from two machines."""
    machines.one_machine(df, "a pick")
    margins = noise.measure(df) if margins is None else margins
    cands = candidates(df, form)
    found = []
    for fw in AD_FRAMEWORKS:
        for shape in SHAPES:
            rows = cands[(cands["framework"] == fw) & (cands["shape"] == shape)]
            for regime, n in regimes(rows, shape):
                found.append(pick(rows, shape, regime, n, margins))
    return Picks(margins, tuple(p for p in found if p.repeated))
