"""Generic strategies: ways to take the Jacobian (or Hessian) of any function a reader brings.

A reader's function follows one contract (problems.user): ``f(theta, data) -> y``, theta a 1-D
tensor of the d inputs, data anything passed through (normals, weights, a batch), y a tensor of
m outputs of any shape, read flattened. Each record here is one way to differentiate it, as data,
like the GBM's registry: its framework, name, mode, whether it maps over rows or compiles, the
API call in one line, and ``code``: the Python source a reader pastes.

``code`` is complete except for the reader's function, which it calls as ``f``. It imports what
it needs and defines ``jacobian(theta, data)`` returning the framework's tensor, (m, d) for a
Jacobian (order 1), (d, d) for a Hessian (order 2, f returning one value). The worker runs that
same source (``build``): what is printed is what was measured and checked.

Per-row records (``per_row``) treat the leading dimension of data's largest tensor (by entries,
the first of those tied; problems.user.rows_of) as rows, not a weight matrix passed beside: every
tensor of data with that leading dimension is split by row, the rest passed whole, and f is called
on one row at a time (kept as a batch of one), row i giving output i. They apply only when y has
one entry per row; the advice refuses them when the per-row Jacobian differs from the full one
(the rows are coupled: a batch mean, a control variate, a normalisation).

Batched records (``batched``, strategies.generic.batched) take the per-sample Jacobians of a
function of a batch, theta (B, d) and y led by B, and return the (B, m', d) diagonal blocks. They
are listed only where asked for (``batched=True``); every other listing leaves them out.

Importing this module never imports a framework: records hold source text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jacbench.errors import UsageError
from jacbench.strategies.generic.record import GENERIC_FRAMEWORKS, MODES, Generic

__all__ = [
    "GENERIC_FRAMEWORKS",
    "MODES",
    "Generic",
    "all_records",
    "BASELINE",
    "answer",
    "baseline",
    "build",
    "find",
    "get",
    "reference",
]


def _records() -> tuple[Generic, ...]:
    from jacbench.strategies.generic import (
        batched,
        jax_records,
        tensorflow_records,
        torch_records,
    )

    return (
        *torch_records.RECORDS,
        *jax_records.RECORDS,
        *tensorflow_records.RECORDS,
        *batched.RECORDS,
    )


def all_records(
    framework: str | None = None, order: int | None = None, batched: bool | None = False
) -> list[Generic]:
    """Every generic record, of a framework and an order where given: the unbatched ones, the
    batched ones (batched=True), or both (None)."""
    return [
        r
        for r in _records()
        if (framework is None or r.framework == framework)
        and (order is None or r.order == order)
        and (batched is None or r.batched == batched)
    ]


def get(framework: str, name: str, order: int = 1) -> Generic:
    """The record; UsageError naming the choices for an unknown one."""
    for r in all_records(framework, order, batched=None):
        if r.name == name:
            return r
    valid = ", ".join(r.name for r in all_records(framework, order, batched=None))
    what = "Hessian method" if order == 2 else "strategy"
    raise UsageError(f"unknown {what} {name!r} for {framework}; choose one of: {valid}")


# The function itself, called as the reader calls it (under jax.jit in JAX, as problems.user's
# checks call it): the baseline a strategy's time is read against, in calls of the function.
BASELINE = "function"


def baseline(framework: str) -> Generic:
    """The record a worker measures the function itself under (not a strategy: no derivative)."""
    call = "jax.jit(f)(theta, data)" if framework == "jax" else "f(theta, data)"
    return Generic(framework, BASELINE, "function", call,
                   "The function itself, one call: the unit a strategy's time is read in.",
                   "def jacobian(theta, data):\n    return f(theta, data)\n")  # fmt: skip


def find(framework: str, name: str) -> Generic:
    """The record of that name, of either order (names are unique within a framework), or the
    function itself (BASELINE)."""
    if name == BASELINE:
        return baseline(framework)
    for r in all_records(framework, batched=None):
        if r.name == name:
            return r
    valid = ", ".join(r.name for r in all_records(framework, batched=None))
    raise UsageError(f"unknown strategy {name!r} for {framework}; choose one of: {valid}")


def answer(framework: str, role: str) -> Generic:
    """The framework's record of that role (forward or pathwise)."""
    (found,) = [r for r in all_records(framework, 1) if r.answer == role]
    return found


def reference(framework: str, order: int = 1) -> Generic:
    """The framework's plain reverse loop of that order."""
    (ref,) = [r for r in all_records(framework, order) if r.reference]
    return ref


def build(record: Generic, f: Callable) -> Callable[[Any, Any], Any]:
    """The record's jacobian(theta, data), its source run with the reader's function as f."""
    import linecache

    filename = f"<jacbench {record.key}>"
    # Registered as a file's lines: tf.function's AutoGraph reads a function's source to convert
    # its Python branches, as it would in the reader's file.
    lines = record.code.splitlines(keepends=True)
    linecache.cache[filename] = (len(record.code), None, lines, filename)
    namespace: dict[str, Any] = {"f": f, "__name__": f"jacbench_generic_{record.framework}"}
    exec(compile(record.code, filename, "exec"), namespace)  # noqa: S102
    return namespace["jacobian"]
