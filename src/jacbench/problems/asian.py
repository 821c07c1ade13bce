"""An arithmetic-average (Asian) call on the GBM's paths: a payoff that depends on every date.

Each path's output is max(A - K, 0), with A the mean of S over the M dates after the start,
A = (1/M) sum_{k=1..M} S_{t_k}, and the strike K at the money (K = S0). The paths are the GBM's:
the same parameters and normals (problems.gbm), so S_T's simulation and this one read the same
numbers. Unlike S_T, A needs every date's S: the sum of the normals alone does not give it, so
the terminal trick (S_T from W_T) cannot serve, and a loop over the steps must carry the
running average.

Its derivative per path (the pathwise estimator of the price's delta and vega, summed over
paths) has a closed form given the path: with X_k = W_{t_k} - sigma t_k,

    d payoff / d S0    = 1{A > K} A / S0,
    d payoff / d sigma = 1{A > K} (1/M) sum_k S_{t_k} X_k.

At A = K the payoff has a kink, and a path whose A lies within rounding of K may fall on either
side in float32: a strategy that evaluates the payoff twice (two JVPs, each with its own primal)
may even take one side for the spot's column and the other for sigma's; and where float32 rounds
A - K to exactly zero, jnp.maximum splits the derivative between its two arguments and gives
half of it. Each is a subgradient at the kink. So the check takes each path's side from the
float64 average, but a path within KINK (relative to K) of the strike may carry, in each column,
anything between zero and the in-the-money derivative; the payoff's value is checked against the
float64 one separately. At 10^6 paths a few tens lie that close; every other path is checked
strictly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jacbench.problems import gbm

# How close to the strike (relative to K) a path's float64 average lies for either side of the
# kink to count as right: float32 rounds the average of 52 dates within a few 1e-7 of it.
KINK = {"float32": 1e-5, "float64": 1e-12}

# Paths per block of the float64 check: its (M+1) x B arrays stay near 100 MiB at M = 52.
CHECK_BLOCK = 1 << 18


@dataclass(frozen=True)
class AsianCase(gbm.GBMCase):
    """The GBM's case (parameters, grid, normals), whose output is the Asian call's payoff."""

    problem = "asian"

    @property
    def strike(self) -> float:
        """K: at the money."""
        return self.params.spot


def make_case(params: gbm.GBMParams, device: str = "cpu") -> AsianCase:
    """The GBM's case for these parameters, as an Asian case (the same normals)."""
    c = gbm.make_case(params, device=device)
    return AsianCase(params=c.params, t=c.t, normals=c.normals, device=c.device)


def _block(case: AsianCase, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """A - K (B,) and the derivative of A (B, 2) of paths [start, stop), in float64."""
    p = case.params
    t = case.t.astype(np.float64)
    w = gbm.brownian(t, case.normals[:, start:stop].astype(np.float64))[1:]  # (M, B)
    s = p.spot * np.exp((p.drift - 0.5 * p.vol**2) * t[1:, None] + p.vol * w)
    a = s.mean(axis=0)
    x = w - p.vol * t[1:, None]
    jac = np.stack([a / p.spot, (s * x).mean(axis=0)], axis=1)
    return a - case.strike, jac


def _gap(case: AsianCase) -> tuple[np.ndarray, np.ndarray]:
    """A - K (N,) and the derivative of A S0-and-sigma-wise (N, 2), in float64."""
    n = case.params.paths
    gap, jac = np.empty(n), np.empty((n, 2))
    for start in range(0, n, CHECK_BLOCK):
        stop = min(start + CHECK_BLOCK, n)
        gap[start:stop], jac[start:stop] = _block(case, start, stop)
    return gap, jac


def closed_form(case: AsianCase) -> tuple[np.ndarray, np.ndarray]:
    """Payoff (N,) and the derivative of A S0-and-sigma-wise (N, 2), in float64: a path's
    Jacobian is the latter where it is in the money, zero elsewhere (see error)."""
    gap, jac = _gap(case)
    return np.maximum(gap, 0.0), jac


def error(case: AsianCase, jacobian: np.ndarray, payoff: np.ndarray) -> float:
    """The larger of the payoff's and the Jacobian's relative errors against the float64 closed
    form (each column against its own scale); a path within KINK of the strike may carry any
    subgradient of the kink (see the module)."""
    gap, d_average = _gap(case)
    jac = np.asarray(jacobian, dtype=np.float64)
    expected = np.where((gap > 0)[:, None], d_average, 0.0)
    near = (np.abs(gap) <= KINK[case.params.dtype] * case.strike)[:, None]
    between = np.clip(jac, np.minimum(d_average, 0.0), np.maximum(d_average, 0.0))
    expected = np.where(near, between, expected)
    own = np.asarray(payoff, dtype=np.float64).reshape(-1, 1)
    value = gbm.relative_error(own, np.maximum(gap, 0.0)[:, None])
    return max(value, gbm.relative_error(jac, expected))
