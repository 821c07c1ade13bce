"""Accuracy in the GBM comparison (chapter 4): the largest errors at a size, the Monte-Carlo
standard error they sit beside, the cheapest automatic differentiation against finite
differences, and the check of the pathwise trick against a forward-mode column."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORKS
from jacbench.problems import gbm
from jacbench.report import queries
from jacbench.strategies import registry


def largest_error(
    df: pd.DataFrame, paths: int, frameworks: tuple[str, ...] = FRAMEWORKS
) -> float | None:
    """The largest relative error against the closed form of the frameworks' correct GBM rows
    at N, or None where none ran."""
    rows = queries.gbm(df, paths=paths, status="ok", framework=frameworks)
    worst = rows["max_rel_error"].max()
    return None if pd.isna(worst) else float(worst)


def standard_errors(paths: int = 10_000) -> dict[str, float]:
    """The Monte-Carlo standard error of an at-the-money call's pathwise delta and vega
    (strike S0), from N paths of the shared normals in float64, relative to the estimate:
    {"paths": 10000, "delta": 0.0098, "vega": 0.019}."""
    case = gbm.make_case(gbm.GBMParams(paths=paths, dtype="float64"))
    in_money = gbm.terminal_closed_form(case) > case.params.spot
    per_path = gbm.jacobian_closed_form(case) * in_money[:, None]  # 1{S_T > K} dS_T/dtheta
    rel = per_path.std(axis=0, ddof=1) / np.sqrt(paths) / np.abs(per_path.mean(axis=0))
    return {"paths": paths, "delta": float(rel[0]), "vega": float(rel[1])}


def cheapest_ad(df: pd.DataFrame, paths: int | None) -> pd.Series | None:
    """The automatic-differentiation strategy a recommendation may pick with the lowest warm time
    over its framework's fastest simulation given the same normals at N (data's
    ratio_to_fastest_simulation: one scale across execution modes, where each strategy's ratio
    to its own simulation is not), the first of equals in framework and strategy order; a
    path-blocked strategy, which draws its own normals, is not on that scale and not counted.
    None where nothing qualifies (also where N is None)."""
    if paths is None:
        return None
    rows = queries.candidates(queries.gbm(df, framework=AD_FRAMEWORKS, status="ok", paths=paths))
    names = zip(rows["framework"], rows["strategy"], strict=True)
    whole = [not registry.get(fw, s).blocked for fw, s in names]
    rows = rows[pd.Series(whole, index=rows.index, dtype=bool)]
    rows = rows.dropna(subset=["ratio_to_fastest_simulation"])
    rows = rows.sort_values("ratio_to_fastest_simulation", kind="stable")
    return rows.iloc[0] if len(rows) else None


def pathwise_check(paths: int = 1000) -> dict[str, float]:
    """The pathwise trick checked in JAX on this chapter's GBM at N: the largest gap between
    the pathwise vol column and a JVP in the vol direction, relative to the JVP's scale
    ("gbm"); vmap(grad(one path)) against the closed form ("vmap"); and the gap on the same
    paths normalised across paths to their sample mean ("normalised", about 1: a coupling)."""
    import jax
    import jax.numpy as jnp

    case = gbm.make_case(gbm.GBMParams(paths=paths))
    p = case.params
    w_t = jnp.asarray(gbm.brownian(case.t, case.normals)[-1])
    growth = float(np.exp(p.drift * p.maturity))

    def terminal(spot, vol, w=w_t):  # S_T; spot and vol are scalars or one copy per path
        return spot * jnp.exp((p.drift - vol * vol / 2) * p.maturity + vol * w)

    def normalised(spot, vol):  # the paths rescaled so that their mean is the forward S0 e^(mu T)
        s = terminal(spot, vol)
        return s * spot * growth / s.mean()

    def gap(f) -> float:
        copies = jnp.full(p.paths, p.spot), jnp.full(p.paths, p.vol)
        pathwise = jax.grad(lambda s, v: f(s, v).sum(), argnums=1)(*copies)
        column = jax.jvp(lambda v: f(p.spot, v), (jnp.float32(p.vol),), (jnp.float32(1.0),))[1]
        return float(jnp.abs(pathwise - column).max() / jnp.abs(column).max())

    # The same Jacobian as vmap(grad(one path)): the gradient of one path's S_T, over the paths.
    vmapped = jax.vmap(jax.grad(terminal, argnums=(0, 1)), in_axes=(None, None, 0))
    one_path = np.stack(vmapped(p.spot, p.vol, w_t), axis=1)
    vmap_error = gbm.relative_error(one_path, gbm.jacobian_closed_form(case))
    return {"gbm": gap(terminal), "vmap": vmap_error, "normalised": gap(normalised)}
