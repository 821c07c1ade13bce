"""Reverse mode with a tape: record every operation forward, then sweep adjoints backward.

One backward sweep gives one vector-Jacobian product u·J for the cotangent u seeded on the
output; a full Jacobian with m outputs takes m sweeps (or one sweep carrying m cotangents).
Every intermediate value that a local derivative needs stays on the tape until the sweep:
that is what reverse mode must store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Tape:
    """The operations recorded by a forward pass, in order."""

    entries: list[tuple[str, Var, list[tuple[Var, object]]]] = field(default_factory=list)

    def stored_bytes(self) -> int:
        """Bytes of the local derivatives kept for the backward sweep."""
        total = 0
        for _, _, parents in self.entries:
            for _, local in parents:
                total += np.asarray(local).nbytes
        return total


@dataclass(eq=False)
class Var:
    """A value recorded on a tape, with its adjoint filled in by backward()."""

    value: np.ndarray | float
    tape: Tape
    name: str = ""
    adjoint: np.ndarray | float = 0.0

    def _record(self, op: str, value, parents: list[tuple[Var, object]]) -> Var:
        out = Var(value, self.tape)
        self.tape.entries.append((op, out, parents))
        return out

    def _lift(self, x) -> Var:
        return x if isinstance(x, Var) else Var(x, self.tape, name="const")

    def __add__(self, other) -> Var:
        o = self._lift(other)
        return self._record("add", self.value + o.value, [(self, 1.0), (o, 1.0)])

    __radd__ = __add__

    def __sub__(self, other) -> Var:
        o = self._lift(other)
        return self._record("sub", self.value - o.value, [(self, 1.0), (o, -1.0)])

    def __rsub__(self, other) -> Var:
        return self._lift(other) - self

    def __mul__(self, other) -> Var:
        o = self._lift(other)
        # Local derivatives of u*v: v for u, u for v; both values are kept on the tape.
        return self._record("mul", self.value * o.value, [(self, o.value), (o, self.value)])

    __rmul__ = __mul__

    def __pow__(self, k: float) -> Var:
        return self._record("pow", self.value**k, [(self, k * self.value ** (k - 1))])


def exp(x: Var) -> Var:
    e = np.exp(x.value)
    return x._record("exp", e, [(x, e)])


def _reduce_to(shape, g):
    """Sum a broadcast adjoint back to the shape of the value it belongs to."""
    g = np.asarray(g)
    if np.shape(g) == tuple(shape):
        return g
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def depends_on(tape: Tape) -> list[tuple[str, ...]]:
    """For each recorded operation, the names of the inputs its output depends on (x0, x1, ...),
    followed through the operations recorded before it."""
    found: dict[int, tuple[str, ...]] = {}
    out = []
    for _, v, parents in tape.entries:
        names = set()
        for parent, _ in parents:
            if parent.name.startswith("x"):
                names.add(parent.name)
            names.update(found.get(id(parent), ()))
        found[id(v)] = tuple(sorted(names))
        out.append(found[id(v)])
    return out


def backward(output: Var, cotangent) -> None:
    """Sweep the tape in reverse from output seeded with cotangent (u in u·J)."""
    for _, v, _ in output.tape.entries:
        v.adjoint = 0.0
    output.adjoint = np.asarray(cotangent, dtype=float)
    for _, out, parents in reversed(output.tape.entries):
        for parent, local in parents:
            contribution = _reduce_to(np.shape(parent.value), out.adjoint * local)
            parent.adjoint = parent.adjoint + contribution


def vjp(f, primals: tuple, cotangent) -> tuple:
    """(f(primals), cotangent·J, tape) by one forward recording and one backward sweep."""
    tape = Tape()
    inputs = [Var(np.asarray(p, dtype=float), tape, name=f"x{i}") for i, p in enumerate(primals)]
    out = f(*inputs)
    backward(out, cotangent)
    return out.value, tuple(np.asarray(x.adjoint) for x in inputs), tape
