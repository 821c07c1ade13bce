"""Chapter 4's accuracy: float32 errors against the float64 closed form, the Monte-Carlo standard
error they sit beside, and the pathwise trick checked against one forward-mode column."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.problems import gbm
from jacbench.report import queries


@dataclass(frozen=True)
class Accuracy:
    """The largest relative error against the closed form (each column's, relative to that
    column's scale) per framework over every N measured, and the relative Monte-Carlo standard
    error of an at-the-money call's pathwise delta and vega from se_paths paths."""

    anywhere: Mapping[str, float]  # by framework
    se_paths: int
    se_delta: float
    se_vega: float

    @property
    def ad_error(self) -> float | None:
        """The largest error of any AD framework's strategy at any N."""
        errors = [e for fw, e in self.anywhere.items() if fw in AD_FRAMEWORKS]
        return max(errors, default=None)

    @property
    def below_standard_error(self) -> float | None:
        """How many times smaller the largest AD error is than the smaller standard error."""
        worst = self.ad_error
        return None if not worst else min(self.se_delta, self.se_vega) / worst


def _largest(rows: pd.DataFrame) -> dict[str, float]:
    rows = rows.dropna(subset=["max_rel_error"])
    return {str(fw): float(g["max_rel_error"].max()) for fw, g in rows.groupby("framework")}


def standard_errors(paths: int) -> tuple[float, float]:
    """The Monte-Carlo standard error of an at-the-money call's pathwise delta and vega (strike
    S0), from N paths of the shared normals in float64, relative to the estimate."""
    case = gbm.make_case(gbm.GBMParams(paths=paths, dtype="float64"))
    in_money = gbm.terminal_closed_form(case) > case.params.spot
    per_path = gbm.jacobian_closed_form(case) * in_money[:, None]  # 1{S_T > K} dS_T/dtheta
    rel = per_path.std(axis=0, ddof=1) / np.sqrt(paths) / np.abs(per_path.mean(axis=0))
    return float(rel[0]), float(rel[1])


def accuracy(df: pd.DataFrame, se_paths: int) -> Accuracy:
    """The chapter's accuracy facts (see Accuracy)."""
    delta, vega = standard_errors(se_paths)
    return Accuracy(_largest(queries.gbm(df, status="ok")), se_paths, delta, vega)


@dataclass(frozen=True)
class PathwiseCheck:
    """The pathwise vol column against one JVP in the vol direction, as the largest gap relative
    to the JVP's scale: on independent paths, and on the same paths rescaled to their sample
    mean (a coupling across paths); and vmap(grad(one path)) against the closed form."""

    paths: int
    gap: float
    coupled_gap: float
    vmap_error: float


def pathwise_check(paths: int = 1_000) -> PathwiseCheck:
    """The check, run in JAX on this chapter's GBM at N paths (float32)."""
    import jax
    import jax.numpy as jnp

    case = gbm.make_case(gbm.GBMParams(paths=paths))
    p = case.params
    w_t = jnp.asarray(gbm.brownian(case.t, case.normals)[-1])
    growth = float(np.exp(p.drift * p.maturity))

    def terminal(spot, vol, w=w_t):  # S_T; spot and vol are scalars or one copy per path
        return spot * jnp.exp((p.drift - vol * vol / 2) * p.maturity + vol * w)

    def coupled(spot, vol):  # the paths rescaled so that their mean is the forward S0 e^(mu T)
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
    return PathwiseCheck(paths, gap(terminal), gap(coupled), float(vmap_error))
