"""Forward mode with dual numbers: carry (value, tangent) through every operation.

One pass gives one Jacobian-vector product J·v for the tangent v seeded on the inputs; a full
Jacobian with n inputs takes n passes (or one pass carrying n tangents).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Dual:
    """A value and its tangent (directional derivative), both scalars or numpy arrays."""

    value: np.ndarray | float
    tangent: np.ndarray | float = 0.0

    @staticmethod
    def lift(x) -> Dual:
        return x if isinstance(x, Dual) else Dual(x, 0.0)

    def __add__(self, other) -> Dual:
        o = Dual.lift(other)
        return Dual(self.value + o.value, self.tangent + o.tangent)

    __radd__ = __add__

    def __neg__(self) -> Dual:
        return Dual(-self.value, -self.tangent)

    def __sub__(self, other) -> Dual:
        return self + (-Dual.lift(other))

    def __rsub__(self, other) -> Dual:
        return Dual.lift(other) - self

    def __mul__(self, other) -> Dual:
        o = Dual.lift(other)
        # Product rule: d(uv) = u dv + v du.
        return Dual(self.value * o.value, self.value * o.tangent + o.value * self.tangent)

    __rmul__ = __mul__

    def __pow__(self, k: float) -> Dual:
        return Dual(self.value**k, k * self.value ** (k - 1) * self.tangent)


def exp(x) -> Dual:
    x = Dual.lift(x)
    e = np.exp(x.value)
    return Dual(e, e * x.tangent)


def jvp(f, primals: tuple, tangents: tuple) -> tuple:
    """(f(primals), J·tangents) by one forward pass of dual numbers."""
    out = f(*(Dual(p, t) for p, t in zip(primals, tangents, strict=True)))
    return out.value, out.tangent
