"""Chapter 4's yardsticks: what a Jacobian's ratio is over.

Every ratio in the dataset is over the simulation returning S_T alone, in the Jacobian's own
execution mode, timed side by side. Eager code builds the whole path whatever it returns, but a
compiler given S_T alone to return drops the path the question keeps. So each mode's
simulation returning the whole path is measured too, against the terminal-only one, and each
framework's hand-fused floor (the path and both derivatives written by hand, in one compiled
pass). A Jacobian over the path-building simulation, or over the floor, is its ratio divided by
theirs: all three were timed against the same terminal-only simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.measure.targets import SimulationTarget, parse
from jacbench.report import queries
from jacbench.report.chapters.gbm.costs import FORWARD, PATHWISE, family, num
from jacbench.strategies import registry


@dataclass(frozen=True)
class Yardstick:
    """A Jacobian strategy at N beside the three yardsticks of its execution mode: its ratio
    over the terminal-only simulation (measured), over the simulation returning the path and
    over its framework's floor (each the quotient of two measured ratios; None where the floor
    is not of its mode or a row is missing)."""

    framework: str
    execution: str
    name: str
    n: int
    over_terminal: float | None
    path_over_terminal: float | None
    floor_over_terminal: float | None

    @property
    def over_path(self) -> float | None:
        return _quotient(self.over_terminal, self.path_over_terminal)

    @property
    def over_floor(self) -> float | None:
        return _quotient(self.over_terminal, self.floor_over_terminal)


def _quotient(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _ratio(df: pd.DataFrame, framework: str, text: str, n: int) -> float | None:
    """The measured ratio of a strategy or simulation (its row's text) at N."""
    kind = parse(framework, text).kind
    row = queries.one(queries.gbm(df, kind, framework=framework, paths=n),
                      strategy=text, status="ok")  # fmt: skip
    return num(row, "ratio_median")


def _efficient(framework: str, execution: str) -> list[str]:
    """The forward-mode and pathwise strategies of a mode, on the whole path array."""
    mine = [s.name for s in registry.by_framework(framework, "gbm") if s.execution == execution]
    return [name for name in mine if family(framework, name) in (FORWARD, PATHWISE)]


def yardsticks(df: pd.DataFrame, n: int | None) -> tuple[Yardstick, ...]:
    """Each framework's efficient strategies at N in every mode whose path-returning
    simulation was measured there, in the registry's order."""
    if n is None:
        return ()
    found = []
    for fw in AD_FRAMEWORKS:
        floor = registry.floor(fw)
        for sim in registry.path_simulations(fw):
            mode = registry.path_of(sim)
            path = _ratio(df, fw, SimulationTarget(fw, sim).text, n)
            if path is None:
                continue
            at_floor = floor and floor.execution == mode
            floor_ratio = _ratio(df, fw, floor.name, n) if at_floor else None
            for name in _efficient(fw, mode):
                found.append(Yardstick(fw, mode, name, n, _ratio(df, fw, name, n), path,
                                       floor_ratio))  # fmt: skip
    return tuple(found)


def path_sizes(df: pd.DataFrame) -> list[int]:
    """The sizes at which some simulation returning the path ran."""
    sims = queries.gbm(df, "simulation", status="ok")
    paths = sims[sims["strategy"].str.endswith("-path")]
    return sorted(set(paths["paths"].astype(int)))
