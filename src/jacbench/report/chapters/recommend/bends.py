"""Where chapter 7's rule bends, as numbers: finite differences against each framework's pick at
the largest N they ran, float64 against float32, and where dense Hessians stopped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.measure import heap
from jacbench.problems import moments
from jacbench.report import margins as noise
from jacbench.report import queries
from jacbench.report.picks import QUESTION_INPUTS, Picks

FINITE = ("numpy", "finite-difference")
# The largest block glibc's malloc keeps in its heap as it comes (its mmap threshold's ceiling):
# a larger array is mapped afresh, and faulted in, on every call.
HEAP_BLOCK_MAX = heap.MMAP_THRESHOLD


@dataclass(frozen=True)
class Timed:
    """One strategy at one N: its warm call, its time over its framework's fastest simulation
    given the same normals, and its largest relative error per path."""

    framework: str
    name: str
    warm_s: float
    over_simulation: float | None
    error: float | None


def _timed(row: pd.Series) -> Timed:
    return Timed(
        str(row["framework"]),
        queries.short_name(row),
        float(row["warm_median_s"]),
        queries.number(row, "ratio_to_fastest_simulation"),
        queries.number(row, "max_rel_error"),
    )


@dataclass(frozen=True)
class FiniteDifferences:
    """Central differences on the same normals at the largest N they ran, beside each
    framework's fastest Jacobian there (of either form)."""

    paths: int
    finite: Timed
    picks: tuple[Timed, ...]
    against: tuple[noise.Comparison, ...]  # finite differences against each of picks
    ad_error: float | None  # the largest error of any AD candidate there
    monte_carlo: float  # the Monte-Carlo standard error of the paths' mean dS_T/dS0, relative

    @property
    def slower_than_every_pick(self) -> bool:
        return bool(self.against) and all(c.ranked and c.slower == FINITE for c in self.against)

    @property
    def above_rounding(self) -> bool:
        """Whether their error is above every AD strategy's (float32 rounding) there."""
        e = self.finite.error
        return e is not None and self.ad_error is not None and e > self.ad_error

    @property
    def below_monte_carlo(self) -> bool:
        return self.finite.error is not None and self.finite.error < self.monte_carlo


def monte_carlo_error(vol: float, maturity: float, paths: int) -> float:
    """The Monte-Carlo standard error of the paths' mean dS_T/dS0 = S_T/S0 relative to the mean,
    for geometric Brownian motion: sqrt(exp(vol^2 T) - 1) / sqrt(N)."""
    return float(np.sqrt(np.expm1(vol**2 * maturity) / paths))


def finite_differences(df: pd.DataFrame, picks: Picks) -> FiniteDifferences | None:
    """Finite differences at the largest N they ran, beside each framework's fastest Jacobian
    there; None where they never ran."""
    fd = queries.largest_ok(df, *FINITE)
    if fd is None:
        return None
    n = int(fd["paths"])
    there = queries.candidates(
        queries.gbm(df, form=None, framework=AD_FRAMEWORKS, paths=n, status="ok")
    )
    # Each framework's fastest warm call there: the size need not be a pick's.
    found = [queries.fastest(queries.where(there, framework=fw)) for fw in AD_FRAMEWORKS]
    rows = [r for r in found if r is not None]
    errors = there["max_rel_error"].dropna()
    return FiniteDifferences(
        paths=n,
        finite=_timed(fd),
        picks=tuple(_timed(r) for r in rows),
        against=tuple(noise.compare(fd, r, picks.margins) for r in rows),
        ad_error=float(errors.max()) if len(errors) else None,
        monte_carlo=monte_carlo_error(float(fd["vol"]), float(fd["maturity"]), n),
    )


@dataclass(frozen=True)
class Precision:
    """One strategy's warm call in float64 beside its float32 one at the same N."""

    framework: str
    name: str
    paths: int
    float32_s: float
    float64_s: float
    comparison: noise.Comparison  # by the book's rule (warm medians)

    @property
    def over(self) -> float:
        return self.float64_s / self.float32_s

    @property
    def slower(self) -> bool:
        """Whether float64 is slower beyond the noise (compared float32 first)."""
        return self.comparison.ranked and self.comparison.a_faster


def precision(df: pd.DataFrame, margins: noise.Margins) -> tuple[Precision, ...]:
    """Every AD strategy measured correctly in float64 beside its float32 row at the same N,
    framework by framework."""
    f64 = queries.gbm(df, framework=AD_FRAMEWORKS, dtype="float64", status="ok")
    found = []
    for _, r in f64.iterrows():
        ok = queries.gbm(df, framework=r["framework"], status="ok")
        f32 = queries.one(ok, strategy=r["strategy"], paths=r["paths"])
        if f32 is None:
            continue
        found.append(
            Precision(
                str(r["framework"]),
                queries.short_name(r),
                int(r["paths"]),
                float(f32["warm_median_s"]),
                float(r["warm_median_s"]),
                noise.compare(f32, r, margins),
            )
        )
    return tuple(sorted(found, key=lambda p: (AD_FRAMEWORKS.index(p.framework), p.name)))


@dataclass(frozen=True)
class Faults:
    """At the largest N measured in float64: a path array's bytes in each precision against the
    largest block glibc's heap keeps, and the median page faults of a warm call per framework
    and precision, over the strategies measured in both."""

    paths: int
    array32: int
    array64: int
    by_framework: Mapping[str, tuple[float, float]]  # (float32, float64)

    @property
    def maps_afresh(self) -> bool:
        """Whether a float64 path array is above the block the heap keeps and a float32 one is
        not."""
        return self.array32 <= HEAP_BLOCK_MAX < self.array64

    def more_in_float64(self, framework: str) -> bool:
        f32, f64 = self.by_framework.get(framework, (np.nan, np.nan))
        return bool(f64 > f32)


def faults(df: pd.DataFrame) -> Faults | None:
    """The page faults float64 adds (see Faults); None where float64 was not measured."""
    f64 = queries.gbm(df, framework=AD_FRAMEWORKS, dtype="float64", status="ok")
    if f64.empty:
        return None
    n = int(f64["paths"].max())
    f64 = f64[f64["paths"] == n]
    f32 = queries.gbm(df, framework=AD_FRAMEWORKS, paths=n, status="ok")
    f32 = f32[f32["strategy"].isin(f64["strategy"])]
    found = {}
    for fw in AD_FRAMEWORKS:
        medians = [r[r["framework"] == fw]["warm_faults"].dropna().median() for r in (f32, f64)]
        if not any(pd.isna(m) for m in medians):
            found[fw] = (float(medians[0]), float(medians[1]))
    steps = int(f64["steps"].max())
    return Faults(n, (steps + 1) * n * 4, (steps + 1) * n * 8, found)


@dataclass(frozen=True)
class DenseLimit:
    """The smallest n at which a dense Hessian method did not finish, what stopped them there,
    and the size of the matrices there and at the question's n (float32, bytes)."""

    inputs: int
    all_stopped: bool  # every dense method tried there stopped
    all_skipped: bool  # none was started there: the memory model predicted above the cap
    largest_ok: int | None  # the size tried below inputs, where every dense method ran (else None)
    cap: float  # the smallest memory cap there
    one: int  # one output's Hessian at n
    question_one: int  # one output's Hessian at the question's n

    @property
    def three_fit(self) -> bool:
        """Whether the three outputs' Hessians alone would fit under the cap."""
        return 3 * self.one < self.cap


def _all_ran_below(below: pd.DataFrame) -> int | None:
    """The largest size tried below the limit, where every dense method tried there ran; None
    where one did not."""
    if below.empty:
        return None
    n = int(below["inputs"].max())
    return n if (below[below["inputs"] == n]["status"] == "ok").all() else None


def dense_limit(df: pd.DataFrame) -> DenseLimit | None:
    """Where dense Hessians stopped; None where every one finished or none was measured."""
    dense = queries.second_order(df, "moments", kind="dense")
    dense = dense[dense["framework"].isin(AD_FRAMEWORKS)]
    stopped = dense[(dense["status"] != "ok").fillna(True).astype(bool)]
    if stopped.empty:
        return None
    n = int(stopped["inputs"].min())
    tried = dense[dense["inputs"] == n]
    below = dense[dense["inputs"] < n]
    return DenseLimit(
        inputs=n,
        all_stopped=bool((tried["status"] != "ok").all()),
        all_skipped=bool((tried["status"] == "skipped-predicted").all()),
        largest_ok=_all_ran_below(below),
        cap=float(tried["mem_cap"].min()),
        one=moments.dense_hessian_bytes(n, "float32", outputs=1),
        question_one=moments.dense_hessian_bytes(QUESTION_INPUTS, "float32", outputs=1),
    )
