"""From a strategy's rows at a few sizes to its cost at the reader's size, and the pick.

Each strategy's warm time, first call and peak memory are fitted against n on log-log axes (a
power law, c n^k), or, where they grow slower than n, as a fixed cost plus a part in proportion
to n (see power_law). Each fit says how sure it is: with three sizes or more, the exponent's 95%
interval and a 95% prediction interval at any n, from the residuals (Student's t on the sizes'
degrees of freedom, widened with the distance from the sizes measured) and the warm calls' own
spread; with two sizes, from the calls' spread alone; with one, none (the cost taken as
proportional to n).

A prediction is flagged where it cannot be trusted as a number: more than 10x past the largest
size measured ("far"), from a fit through calls under the 1 ms floor ("floor": they measure the
framework's overhead, not its growth), from times that fall as n grows ("falling"), from fewer
than three sizes ("few"), or where the data's largest array reaches glibc's 32 MiB mmap
threshold anywhere from the smallest size fitted to the target ("mmap": the book's allocators). The
pick is the fastest strategy whose predicted peak fits the memory cap, by its prediction where
none is flagged and by its warm median at the largest size measured where one is. Those it does
not beat are named with it, by the book's one rule (report.margins.ranks) on this run's own
spreads: the interval of two strategies' quotient at the target, fitted through their quotients
at the sizes both measured (paired: a disturbance at one size slows both), or each median's
fastest and slowest calls; no margin measured elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from jacbench.measure.heap import MMAP_THRESHOLD
from jacbench.report.advice import Checked, Fitted, Row, Worker
from jacbench.report.margins import Spread, ranks

# The smallest peak a fit reads: below it the resident memory measures the page granularity.
PEAK_FLOOR = 2**20
# The prediction intervals' level, and Student's t at it by degrees of freedom (beyond the table,
# its last entry: a little wider than the normal's 1.96).
LEVEL = 0.95
T_QUANTILE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
              9: 2.262, 10: 2.228}  # fmt: skip
NORMAL_QUANTILE = 1.96
# A prediction further than this past the largest size measured is flagged.
FAR = 10.0
FLAGS = {
    "far": "more than 10x past the largest size measured",
    "floor": "fitted through calls under the 1 ms floor",
    "falling": "its time fell as n grew",
    "few": "fitted through fewer than three sizes",
    "mmap": "the data's largest array reaches glibc's 32 MiB mmap threshold somewhere from the "
    "smallest size fitted to the target, and above it every call faults its arrays' pages in "
    "afresh",
}


def t_quantile(dof: float) -> float:
    """Student's t at LEVEL (two-sided) for dof degrees of freedom; the normal's for inf."""
    if math.isinf(dof):
        return NORMAL_QUANTILE
    return T_QUANTILE.get(int(dof), T_QUANTILE[max(T_QUANTILE)])


@dataclass(frozen=True)
class Fit:
    """value(n) = fixed + scale * n ** exponent, and how sure it is: the residuals' standard
    deviation in log (log_sd, with dof degrees of freedom; inf where unknown), the calls' own
    spread in log (noise), where the sizes lie in log n (x_mean, sxx), and the exponent the
    points show on log-log axes with its interval."""

    scale: float
    exponent: float
    spread: float  # exp(log_sd): the residuals' spread as a factor (>= 1; inf when unknown)
    points: int
    fixed: float = 0.0
    log_sd: float = math.inf
    dof: float = 0.0
    noise: float = 0.0
    x_mean: float = 0.0
    sxx: float = 0.0
    slope: float = 1.0  # the log-log slope through the points
    slope_low: float = -math.inf
    slope_high: float = math.inf

    def at(self, n: float) -> float:
        return float(self.fixed + self.scale * n**self.exponent)

    def half_width(self, n: float) -> float:
        """The prediction interval's half width at n, in log (inf where unknown)."""
        if math.isinf(self.log_sd) or self.points < 2:
            return math.inf
        leverage = 1 + 1 / self.points + (math.log(n) - self.x_mean) ** 2 / self.sxx
        return t_quantile(self.dof) * math.sqrt(self.log_sd**2 * leverage + self.noise**2)

    def interval(self, n: float) -> tuple[float, float]:
        """The LEVEL prediction interval of the value at n."""
        mid, half = self.at(n), self.half_width(n)
        if math.isinf(half):
            return 0.0, math.inf
        return mid * math.exp(-half), mid * math.exp(half)

    def fitted(self) -> Fitted:
        """The fit as advice.json keeps it (None for inf)."""

        def finite(x):
            return None if math.isinf(x) else x

        return Fitted(scale=self.scale, exponent=self.exponent, fixed=self.fixed,
                      spread=finite(self.spread), points=self.points, log_sd=finite(self.log_sd),
                      dof=finite(self.dof), noise=self.noise, x_mean=self.x_mean, sxx=self.sxx,
                      slope=self.slope,
                      slope_interval=(finite(self.slope_low), finite(self.slope_high)))  # fmt: skip

    @classmethod
    def from_fitted(cls, raw: Fitted) -> Fit:
        def back(x):
            return math.inf if x is None else x

        low, high = raw.slope_interval
        slope = raw.exponent if raw.slope is None else raw.slope
        return cls(raw.scale, raw.exponent, back(raw.spread), raw.points, raw.fixed,
                   back(raw.log_sd), back(raw.dof), raw.noise, raw.x_mean, raw.sxx, slope,
                   -math.inf if low is None else low, back(high))  # fmt: skip


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
    spread factor (its calls' geometric half range); the largest size's widens the interval,
    and with two points it is all the interval has."""
    n = np.asarray(ns, dtype=float)
    v = np.asarray(values, dtype=float)
    noise = math.log(max(spreads[-1], 1.0)) if len(spreads) else 0.0
    if len(n) == 1:
        return Fit(float(v[0] / n[0]), 1.0, math.inf, 1, noise=noise)
    x = np.log(n)
    k, c = np.polyfit(x, np.log(v), 1)
    if k >= 1:
        model = Fit(float(np.exp(c)), float(k), 1.0, len(n))
    else:
        fixed, slope = _affine(n, v)
        model = Fit(slope, 1.0, 1.0, len(n), fixed)
    x_mean, sxx = float(np.mean(x)), float(np.sum((x - np.mean(x)) ** 2))
    if len(n) >= 3:
        fitted = np.array([model.at(a) for a in n])
        resid = np.log(v) - np.log(np.maximum(fitted, 1e-300))
        dof = float(len(n) - 2)
        log_sd = float(np.sqrt(np.sum(resid**2) / dof))
        # The log-log slope's own residuals: the exponent the points show, and its interval.
        raw = np.log(v) - (k * x + c)
        slope_sd = float(np.sqrt(np.sum(raw**2) / dof / sxx))
        half = t_quantile(dof) * slope_sd
        spread = math.exp(log_sd)
    else:  # two points: no residual; the calls' own spread is the only noise known
        dof, log_sd, spread = math.inf, noise, max([1.0, *spreads])
        half = NORMAL_QUANTILE * noise * math.sqrt(2 / sxx)
        noise = 0.0  # counted once, as the residuals' stand-in
    return Fit(model.scale, model.exponent, spread, len(n), model.fixed, log_sd, dof, noise,
               x_mean, sxx, float(k), float(k - half), float(k + half))  # fmt: skip


@dataclass(frozen=True)
class Prediction:
    """One strategy's cost at the target: warm call (with its interval), first call, peak
    beyond the inputs; and its warm calls at the largest size measured."""

    name: str
    warm_s: float
    cold_s: float
    peak_bytes: float
    spread: float  # the warm fit's residual spread factor
    cold_spread: float
    fits: dict[str, Fit] = field(default_factory=dict)
    measured_s: float = math.inf  # the warm median at the largest size measured
    low_s: float = 0.0  # the warm prediction's interval
    high_s: float = math.inf
    measured_min_s: float = math.inf  # that size's fastest and slowest warm calls
    measured_max_s: float = math.inf
    measured_cold_s: float = math.inf
    measured_n: int = 0
    flags: tuple[str, ...] = ()
    points: tuple[tuple[int, float, float], ...] = ()  # (n, warm median, its calls' spread)

    @property
    def trusted(self) -> bool:
        """Whether the prediction may rank the strategy (no flag)."""
        return not self.flags


def crosses(bytes_per_n: float | None, smallest: int, target: int,
            threshold: int = MMAP_THRESHOLD) -> bool:  # fmt: skip
    """Whether data of bytes_per_n a unit of n crosses glibc's mmap threshold between smallest
    and target (measure.heap: the advice's workers run with it fixed at 32 MiB, where glibc's
    own adjustment stops): arrays below it are reused from the heap, above it each call maps
    and faults them in afresh, and a fit through one side does not carry to the other."""
    if not bytes_per_n:
        return False
    return bytes_per_n * smallest < threshold <= bytes_per_n * target


def flags(ns: Sequence[int], warm: Sequence[float], target: int, floor: float,
          bytes_per_n: float | None = None,
          fastest: Sequence[float] = ()) -> tuple[str, ...]:  # fmt: skip
    """Why a prediction from warm medians at sizes ns cannot be trusted at target (FLAGS);
    fastest: each size's fastest warm call (a later median below an earlier size's fastest
    call is a time that fell)."""
    found = []
    lows = list(fastest) or list(warm)
    if target > FAR * max(ns):
        found.append("far")
    if min(warm) < floor:
        found.append("floor")
    # A later median ahead of an earlier size's calls by the rule (margin 1, no floor).
    earlier = [Spread(t, low, t, t) for t, low in zip(warm, lows, strict=True)]
    if any(ranks(Spread.point(warm[j]), earlier[i], 1.0, floor=0.0)
           for i in range(len(warm)) for j in range(i + 1, len(warm))):  # fmt: skip
        found.append("falling")
    if len(ns) < 3:
        found.append("few")
    if crosses(bytes_per_n, min(ns), target):
        found.append("mmap")
    return tuple(found)


def predict(name: str, rows: Sequence[Row], target: int, floor: float = 0.0,
            bytes_per_n: float | None = None) -> Prediction:  # fmt: skip
    """The strategy's fits through its ok rows and their values at target (bytes_per_n: the
    data's largest array per unit of n, for the mmap flag)."""
    ns = [r.n for r in rows]
    warm_spreads = [math.sqrt(r.warm_max_s / r.warm_min_s) for r in rows]
    medians = [r.warm_median_s for r in rows]
    warm = power_law(ns, medians, warm_spreads)
    cold = power_law(ns, [r.cold_s for r in rows])
    peak = power_law(ns, [max(r.peak_bytes, PEAK_FLOOR) for r in rows])
    low, high = warm.interval(target)
    last = rows[-1]
    return Prediction(
        name,
        warm.at(target),
        cold.at(target),
        peak.at(target),
        warm.spread,
        cold.spread,
        {"warm": warm, "cold": cold, "peak": peak},
        last.warm_median_s,
        low,
        high,
        last.warm_min_s,
        last.warm_max_s,
        last.cold_s,
        last.n,
        flags(ns, medians, target, floor, bytes_per_n, [r.warm_min_s for r in rows]),
        tuple(zip(ns, medians, warm_spreads, strict=True)),
    )


def spread_of(p: Prediction, basis: str) -> Spread:
    """What the rule ranks p by: its warm prediction and interval ("predicted"), its warm
    median between its fastest and slowest calls at the largest size ("measured"), or its
    first call ("cold", within the cold fit's residual spread)."""
    if basis == "predicted":
        return Spread(p.warm_s, p.low_s, p.high_s, p.measured_s)
    if basis == "measured":
        return Spread(p.measured_s, p.measured_min_s, p.measured_max_s, p.measured_s)
    factor = 1.0 if math.isinf(p.cold_spread) else p.cold_spread
    return Spread(p.cold_s, p.cold_s / factor, p.cold_s * factor, p.measured_cold_s)


def paired(a: Prediction, b: Prediction, target: float) -> tuple[float, float, float] | None:
    """b's time over a's at target, with its LEVEL interval, from their quotients at the sizes
    both measured: what disturbed the machine at one size slowed both, and their quotient keeps
    less of it than either fit (as the book's ratios side by side). The quotient is carried to
    target along its trend on log-log axes where the trend is significant at LEVEL, and taken
    as constant where it is not (the sizes show no trend, and a line through four noisy points
    carried 10x further would claim one). With two sizes the interval is the calls' own
    spreads; None with fewer."""
    mine = {n: (t, sp) for n, t, sp in a.points}
    common = [(n, mine[n], (t, sp)) for n, t, sp in b.points if n in mine]
    if len(common) < 2:
        return None
    x = np.log([n for n, _, _ in common])
    y = np.log([tb / ta for _, (ta, _), (tb, _) in common])
    if len(x) < 3:  # no residual: constant, within the last size's calls' spreads
        (_, (_, sa), (_, sb)) = common[-1]
        mid = float(np.mean(y))
        half = NORMAL_QUANTILE * math.hypot(math.log(sa), math.log(sb)) * math.sqrt(1.5)
        return math.exp(mid), math.exp(mid - half), math.exp(mid + half)
    k, c = np.polyfit(x, y, 1)
    dof = len(x) - 2
    sd = float(np.sqrt(np.sum((y - (k * x + c)) ** 2) / dof))
    sxx = float(np.sum((x - x.mean()) ** 2))
    x0 = math.log(target)
    if abs(k) > t_quantile(dof) * sd / math.sqrt(sxx):  # a trend: carried to target
        leverage = 1 + 1 / len(x) + (x0 - x.mean()) ** 2 / sxx
        mid, half = k * x0 + c, t_quantile(dof) * sd * math.sqrt(leverage)
    else:  # no trend shown: the quotient's mean, its spread about it
        mid = float(np.mean(y))
        half = t_quantile(len(x) - 1) * float(np.std(y, ddof=1)) * math.sqrt(1 + 1 / len(x))
    return math.exp(mid), math.exp(mid - half), math.exp(mid + half)


def apart(a: Prediction, b: Prediction, basis: str = "predicted", floor: float = 0.0,
          target: float | None = None) -> bool:  # fmt: skip
    """Whether b ranks behind a by the book's rule on this run's spreads (margin 1): for
    predictions at target, b's quotient over a's (paired) must start above 1; measured, b's
    fastest call must be slower than a's slowest; cold, b's first call beyond a's by the cold
    fit's spread."""
    if basis == "predicted" and target is not None:
        found = paired(a, b, target)
        if found is not None:
            quotient, low, high = found
            one = Spread(1.0, 1.0, 1.0, a.measured_s)
            return ranks(one, Spread(quotient, low, high, b.measured_s), 1.0, floor)
    return ranks(spread_of(a, basis), spread_of(b, basis), 1.0, floor)


@dataclass(frozen=True)
class Pick:
    """The pick for repeated calls, those tied with it, and the pick for one call; basis: what
    ranked them ("predicted", or "measured" at the largest size where a prediction is flagged)."""

    strategy: str
    tied: tuple[str, ...]
    one_call: str
    one_call_tied: tuple[str, ...]
    excluded: dict[str, float]  # name -> why it could not be picked (its peak above the cap)
    basis: str = "predicted"


def best_of(candidates: Sequence[Prediction], basis: str, floor: float,
            target: float | None = None) -> tuple[str, tuple]:  # fmt: skip
    """The fastest by basis and those it does not rank ahead of (equal values: by name)."""
    best = min(candidates, key=lambda p: (spread_of(p, basis).value, p.name))
    tied = tuple(
        p.name for p in candidates if p is not best and not apart(best, p, basis, floor, target)
    )
    return best.name, tied


def pick(predictions: Sequence[Prediction], mem_cap: float, floor: float = 0.0,
         target: float | None = None) -> Pick | None:  # fmt: skip
    """The fastest strategy whose predicted peak fits the cap (None when none does), by its
    prediction or, where any candidate's is flagged, by its median at the largest size; and the
    fastest first call among them."""
    fits = [p for p in predictions if p.peak_bytes <= mem_cap]
    excluded = {p.name: p.peak_bytes for p in predictions if p.peak_bytes > mem_cap}
    if not fits:
        return None
    basis = "predicted" if all(p.trusted for p in fits) else "measured"
    best, tied = best_of(fits, basis, floor, target)
    first, first_tied = best_of(fits, "cold", 0.0)
    return Pick(best, tied, first, first_tied, excluded, basis)


def checked(rows: Mapping[str, Sequence[Row]], floor: float = 0.0) -> Checked | None:
    """The pick from strategies measured again at the target in several workers each: each
    one's median of its workers' warm medians, between the fastest and slowest of them (the
    noise between workers this run saw), ranked by the book's rule with margin 1; None where
    none measured."""
    spreads = {}
    for name, found in rows.items():
        medians = [r.warm_median_s for r in found if r.ok]
        if medians:
            mid = float(np.median(medians))
            spreads[name] = Spread(mid, min(medians), max(medians), mid)
    if not spreads:
        return None
    best = min(spreads, key=lambda k: (spreads[k].value, k))
    tied = [k for k in spreads if k != best and not ranks(spreads[best], spreads[k], 1.0, floor)]
    workers = {k: Worker(median_s=v.value, low_s=v.low, high_s=v.high,
                         workers=len([r for r in rows[k] if r.ok]))
               for k, v in spreads.items()}  # fmt: skip
    return Checked(strategy=best, tied=tuple(tied), strategies=workers)
