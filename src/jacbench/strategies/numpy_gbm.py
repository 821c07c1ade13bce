"""Numpy strategies: the closed form and central finite differences."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from jacbench.problems import gbm
from jacbench.strategies.registry import JacobianResult


def build_simulation(case: gbm.GBMCase, execution: str = "numpy") -> Callable[[], np.ndarray]:
    return lambda: gbm.simulate(case)


def build_analytic(case: gbm.GBMCase) -> Callable[[], JacobianResult]:
    p = case.params
    spot, vol, drift = case.scalar(p.spot), case.scalar(p.vol), case.scalar(p.drift)
    maturity = case.scalar(p.maturity)

    def run() -> JacobianResult:
        w_t = gbm.brownian(case.t, case.normals)[-1]
        s_t = spot * np.exp((drift - vol * vol / 2) * maturity + vol * w_t)
        return JacobianResult(np.stack([s_t / spot, s_t * (w_t - vol * maturity)], 1), s_t)

    return run


def _bumped(case: gbm.GBMCase, **change: float) -> np.ndarray:
    return gbm.simulate(replace(case, params=replace(case.params, **change)))


def build_finite_difference(case: gbm.GBMCase) -> Callable[[], JacobianResult]:
    p = case.params
    # Step near the cube root of machine epsilon, the optimum for a central difference.
    rel = float(np.finfo(case.dtype).eps) ** (1 / 3)
    h_spot, h_vol = rel * p.spot, rel * p.vol

    def run() -> JacobianResult:
        s_t = gbm.simulate(case)
        d_spot = (_bumped(case, spot=p.spot + h_spot) - _bumped(case, spot=p.spot - h_spot)) / (
            2 * h_spot
        )
        d_vol = (_bumped(case, vol=p.vol + h_vol) - _bumped(case, vol=p.vol - h_vol)) / (2 * h_vol)
        return JacobianResult(np.stack([d_spot, d_vol], 1).astype(case.dtype), s_t)

    return run
