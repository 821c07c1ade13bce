"""Chapter 4's price of compilation: each compiled strategy beside the same differentiation run
eagerly, compared by the book's rule (report.margins) and priced by picks.overtakes."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.report import margins as noise
from jacbench.report import picks, queries
from jacbench.report.chapters.gbm.costs import FORWARD, PATHWISE, family, num
from jacbench.report.picks import Entry
from jacbench.strategies import registry

# What says how a case's allocator ran: compiled and eager forms compare under the same.
SETTINGS = ("allocator", "malloc_env")


@dataclass(frozen=True)
class Price:
    """A compiled strategy at one N beside the same differentiation run eagerly (none in JAX):
    its compile cost (the row's compile_s: one more call with the compiler's caches emptied
    less the fastest warm call, measure.compile_cost; None in a row measured before it was),
    that call itself (recompile_s), both forms' calls, and the book's comparisons of their warm
    calls and of their first calls."""

    framework: str
    compiled: Entry
    eager: Entry | None
    n: int
    compile_s: float | None
    recompile_s: float | None
    warm: noise.Comparison | None
    first: noise.Comparison | None
    same_allocator: bool

    def _wins(self, c: noise.Comparison | None) -> bool:
        return bool(c and c.ranked and c.faster[1] == self.compiled.name)

    @property
    def faster_warm(self) -> bool:
        """Whether its warm call beats the eager one's beyond the noise."""
        return self._wins(self.warm)

    @property
    def faster_first(self) -> bool:
        """Whether its first call, compilation included, beats the eager one's."""
        return self._wins(self.first)

    @property
    def first_extra_s(self) -> float | None:
        """What the first call took beyond the same compile in a process that had compiled
        before: the first allocation and the compiler's one-off start (seconds)."""
        return None if self.recompile_s is None else self.compiled.cold_s - self.recompile_s

    @property
    def overtakes(self) -> int | None:
        """From which call its total time is below the eager form's, where its warm call is
        faster beyond the noise; None otherwise."""
        if not self.faster_warm:
            return None
        return picks.overtakes(self.eager, self.compiled)


def _same_setting(a: pd.Series, b: pd.Series) -> bool:
    """Whether two rows ran under the same allocator with the same malloc settings."""
    unset = {None, ""}
    for column in SETTINGS:
        x, y = (None if pd.isna(r.get(column)) else r.get(column) for r in (a, b))
        if not (x == y or (x in unset and y in unset)):
            return False
    return True


def _entry(row: pd.Series) -> Entry:
    return Entry(
        name=str(row["strategy"]),
        warm_s=float(row["warm_median_s"]),
        cold_s=float(row["cold_s"]),
        peak=float(row["peak"]),
        beyond_inputs=float(row["peak_over_inputs"]),
        ratio=num(row, "ratio_median"),
    )


def priced() -> list[tuple[str, str, str | None]]:
    """(framework, compiled strategy, its eager twin or None) that the chapter prices: every
    compiled variant with an eager twin, and JAX's forward-mode and pathwise strategies on the
    whole path array (JAX compiles every strategy; it has no eager twin)."""
    out = [(fw, c, e) for fw in AD_FRAMEWORKS for c, e in registry.compiled_variants(fw) if e]
    for s in registry.by_framework("jax", "gbm"):
        if family("jax", s.name) in (FORWARD, PATHWISE) and not s.blocked:
            out.append(("jax", s.name, None))
    return out


def _price(there: pd.DataFrame, margins: noise.Margins, name: str, eager: str | None):
    c = queries.one(there, strategy=name)
    e = queries.one(there, strategy=eager) if eager else None
    if c is None or (eager and e is None):
        return None
    both = e is not None
    return Price(
        framework=str(c["framework"]),
        compiled=_entry(c),
        eager=_entry(e) if both else None,
        n=int(c["paths"]),
        compile_s=num(c, "compile_s"),
        recompile_s=num(c, "recompile_s"),
        warm=noise.compare(c, e, margins) if both else None,
        first=noise.compare(c, e, margins, "cold") if both else None,
        same_allocator=both and _same_setting(c, e),
    )


def prices(df: pd.DataFrame, margins: noise.Margins, n: int) -> tuple[Price, ...]:
    """Each priced strategy at N = n and at the largest N where it and its eager twin both ran,
    the smaller first; sizes where either did not run are left out."""
    found = []
    for fw, name, eager in priced():
        largest = queries.largest_common(df, fw, [name] + ([eager] if eager else []))
        for size in sorted({s for s in (n, largest) if s is not None}):
            there = queries.gbm(df, framework=fw, paths=size, status="ok")
            found.append(_price(there, margins, name, eager))
    return tuple(p for p in found if p is not None)
