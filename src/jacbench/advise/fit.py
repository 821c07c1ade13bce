"""From a strategy's rows at a few sizes to its cost at the reader's size, and the pick.

Each strategy's warm time, first call and peak memory are fitted against n on log-log axes (a
power law, c n^k), or, where they grow slower than n, as a fixed cost plus a part in proportion
to n (see power_law). With three sizes or more the fit's spread is the geometric standard
deviation of its residuals; with two it is the spread of the warm calls themselves; with one the
cost is taken as proportional to n and the spread is unknown. The pick is the fastest predicted
strategy whose predicted peak fits the memory cap; strategies within the noise of it are named
with it, by the book's rule (report.margins): two predictions are told apart only when the slower
exceeds the faster by more than the framework's margin for warm medians from separate workers,
their spreads do not meet, and not both were measured under the floor of 1 ms a call, where a
call measures the framework's overhead and its growth with n is not yet seen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

# The smallest peak a fit reads: below it the resident memory measures the page granularity.
PEAK_FLOOR = 2**20


@dataclass(frozen=True)
class Fit:
    """value(n) = fixed + scale * n ** exponent, with a spread factor (>= 1; inf when unknown)."""

    scale: float
    exponent: float
    spread: float
    points: int
    fixed: float = 0.0

    def at(self, n: float) -> float:
        return float(self.fixed + self.scale * n**self.exponent)

    def to_json(self) -> dict:
        spread = None if math.isinf(self.spread) else self.spread
        return {"scale": self.scale, "exponent": self.exponent, "fixed": self.fixed,
                "spread": spread, "points": self.points}  # fmt: skip


def _affine(n: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """fixed + slope * n by least squares, neither negative (a cost does not shrink with n)."""
    slope = max(float(np.polyfit(n, v, 1)[0]), 0.0)
    fixed = max(float(np.mean(v - slope * n)), 0.0)
    return fixed, slope


def power_law(ns: Sequence[float], values: Sequence[float], spreads: Sequence[float] = ()) -> Fit:
    """The cost against n: a power law c n^k through (log n, log value) by least squares where
    it grows at least as fast as n; where it grows slower, a fixed cost paid at every size (a
    call's overhead, a framework's lazy imports) plus a part in proportion to n, which the
    power law would carry to large n as if the fixed part shrank. spreads: each value's own
    spread factor, used when two points leave no residual to read."""
    n = np.asarray(ns, dtype=float)
    v = np.asarray(values, dtype=float)
    if len(n) == 1:
        return Fit(float(v[0] / n[0]), 1.0, math.inf, 1)
    k, c = np.polyfit(np.log(n), np.log(v), 1)
    if k >= 1:
        fit = Fit(float(np.exp(c)), float(k), 1.0, len(n))
    else:
        fixed, slope = _affine(n, v)
        fit = Fit(slope, 1.0, 1.0, len(n), fixed)
    if len(n) >= 3:
        resid = np.log(v) - np.log([fit.at(x) for x in n])
        spread = float(np.exp(np.sqrt(np.sum(resid**2) / (len(n) - 2))))
    else:
        spread = max([1.0, *spreads])
    return Fit(fit.scale, fit.exponent, spread, fit.points, fit.fixed)


@dataclass(frozen=True)
class Prediction:
    """One strategy's cost at the target: warm call, first call, peak beyond the inputs."""

    name: str
    warm_s: float
    cold_s: float
    peak_bytes: float
    spread: float  # the warm time's spread factor
    cold_spread: float
    fits: dict = field(default_factory=dict)
    measured_s: float = math.inf  # the warm median at the largest size measured


def predict(name: str, rows: Sequence[dict], target: int) -> Prediction:
    """The strategy's fits through its ok rows and their values at target."""
    ns = [r["n"] for r in rows]
    warm_spreads = [math.sqrt(r["warm_max_s"] / r["warm_min_s"]) for r in rows]
    warm = power_law(ns, [r["warm_median_s"] for r in rows], warm_spreads)
    cold = power_law(ns, [r["cold_s"] for r in rows])
    peak = power_law(ns, [max(r["peak_bytes"], PEAK_FLOOR) for r in rows])
    return Prediction(
        name,
        warm.at(target),
        cold.at(target),
        peak.at(target),
        warm.spread,
        cold.spread,
        {"warm": warm, "cold": cold, "peak": peak},
        rows[-1]["warm_median_s"],
    )


def apart(a: Prediction, b: Prediction, margin: float, basis: str = "warm",
          floor: float = 0.0) -> bool:  # fmt: skip
    """Whether b is slower than a beyond the noise: by more than margin, spreads not meeting,
    and not both measured below floor (calls that short measure the per-call overhead)."""
    if basis == "warm" and max(a.measured_s, b.measured_s) < floor:
        return False
    ta, tb = (a.warm_s, b.warm_s) if basis == "warm" else (a.cold_s, b.cold_s)
    sa, sb = (a.spread, b.spread) if basis == "warm" else (a.cold_spread, b.cold_spread)
    if tb <= ta * margin:
        return False
    if math.isinf(sa) or math.isinf(sb):
        return True  # one size each: no spread to meet; the margin alone decides
    return ta * sa < tb / sb


@dataclass(frozen=True)
class Pick:
    """The pick for repeated calls, those tied with it, and the pick for one call."""

    strategy: str
    tied: tuple[str, ...]
    one_call: str
    one_call_tied: tuple[str, ...]
    excluded: dict  # name -> why it could not be picked (its peak above the cap)


def pick(predictions: Sequence[Prediction], mem_cap: float, margin: float,
         cold_margin: float, floor: float = 0.0) -> Pick | None:  # fmt: skip
    """The fastest predicted strategy whose peak fits the cap (None when none does), and the
    fastest first call among those."""
    fits = [p for p in predictions if p.peak_bytes <= mem_cap]
    excluded = {p.name: p.peak_bytes for p in predictions if p.peak_bytes > mem_cap}
    if not fits:
        return None
    best = min(fits, key=lambda p: p.warm_s)
    tied = tuple(p.name for p in fits if p is not best and not apart(best, p, margin, floor=floor))
    first = min(fits, key=lambda p: p.cold_s)
    first_tied = tuple(
        p.name for p in fits if p is not first and not apart(first, p, cold_margin, "cold")
    )
    return Pick(best.name, tied, first.name, first_tied, excluded)
