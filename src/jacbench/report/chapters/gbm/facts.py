"""Chapter 4, the GBM comparison: each strategy's cost against one simulation, the defaults
beside forward mode and the pathwise gradient, the blocked strategies, the price of compilation
and the accuracy, as numbers, flags and the book's comparisons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.problems.gbm import GBMParams
from jacbench.report import margins as noise
from jacbench.report import queries
from jacbench.report.chapters.gbm.accuracy import Accuracy, accuracy
from jacbench.report.chapters.gbm.compilation import Price, prices
from jacbench.report.chapters.gbm.costs import Blocked, Cost, Default, blocked, costs, default
from jacbench.report.chapters.gbm.paths import Yardstick, path_sizes, yardsticks
from jacbench.report.picks import QUESTION_N, TALL, Picks
from jacbench.strategies import registry

# A cost this many simulations or fewer is "a small multiple"; a default's cost at or above
# HUNDREDS is "hundreds of simulations".
SMALL = 5.0
HUNDREDS = 100.0
# The compiled forms whose break-even is read in the prose: "hundreds of calls" from LATE up.
LATE = 100
# What a quotient of two ratios is read against: the two costing the same.
ONE = noise.Spread.point(1.0)


@dataclass(frozen=True)
class Facts:
    """What chapter 4 says, as numbers, flags and comparisons."""

    question_n: int
    smallest_n: int | None  # the smallest N at which any strategy ran
    in_memory_n: int | None  # the largest N at which a strategy on the whole path array ran
    largest_n: int | None  # the largest N at which any strategy ran
    costs: tuple[Cost, ...]
    defaults: Mapping[str, Default]
    blocked: tuple[Blocked, ...]
    prices: tuple[Price, ...]
    picks: Picks
    accuracy: Accuracy
    yardsticks: tuple[Yardstick, ...]  # at the largest N with a path-returning simulation
    # Each simulation's first call at the question's N, by (framework, execution mode): what a
    # first call costs with nearly nothing to compute.
    simulation_first: Mapping[tuple[str, str], float]

    def cost(self, framework: str, name: str) -> Cost | None:
        return next((c for c in self.costs if (c.framework, c.name) == (framework, name)), None)

    @property
    def efficient_costs(self) -> list[Cost]:
        """The AD frameworks' forward-mode and pathwise strategies on the whole path array."""
        return [c for c in self.costs if c.framework in AD_FRAMEWORKS and c.efficient]

    @property
    def efficient_most(self) -> float | None:
        """The highest ratio to its simulation of those, each at the largest N it ran."""
        ratios = [c.ratio for c in self.efficient_costs if c.ratio is not None]
        return max(ratios, default=None)

    @property
    def efficient_memory_most(self) -> float | None:
        """The most memory beyond the inputs of those over their simulation's, each at the
        largest N it ran."""
        ratios = [c.memory_ratio for c in self.efficient_costs if c.memory_ratio is not None]
        return max(ratios, default=None)

    @property
    def vectorized_defaults_least(self) -> float | None:
        """The least memory beyond the inputs (bytes) of the defaults that run every backward
        pass at once, each at the largest N it ran."""
        held = [
            c.beyond_inputs
            for fw, d in self.defaults.items()
            if registry.get(fw, d.name).batching == "vectorized"
            and (c := self.cost(fw, d.name)) is not None
            and c.beyond_inputs is not None
        ]
        return min(held, default=None)

    @property
    def picked_ratios(self) -> list[float]:
        """The ratio to its simulation of every tall pick for repeated calls, at each size the
        book picks at."""
        tall = [p for p in self.picks.all if p.shape == TALL]
        found = [p.entries[name].ratio for p in tall for name in p.repeated]
        return [r for r in found if r is not None]

    @property
    def picked_sizes(self) -> tuple[int, int] | None:
        """The smallest and largest N the book picks the tall Jacobian at."""
        sizes = [p.size for p in self.picks.all if p.shape == TALL]
        return (min(sizes), max(sizes)) if sizes else None

    @property
    def defaults_ratio(self) -> tuple[float, float] | None:
        """The lowest and highest of the defaults' ratios, each at the largest N it ran."""
        ratios = [d.ratio for d in self.defaults.values() if d.ratio is not None]
        return (min(ratios), max(ratios)) if ratios else None

    @property
    def defaults_largest_n(self) -> int | None:
        sizes = [d.largest_n for d in self.defaults.values() if d.largest_n is not None]
        return max(sizes, default=None)

    @property
    def defaults_fail_at_question(self) -> bool:
        """Whether every default was measured at the question's N and none finished there."""
        found = [d.at_question for d in self.defaults.values()]
        return bool(found) and all(s is not None and s != "ok" for s in found)

    @property
    def path_array_at_largest(self) -> int | None:
        """The bytes of one (M+1) x N float32 path array at the largest N."""
        n = self.largest_n
        return None if n is None else GBMParams(paths=n).path_array_bytes

    def prices_at(self, n: int | None, framework: str | None = None) -> list[Price]:
        return [p for p in self.prices if p.n == n and framework in (None, p.framework)]

    def compile_span(self, n: int | None) -> tuple[Price, Price] | None:
        """The cheapest and the dearest compile at N (the first of equals)."""
        at = [p for p in self.prices_at(n) if p.compile_s is not None]
        if not at:
            return None
        return min(at, key=lambda p: p.compile_s), max(at, key=lambda p: p.compile_s)

    def paid_from(self, n: int | None, framework: str) -> list[int | None]:
        """From which call each of a framework's compiled forms has paid for its compile at N
        (None: its warm call is not faster beyond the noise)."""
        return [p.overtakes for p in self.prices_at(n, framework) if p.eager is not None]

    @property
    def blocked_most(self) -> float | None:
        """The highest ratio of a blocked strategy to its blocked simulation, at its largest N."""
        return max((b.ratio for b in self.blocked if b.ratio is not None), default=None)

    @property
    def blocked_reach(self) -> bool:
        """Whether every blocked strategy ran at the largest N, further than any strategy they
        block ran."""
        return bool(self.blocked) and all(
            b.n == self.largest_n and b.blocks_n is not None and b.blocks_n < b.n
            for b in self.blocked
        )

    @property
    def blocked_under_one_array(self) -> bool:
        """Whether every blocked strategy's whole process held less, at the largest N, than one
        path array of that N."""
        top = self.path_array_at_largest
        peaks = [b.peak for b in self.blocked]
        return bool(peaks) and top is not None and all(p is not None and p < top for p in peaks)

    @property
    def yardstick_n(self) -> int | None:
        return self.yardsticks[0].n if self.yardsticks else None

    def path_cost(self, framework: str, execution: str) -> float | None:
        """The simulation returning the path over the terminal-only one, in a mode."""
        found = [y.path_over_terminal for y in self.yardsticks
                 if (y.framework, y.execution) == (framework, execution)]  # fmt: skip
        return found[0] if found else None

    def path_costs(self, compiled: bool) -> list[float]:
        """Each mode's path over terminal-only, for the compiled modes or the eager ones."""
        modes = {
            (y.framework, y.execution): y.path_over_terminal
            for y in self.yardsticks
            if (y.execution != "eager") == compiled and y.path_over_terminal is not None
        }
        return list(modes.values())

    def same(self, framework: str, k: float | None) -> bool:
        """Whether a quotient of two ratios is 1 within the framework's ratio margin (the
        book's rule, report.margins.tied; a quotient has no floor): neither side costs more."""
        m = self.picks.margins.of("ratio", framework)
        return k is not None and noise.tied(ONE, noise.Spread.point(k), m, floor=0.0)

    def more(self, framework: str, k: float | None) -> bool:
        """Whether a quotient of two ratios ranks above 1 by the framework's ratio margin."""
        m = self.picks.margins.of("ratio", framework)
        return k is not None and noise.ranks(ONE, noise.Spread.point(k), m, floor=0.0)

    def costs_nothing(self, framework: str, execution: str) -> bool:
        """Whether returning the path cost no more than returning S_T alone in a mode."""
        return self.same(framework, self.path_cost(framework, execution))

    def costs_more(self, framework: str, execution: str) -> bool:
        """Whether returning the path cost more than returning S_T alone, beyond the margin."""
        return self.more(framework, self.path_cost(framework, execution))

    def floor_cost(self, framework: str) -> float | None:
        """A framework's hand-written pass over its simulation of S_T alone."""
        found = [y.floor_over_terminal for y in self.yardsticks
                 if y.framework == framework and y.floor_over_terminal is not None]  # fmt: skip
        return found[0] if found else None

    def yardstick(self, framework: str, name: str) -> Yardstick | None:
        return next((y for y in self.yardsticks if (y.framework, y.name) == (framework, name)),
                    None)  # fmt: skip

    def best_over(self, yardstick: str, framework: str) -> Yardstick | None:
        """A framework's efficient strategy cheapest over a yardstick ('path' or 'floor')."""
        mine = [
            y
            for y in self.yardsticks
            if y.framework == framework and getattr(y, f"over_{yardstick}") is not None
        ]
        return min(mine, key=lambda y: getattr(y, f"over_{yardstick}"), default=None)  # fmt: skip

    @property
    def top_priced_n(self) -> int | None:
        """The largest N at which a compiled form was priced beside its eager twin."""
        return max((p.n for p in self.prices if p.eager is not None), default=None)


def facts(df: pd.DataFrame, book: Picks, question_n: int = QUESTION_N) -> Facts:
    """Chapter 4's facts from the rows and the book's picks (picks.compute)."""
    all_costs = costs(df)
    ok = queries.gbm(df, status="ok")
    whole = [c.n for c in all_costs if c.framework in AD_FRAMEWORKS and not c.blocked]
    in_memory = max(whole, default=None)
    pairs = [(fw, b) for fw in AD_FRAMEWORKS for b, _ in registry.blocked_pairs(fw)]
    return Facts(
        question_n=question_n,
        smallest_n=None if ok.empty else int(ok["paths"].min()),
        in_memory_n=in_memory,
        largest_n=max((c.n for c in all_costs), default=None),
        costs=all_costs,
        defaults={fw: d for fw in AD_FRAMEWORKS if (d := default(df, fw, question_n))},
        blocked=tuple(blocked(df, fw, b, in_memory) for fw, b in pairs),
        prices=prices(df, book.margins, question_n),
        picks=book,
        accuracy=accuracy(df, question_n),
        yardsticks=yardsticks(df, max(path_sizes(df), default=None)),
        simulation_first={
            (fw, mode): float(row["cold_s"])
            for fw in AD_FRAMEWORKS
            for mode in registry.executions(fw)
            if (row := queries.simulation(df, fw, mode, question_n)) is not None
        },
    )
