"""Numpy for the moments problem: the closed form (the question's answer 3)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from jacbench.problems import moments
from jacbench.problems.moments import MomentsCase
from jacbench.strategies.registry import JacobianResult


def build_analytic(case: MomentsCase) -> Callable[[], JacobianResult]:
    x = case.x

    def run() -> JacobianResult:
        j = np.stack([k * x ** (k - 1) for k in moments.POWERS], axis=-2)
        return JacobianResult(j, moments.evaluate(x))

    return run
