"""Chapter 4's rows as numbers: each strategy's cost at the largest N it ran, each framework's
default Jacobian N by N, and the path-blocked strategies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from jacbench.constants import FRAMEWORKS
from jacbench.report import queries
from jacbench.strategies import registry

# The families a strategy falls in, as the chapter groups them.
QUESTION, DEFAULT, REVERSE = "question", "default", "reverse"
FORWARD, PATHWISE, NONE = "forward", "pathwise", "none"


def family(framework: str, name: str) -> str:
    """question (the question's own program), default, forward, pathwise (one backward pass of
    the summed paths), reverse (any other reverse mode) or none (numpy's closed form and finite
    differences)."""
    s = registry.get(framework, name)
    if s.faithful:
        return QUESTION
    if s.default:
        return DEFAULT
    if s.mode == "forward":
        return FORWARD
    if s.mode == "reverse":
        return PATHWISE if s.batching == "single-pass" else REVERSE
    return NONE


def num(row: pd.Series | None, column: str) -> float | None:
    """A row's value in a column as a float; None where there is no row or no value."""
    value = None if row is None else row.get(column)
    return None if value is None or pd.isna(value) else float(value)


@dataclass(frozen=True)
class Cost:
    """One strategy at the largest N it ran: its time over its own simulation's (side by side,
    with the spread), over its framework's fastest simulation given the same normals, its
    memory beyond the inputs (bytes) and over its simulation's, and its error against the
    closed form there."""

    framework: str
    name: str
    family: str
    blocked: bool
    n: int
    ratio: float | None
    ratio_lo: float | None
    ratio_hi: float | None
    over_fastest: float | None
    beyond_inputs: float | None
    memory_ratio: float | None
    error: float | None

    @property
    def efficient(self) -> bool:
        """Forward mode or the pathwise gradient on the whole path array."""
        return self.family in (FORWARD, PATHWISE) and not self.blocked


def _cost(df: pd.DataFrame, framework: str, name: str, top: pd.Series) -> Cost:
    held = num(queries.simulation_of(df, top), "peak_over_inputs")
    beyond = num(top, "peak_over_inputs")
    return Cost(
        framework=framework,
        name=name,
        family=family(framework, name),
        blocked=registry.get(framework, name).blocked,
        n=int(top["paths"]),
        ratio=num(top, "ratio_median"),
        ratio_lo=num(top, "ratio_lo"),
        ratio_hi=num(top, "ratio_hi"),
        over_fastest=num(top, "ratio_to_fastest_simulation"),
        beyond_inputs=beyond,
        memory_ratio=beyond / held if beyond is not None and held else None,
        error=num(top, "max_rel_error"),
    )


def costs(df: pd.DataFrame) -> tuple[Cost, ...]:
    """Every strategy at the largest N it ran correctly, in the registry's order."""
    names = [(s.framework, s.name) for fw in FRAMEWORKS for s in registry.by_framework(fw)]
    order = {key: i for i, key in enumerate(names)}
    groups = queries.gbm(df, status="ok").groupby(["framework", "strategy"])
    found = [_cost(df, fw, name, runs.iloc[-1]) for (fw, name), runs in groups]  # sorted by N
    return tuple(sorted(found, key=lambda c: order.get((c.framework, c.name), len(order))))


@dataclass(frozen=True)
class Default:
    """A framework's own Jacobian call with its defaults: its ratio to the simulation at each N
    it ran, and what became of it at the question's N (None: not run there)."""

    framework: str
    name: str
    ratios: Mapping[int, float]
    at_question: str | None

    @property
    def largest_n(self) -> int | None:
        return max(self.ratios, default=None)

    @property
    def ratio(self) -> float | None:
        """Its ratio at the largest N it ran."""
        return self.ratios[self.largest_n] if self.ratios else None

    @property
    def grows(self) -> bool:
        """Whether its cost in simulations rose with every step in N."""
        values = [self.ratios[n] for n in sorted(self.ratios)]
        return len(values) > 1 and all(b > a for a, b in zip(values, values[1:], strict=False))


def default(df: pd.DataFrame, framework: str, question_n: int) -> Default | None:
    """The framework's default Jacobian N by N; None where the framework has none."""
    s = registry.default(framework)
    if s is None:
        return None
    rows = queries.gbm(df, framework=framework, strategy=s.name)
    ok = rows[rows["status"] == "ok"].dropna(subset=["ratio_median"])
    ratios = dict(zip(ok["paths"].astype(int), ok["ratio_median"].astype(float), strict=True))
    there = queries.one(rows, paths=question_n)
    return Default(framework, s.name, ratios, None if there is None else str(there["status"]))


@dataclass(frozen=True)
class Blocked:
    """A path-blocked strategy at the largest N it ran: warm time, ratio to its blocked
    simulation with the spread, the process's peak there and at `n_before` (bytes), and the
    largest N the strategy it blocks ran."""

    framework: str
    name: str
    blocks: str
    n: int | None
    warm_s: float | None
    ratio: float | None
    ratio_lo: float | None
    ratio_hi: float | None
    peak: float | None
    n_before: int | None
    peak_before: float | None
    blocks_n: int | None


def blocked(df: pd.DataFrame, framework: str, name: str, n_before: int | None) -> Blocked:
    """One blocked strategy's numbers (see Blocked)."""
    twin = registry.get(framework, name).blocks
    top = queries.largest_ok(df, framework, name)
    ok = queries.gbm(df, framework=framework, strategy=name, status="ok")
    before = queries.one(ok, paths=n_before) if n_before is not None else None
    twin_top = queries.largest_ok(df, framework, twin)
    return Blocked(
        framework=framework,
        name=name,
        blocks=twin,
        n=None if top is None else int(top["paths"]),
        warm_s=num(top, "warm_median_s"),
        ratio=num(top, "ratio_median"),
        ratio_lo=num(top, "ratio_lo"),
        ratio_hi=num(top, "ratio_hi"),
        peak=num(top, "peak"),
        n_before=n_before,
        peak_before=num(before, "peak"),
        blocks_n=None if twin_top is None else int(twin_top["paths"]),
    )
