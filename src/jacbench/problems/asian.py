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

At A = K the payoff has a kink. A path whose A lies within rounding of K may fall on either
side in float32, so the check takes the side from the strategy's own payoff (a positive payoff
means A > K) and checks the payoff's value against the float64 one separately: both must agree
within the dtype's tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jacbench.problems import gbm

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
    """Payoff (B,) and its Jacobian (B, 2) of paths [start, stop), in float64."""
    p = case.params
    t = case.t.astype(np.float64)
    w = gbm.brownian(t, case.normals[:, start:stop].astype(np.float64))[1:]  # (M, B)
    s = p.spot * np.exp((p.drift - 0.5 * p.vol**2) * t[1:, None] + p.vol * w)
    a = s.mean(axis=0)
    x = w - p.vol * t[1:, None]
    payoff = np.maximum(a - case.strike, 0.0)
    jac = np.stack([a / p.spot, (s * x).mean(axis=0)], axis=1)
    return payoff, jac


def closed_form(case: AsianCase) -> tuple[np.ndarray, np.ndarray]:
    """Payoff (N,) and the derivative of A S0-and-sigma-wise (N, 2), in float64: a path's
    Jacobian is the latter where it is in the money, zero elsewhere (see error)."""
    n = case.params.paths
    payoff, jac = np.empty(n), np.empty((n, 2))
    for start in range(0, n, CHECK_BLOCK):
        stop = min(start + CHECK_BLOCK, n)
        payoff[start:stop], jac[start:stop] = _block(case, start, stop)
    return payoff, jac


def error(case: AsianCase, jacobian: np.ndarray, payoff: np.ndarray) -> float:
    """The larger of the payoff's and the Jacobian's relative errors against the float64 closed
    form (each column against its own scale), the kink's side taken from the strategy's own
    payoff (see the module)."""
    reference, d_average = closed_form(case)
    own = np.asarray(payoff, dtype=np.float64).reshape(-1)
    in_money = (own > 0)[:, None]
    expected = np.where(in_money, d_average, 0.0)
    value = gbm.relative_error(own[:, None], reference[:, None])
    return max(value, gbm.relative_error(jacobian, expected))
