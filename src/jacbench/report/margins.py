"""The book's one noise rule: when two measured times are far enough apart to rank.

Every chapter that names a winner compares through ``compare``, so that no two pages can rank a
pair that a third calls tied. Three quantities are compared, each against its own margin:

- ``ratio``: two strategies timed side by side against the same simulation (same framework,
  execution mode and size), where that simulation takes ``RATIO_FLOOR_S`` or more a call. The
  margin is the furthest one of that framework's side-by-side ratios moved between the
  dataset's session and any other session that measured it again.
- ``warm``: warm medians, each from its own worker processes. The margin is the furthest the
  quotient of two warm medians of that framework at one size moved between sessions.
- ``cold``: first calls (compilation included), one per worker. The margin is measured as for
  warm medians, on first calls.

A pair is ranked only when the slower's quantity exceeds the faster's by more than the margin
and their spreads do not overlap (for warm medians: the slower's fastest call is slower than the
faster's median; for ratios: the two spreads do not meet). Two calls that both take less than
``FLOOR_S`` are never ranked against each other: both measure per-call overhead. One under it
is ranked against one above it by the rule above. Where only one session measured the
data (a reader's own sweep), the noise between sessions is unknown and every margin is
``UNMEASURED``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from jacbench.constants import FRAMEWORKS
from jacbench.report import machines, queries
from jacbench.report.data import OVERHEAD_S

# Below this, a call measures the framework's per-call overhead: never ranked.
FLOOR_S = OVERHEAD_S
# A ratio ranks two strategies only where their simulation takes this long or more: well above
# the floor, as where the sessions measured how far ratios move (simulations of 10 ms and up).
RATIO_FLOOR_S = 10 * FLOOR_S
# Every margin where no second session measured the cases again.
UNMEASURED = 1.15
BASES = ("ratio", "warm", "cold")
# What a row is matched on between two sessions.
SAME_CASE = ("framework", "strategy", "target", "dtype", "allocator")
COLUMN = {"warm": "warm_median_s", "cold": "cold_s", "ratio": "ratio_median"}


def apart(a: float, b: float) -> float:
    """How far apart two positive quantities are, as a factor either way (1 for equal)."""
    return max(a / b, b / a)


@dataclass(frozen=True)
class Spread:
    """One quantity to rank, as plain numbers: its value (a median, a ratio, a prediction), the
    low and high ends of its spread, and the seconds a call took (read against the floor)."""

    value: float
    low: float
    high: float
    seconds: float

    @classmethod
    def point(cls, value: float) -> Spread:
        """A quantity with no spread of its own (a quotient, one call): itself at both ends."""
        return cls(value, value, value, value)


def ranks(faster: Spread, slower: Spread, margin: float, floor: float = FLOOR_S) -> bool:
    """The book's rule on plain numbers: slower ranks behind faster when not both calls took
    under the floor, slower's value exceeds faster's by more than margin, and slower's spread
    starts above the end of faster's. Every ranking in the book and in ``advise`` is this: what
    differs between them (the margin, the floor, the spreads) comes in as its arguments."""
    if faster.seconds < floor and slower.seconds < floor:
        return False
    if not slower.value > faster.value * margin:
        return False
    return slower.low > faster.high


def tied(a: Spread, b: Spread, margin: float, floor: float = FLOOR_S) -> bool:
    """Whether neither ranks behind the other by the rule (ranks, both ways)."""
    return not ranks(a, b, margin, floor) and not ranks(b, a, margin, floor)


@dataclass(frozen=True)
class Margins:
    """Per basis and framework, how many times larger one quantity must be than another to be
    ranked above it; sessions: how many sessions measured the cases (1: margins unmeasured)."""

    ratio: Mapping[str, float]
    warm: Mapping[str, float]
    cold: Mapping[str, float]
    sessions: int = 1
    sizes: tuple[int, ...] = ()  # the N at which the sessions overlapped on the GBM

    def of(self, basis: str, *frameworks: str) -> float:
        """The margin for a basis; across frameworks, the larger of theirs."""
        table = getattr(self, basis)
        return max(table.get(fw, max(table.values(), default=UNMEASURED)) for fw in frameworks)

    @property
    def measured(self) -> bool:
        return self.sessions > 1


def _matched(first: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """What the book ranks, measured correctly in both sessions, side by side (suffixes _a,
    _b): the GBM strategies by N and the wide problem's Jacobians and Hessian products by n,
    each at its ``size`` (a simulation's first call, compiled in a cache another case may have
    filled, is never ranked)."""
    keys = [*SAME_CASE, "problem", "size"]
    cols = [*keys, *COLUMN.values(), "pair_baseline_median_s"]

    def ranked(df: pd.DataFrame) -> pd.DataFrame:
        tall = queries.gbm(df, status="ok").assign(size=lambda d: d["paths"])
        wide = queries.wide(df, status="ok", target=("strategy", "second"))
        return pd.concat([tall, wide.assign(size=wide["inputs"])])[cols]

    return ranked(first).merge(ranked(other), on=keys, suffixes=("_a", "_b"))


def _pairwise(matched: pd.DataFrame, column: str) -> pd.Series:
    """Per framework, the furthest two of its quotients moved between sessions at one size of
    one problem, among the pairs the rule ranks: not both under the floor."""
    found: dict[str, float] = {}
    moves = matched[f"{column}_b"] / matched[f"{column}_a"]
    for (fw, _, _), idx in matched.groupby(["framework", "problem", "size"]).groups.items():
        kept = [i for i in idx if pd.notna(moves[i]) and moves[i] > 0]
        for i, j in itertools.combinations(kept, 2):
            if max(matched.loc[i, f"{column}_a"], matched.loc[j, f"{column}_a"]) < FLOOR_S:
                continue
            found[fw] = max(found.get(fw, 1.0), apart(moves[i], moves[j]))
    return pd.Series(found, dtype=float)


def _single(matched: pd.DataFrame, column: str) -> pd.Series:
    """Per framework, the furthest one of its ratios moved between sessions, where the rule
    reads ratios: over a simulation of RATIO_FLOOR_S or more."""
    both = matched.dropna(subset=[f"{column}_a", f"{column}_b"])
    both = both[both["pair_baseline_median_s_a"].fillna(0.0) >= RATIO_FLOOR_S]
    if both.empty:
        return pd.Series(dtype=float)
    moved = [apart(x, y) for x, y in zip(both[f"{column}_a"], both[f"{column}_b"], strict=True)]
    return pd.Series(moved, index=both.index).groupby(both["framework"]).max()


def measure(first: pd.DataFrame, others: list[pd.DataFrame] | None = None) -> Margins:
    """The margins from the dataset's rows and those of every other session that measured some
    of its cases again (none: every margin UNMEASURED)."""
    tables = [_matched(first, o) for o in (others or []) if o is not None and len(o)]
    tables = [t for t in tables if len(t)]
    if not tables:
        flat = dict.fromkeys(FRAMEWORKS, UNMEASURED)
        return Margins(flat, flat, flat, sessions=1)
    matched = pd.concat(tables, ignore_index=True)
    found = {
        "ratio": _single(matched, COLUMN["ratio"]),
        "warm": _pairwise(matched, COLUMN["warm"]),
        "cold": _pairwise(matched, COLUMN["cold"]),
    }
    out = {}
    for basis, series in found.items():
        overall = float(series.max()) if len(series) else UNMEASURED
        out[basis] = {fw: float(series.get(fw, overall)) for fw in FRAMEWORKS}
    sizes = tuple(sorted({int(n) for n in matched.loc[matched["problem"] == "gbm", "size"]}))
    return Margins(**out, sessions=1 + len(tables), sizes=sizes)


@dataclass(frozen=True)
class Comparison:
    """Two rows compared on one basis: which is faster by it, by what factor, and whether that
    is beyond the noise (ranked) or not (a tie)."""

    problem: str
    size: int
    faster: tuple[str, str]  # (framework, strategy)
    slower: tuple[str, str]
    basis: str
    factor: float  # the slower's quantity over the faster's
    margin: float
    ranked: bool
    overhead: bool = False  # both under FLOOR_S: a tie whatever the factor
    key: frozenset = field(default=frozenset(), compare=False)
    a_faster: bool = True  # whether a, the first row compare() was given, is the faster

    @property
    def tied(self) -> bool:
        return not self.ranked

    def winner(self) -> str | None:
        """The faster strategy's name where ranked, else None."""
        return self.faster[1] if self.ranked else None


def _name(row: pd.Series) -> tuple[str, str]:
    return str(row["framework"]), queries.short_name(row)


def _size(row: pd.Series) -> int:
    column = "paths" if row["problem"] == "gbm" else "inputs"
    return int(row[column])


def same_baseline(a: pd.Series, b: pd.Series) -> bool:
    """Whether two GBM strategies' ratios are to the same simulation: same framework, execution
    mode, size, dtype and allocator, both with a side-by-side ratio."""
    if a["problem"] != "gbm" or b["problem"] != "gbm" or a["target"] != "strategy":
        return False
    if b["target"] != "strategy" or any(pd.isna(r["ratio_median"]) for r in (a, b)):
        return False
    same = all(a[k] == b[k] for k in ("framework", "paths", "dtype", "allocator"))
    execution = [queries.parse(r["framework"], r["strategy"]).record.execution for r in (a, b)]
    return same and execution[0] == execution[1]


def _simulation_above_floor(row: pd.Series) -> bool:
    """Whether the simulation a row's ratio divides by took RATIO_FLOOR_S or more a call: near
    the floor a simulation measures the framework's overhead, and a ratio over it that noise."""
    sim = row.get("pair_baseline_median_s")
    return bool(pd.notna(sim) and float(sim) >= RATIO_FLOOR_S)


def basis_for(a: pd.Series, b: pd.Series, wanted: str = "repeated") -> str:
    """The quantity two rows are ranked by: first calls for one call; for repeated calls their
    side-by-side ratios where both are to the same simulation and it takes RATIO_FLOOR_S or more,
    else warm medians (so a factor printed beside two warm times is their quotient)."""
    if wanted == "cold":
        return "cold"
    if same_baseline(a, b) and _simulation_above_floor(a) and _simulation_above_floor(b):
        return "ratio"
    return "warm"


def compare(a: pd.Series, b: pd.Series, margins: Margins, wanted: str = "repeated") -> Comparison:
    """a against b by the book's rule (see the module), for repeated calls or one ("cold");
    MixedMachines where they were measured on two machines."""
    machines.same_machine(a, b, "a ranking")
    basis = basis_for(a, b, wanted)
    column = COLUMN[basis]
    x, y = float(a[column]), float(b[column])
    fast, slow = (a, b) if x <= y else (b, a)
    qf, qs = min(x, y), max(x, y)
    timed = COLUMN["cold" if basis == "cold" else "warm"]
    overhead = bool(a[timed] < FLOOR_S and b[timed] < FLOOR_S)
    margin = margins.of(basis, str(a["framework"]), str(b["framework"]))
    factor = qs / qf if qf > 0 else float("inf")
    if basis == "ratio":  # the two ratios' spreads do not meet
        lo_hi = (fast["ratio_hi"], slow["ratio_lo"])
    elif basis == "warm":  # the slower's fastest call is slower than the faster's median
        fastest = slow["warm_min_s"] if pd.notna(slow["warm_min_s"]) else slow["warm_median_s"]
        lo_hi = (fast["warm_median_s"], fastest)
    else:  # one first call each: no spread, the margin alone
        lo_hi = (qf, qs)
    seconds = (float(fast[timed]), float(slow[timed]))
    ranked = ranks(
        Spread(qf, qf, float(lo_hi[0]), seconds[0]),
        Spread(qs, float(lo_hi[1]), qs, seconds[1]),
        margin,
    )
    names = (_name(fast), _name(slow))
    return Comparison(
        problem=str(a["problem"]),
        size=_size(a),
        faster=names[0],
        slower=names[1],
        basis=basis,
        factor=factor,
        margin=margin,
        ranked=ranked,
        overhead=overhead,
        key=frozenset(names),
        a_faster=x <= y,
    )


def group(rows: pd.DataFrame, margins: Margins, wanted: str = "repeated") -> list[pd.Series]:
    """The fastest correct row (by first call for "cold", else by warm median) and every other
    that it does not beat by the rule, in that order; [] where none ran. Equal times are ordered
    by the strategy's name, so the rows' order in the file never decides."""
    column = COLUMN["cold" if wanted == "cold" else "warm"]
    ok = rows[(rows["status"] == "ok").fillna(False).astype(bool)].dropna(subset=[column])
    ok = ok.sort_values([column, "strategy"], kind="stable")
    if ok.empty:
        return []
    first = ok.iloc[0]
    kept = [first]
    for _, r in ok.iloc[1:].iterrows():
        c = compare(first, r, margins, wanted)
        if not (c.ranked and c.faster == _name(first)):
            kept.append(r)
    return kept
