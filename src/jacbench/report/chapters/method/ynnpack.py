"""JAX's per-path second derivatives with and without YNNPACK, as numbers: their times and the
page faults of a warm call."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jacbench.measure.targets import SecondOrderTarget
from jacbench.report import margins, queries
from jacbench.report.chapters.method.memory import num

# The smallest page a minor fault maps on x86-64 Linux: a call's faults times this is the least
# memory it faulted in (a huge page would make it more).
PAGE = 4096
# JAX's Greeks as installed, and compiled with YNNPACK's fusion turned off.
GREEKS = SecondOrderTarget("jax", "per-path-second").text
NO_YNN = SecondOrderTarget("jax", "per-path-second-no-ynn").text


@dataclass(frozen=True)
class YnnRow:
    """JAX's Greeks in one dtype at one N: as installed and without YNNPACK's fusion."""

    dtype: str
    paths: int
    warm_s: tuple[float | None, float | None]
    faults: tuple[float | None, float | None]


@dataclass(frozen=True)
class Ynn:
    """JAX's per-path second derivatives with and without YNNPACK."""

    rows: tuple[YnnRow, ...]
    n: int | None  # the largest N at which both ran in float32
    comparison: margins.Comparison | None  # as installed against without, there
    slowdown: float | None  # as installed over without, there
    fault_ratio: float | None  # page faults a warm call, as installed over without
    extra_fault_s: float | None  # the extra time over the extra faults
    float64: margins.Comparison | None = None  # float32 against float64, as installed, at n
    slower_dtype: str | None = None  # the slower of the two there
    touched_over_peak: float | None = None  # memory faulted in a call, at least, over its peak

    @property
    def off_faster(self) -> bool:
        """Whether turning YNNPACK off made the float32 call faster, beyond the noise."""
        c = self.comparison
        return bool(c is not None and c.ranked and c.faster == ("jax", "per-path-second-no-ynn"))

    @property
    def float32_slower(self) -> bool:
        """Whether float32 was slower than float64 as installed, beyond the noise."""
        c = self.float64
        return bool(c is not None and c.ranked and self.slower_dtype == "float32")


def ynn(df: pd.DataFrame, found: margins.Margins) -> Ynn | None:
    """The YNNPACK note's facts; None where JAX's Greeks were not measured both ways."""
    greeks = queries.where(df, problem="gbm", target="second", framework="jax", allocator="glibc")
    rows, top, installed = [], None, {}
    for (dtype, n), at in greeks.groupby(["dtype", "paths"], sort=True):
        on, off = queries.one(at, strategy=GREEKS), queries.one(at, strategy=NO_YNN)
        if on is None or off is None:
            continue
        pair = [r if r["status"] == "ok" else None for r in (on, off)]
        installed[dtype, int(n)] = pair[0]
        rows.append(
            YnnRow(
                str(dtype),
                int(n),
                tuple(num(r, "warm_median_s") for r in pair),
                tuple(num(r, "warm_faults") for r in pair),
            )
        )
        if dtype == "float32" and all(r is not None for r in pair):
            top = (int(n), *pair)
    if not rows:
        return None
    if top is None:
        return Ynn(tuple(rows), None, None, None, None, None)
    n, on, off = top
    extra = on["warm_faults"] - off["warm_faults"]
    faults_ok = pd.notna(extra) and extra > 0 and off["warm_faults"] > 0
    wide = installed.get(("float64", n))
    float64 = margins.compare(on, wide, found) if wide is not None else None
    slower = None
    if float64 is not None:
        slower = "float64" if float64.a_faster else "float32"
    return Ynn(
        rows=tuple(rows),
        n=n,
        comparison=margins.compare(on, off, found),
        slowdown=float(on["warm_median_s"] / off["warm_median_s"]),
        fault_ratio=float(on["warm_faults"] / off["warm_faults"]) if faults_ok else None,
        extra_fault_s=float((on["warm_median_s"] - off["warm_median_s"]) / extra)
        if faults_ok
        else None,
        float64=float64,
        slower_dtype=slower,
        touched_over_peak=float(on["warm_faults"] * PAGE / on["peak"])
        if pd.notna(on["warm_faults"]) and on["peak"] > 0
        else None,
    )
