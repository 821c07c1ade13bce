"""The GBM's per-path second derivatives (chapter 5): the rows, their errors against the
closed forms, their cost against the pathwise Jacobian, and JAX's float32 times with and without
YNNPACK's fusions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.measure.targets import SecondOrderTarget
from jacbench.report import formats, queries
from jacbench.report.legacy.wide import warm_ratio
from jacbench.strategies import registry


def greeks_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The GBM's per-path second-order Greeks in both dtypes, by framework, method and N."""
    greeks = queries.where(df, problem="gbm", target="second", allocator="glibc")
    return greeks.sort_values(["framework", "strategy", "paths"], kind="stable")


def greeks_error(greeks: pd.DataFrame, dtype: str) -> float | None:
    """The largest error of the correct Greeks in a dtype against their closed forms, or None."""
    errors = queries.where(greeks, dtype=dtype, status="ok")["max_rel_error"].dropna()
    return float(errors.max()) if len(errors) else None


def greeks_over_pathwise(df: pd.DataFrame, framework: str = "torch") -> tuple[int | None, str]:
    """The largest N at which a framework's float32 Greeks and its pathwise Jacobian both ran,
    and the Greeks' warm time over the Jacobian's there: (1000000, '2.2×'); (None,
    NOT_MEASURED) where no N has both."""
    pathwise = registry.answer(framework, "pathwise").name
    first = queries.gbm(df, framework=framework, strategy=pathwise, status="ok")
    second = queries.where(greeks_rows(df), framework=framework, dtype="float32", status="ok")
    common = sorted(set(first["paths"]) & set(second["paths"]))
    if not common:
        return None, formats.NOT_MEASURED
    paths = int(common[-1])
    return paths, warm_ratio(queries.one(second, paths=paths), queries.one(first, paths=paths))


# JAX's Greeks compiled without YNNPACK's fusions (the xla_cpu_experimental_ynn_fusion_type
# option emptied): the method set beside the one compiled as jaxlib installs it.
NO_YNN = SecondOrderTarget("jax", "greeks-no-ynn").text
GREEKS = SecondOrderTarget("jax", "greeks").text


def ynn_effect(greeks: pd.DataFrame) -> pd.DataFrame:
    """JAX's Greeks as installed (YNNPACK fusions on) and without YNNPACK, per dtype and N where
    both were measured: their warm times (NaN where one failed) and the installed one's over the
    one without ("slowdown")."""
    jax = queries.where(greeks, framework="jax")
    rows = []
    for (dtype, n), at in jax.groupby(["dtype", "paths"], sort=True):
        on = queries.one(at, strategy=GREEKS)
        off = queries.one(at, strategy=NO_YNN)
        if on is None or off is None:
            continue
        t_on = on["warm_median_s"] if on["status"] == "ok" else np.nan
        t_off = off["warm_median_s"] if off["status"] == "ok" else np.nan
        rows.append({"dtype": dtype, "paths": int(n), "ynn_s": t_on, "no_ynn_s": t_off})
    out = pd.DataFrame(rows, columns=["dtype", "paths", "ynn_s", "no_ynn_s"])
    out[["ynn_s", "no_ynn_s"]] = out[["ynn_s", "no_ynn_s"]].astype(float)
    out["slowdown"] = out["ynn_s"] / out["no_ynn_s"]
    return out


def ynn_sentence(effect: pd.DataFrame) -> str:
    """Whether YNNPACK explains JAX's float32 Greeks at the largest N: the installed build's
    time against the one without YNNPACK, in float32 and float64; YNNPACK is named the cause
    where turning it off makes float32 at least twice as fast and float64 is not slowed as much."""
    f32 = effect[effect["dtype"] == "float32"].dropna(subset=["slowdown"])
    if f32.empty:
        return ("JAX's per-path second derivatives without YNNPACK were not measured beside the "
                "installed build's, so the float32 times are left unexplained here.")  # fmt: skip
    top = f32.iloc[-1]
    n = int(top["paths"])
    f64 = queries.one(effect, dtype="float64", paths=n)
    said = (
        f"At N = {formats.count(n)}, JAX's float32 per-path second derivatives take "
        f"{formats.time(top['ynn_s'])} as jaxlib installs them and "
        f"{formats.time(top['no_ynn_s'])} with YNNPACK's fusions turned off (XLA's option "
        f"xla_cpu_experimental_ynn_fusion_type set empty)"
    )
    if f64 is not None and not formats.missing(f64["slowdown"]):
        said += f"; in float64, {formats.time(f64['ynn_s'])} and {formats.time(f64['no_ynn_s'])}"
    f64_slow = f64["slowdown"] if f64 is not None and not formats.missing(f64["slowdown"]) else 1
    if top["slowdown"] >= 2 and top["slowdown"] > 1.5 * f64_slow:
        below = f32[f32["slowdown"] < 1.5]
        since = (f" (at N = {formats.count(below['paths'].max())} the two are within 1.5×)"
                 if len(below) else "")  # fmt: skip
        said += (
            f". The float32 anomaly is YNNPACK's: its fused float32 kernels make the "
            f"second derivatives {formats.times(top['slowdown'])} slower at this size{since}"
        )
        cheaper = f64 is not None and top["no_ynn_s"] < min(f64["ynn_s"], f64["no_ynn_s"])
        said += "; without them float32 is the cheaper dtype." if cheaper else "."
    elif top["slowdown"] >= 2:
        said += (
            f". YNNPACK slows both dtypes alike here ({formats.times(top['slowdown'], 2)} "
            f"in float32, {formats.times(f64_slow, 2)} in float64)."
        )
    else:
        said += f". Turning YNNPACK off changes little ({formats.times(top['slowdown'], 2)})"
        slower = f64 is not None and top["ynn_s"] > 1.5 * f64["ynn_s"]
        said += (", and float32 is still slower than float64, so the anomaly's cause lies "
                 "elsewhere." if slower else ".")  # fmt: skip
    return said


def ynn_float64(effect: pd.DataFrame) -> str:
    """YNNPACK's effect on float64 at every N measured both ways, and where it slows float64
    more than float32: 'With YNNPACK's fusions on, float64 takes 2.14× its time without them at
    N = 10,000, ..., a larger slowdown than float32's at N = 10,000 (0.81×) ...'"""
    f64 = effect[effect["dtype"] == "float64"].dropna(subset=["slowdown"])
    if f64.empty:
        return "Float64 was not measured without YNNPACK's fusions."
    at = [f"{formats.times(r['slowdown'], 2)}{' its time without them' if i == 0 else ''} "
          f"at N = {formats.count(r['paths'])}"
          for i, (_, r) in enumerate(f64.iterrows())]  # fmt: skip
    said = f"With YNNPACK's fusions on, float64 takes {formats.listing(at)}"
    harder = []
    for _, r in f64.iterrows():
        f32 = queries.one(effect, dtype="float32", paths=r["paths"])
        if f32 is not None and not formats.missing(f32["slowdown"]):
            if r["slowdown"] > f32["slowdown"]:
                harder.append(f"N = {formats.count(r['paths'])} "
                              f"({formats.times(f32['slowdown'], 2)})")  # fmt: skip
    if harder:
        said += f", a larger slowdown than float32's at {formats.listing(harder)}"
    return said + "."
