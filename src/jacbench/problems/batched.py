"""Batched functions and block-diagonal Jacobians, checked in a worker (the contract is in
problems.user).

A function of a batch, theta (B, d) and y led by B, has a block-diagonal Jacobian once both are
flattened: sample b's outputs depend on theta[b] alone. With ``advise --batch`` the probe takes the
framework's plain reverse loop over that flattened problem, refuses the function where an entry
off the diagonal blocks is not zero (it is not a batch), and keeps the (B, m', d) diagonal blocks
as the reference. Without it, the probe looks for the same structure in the dense derivative,
so that the advice can say when a reader flattened a batch into theta.

Imports numpy only; a framework is imported where a tensor of it is reshaped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from jacbench.problems import user
from jacbench.problems.user import ContractError, UserParams


def reshape(x: Any, shape: tuple[int, ...], framework: str) -> Any:
    """x reshaped, in its own framework."""
    if framework == "tensorflow":
        import tensorflow as tf

        return tf.reshape(x, shape)
    return x.reshape(shape)


def _flat(f: Callable, shape: tuple[int, int], framework: str) -> Callable:
    """f of the flattened inputs: theta of B * d entries, read as (B, d)."""

    def flat(theta, data):
        return f(reshape(theta, shape, framework), data)

    return flat


def flatten(params: UserParams, f: Callable, theta: Any, data: Any, framework: str):
    """(f, theta, (B, d)) of the flattened problem for a batched request: f of a 1-D theta,
    theta flattened; ContractError unless y is led by the B samples. (f, theta, None) unchanged
    otherwise."""
    if not params.batch:
        return f, theta, None
    shape = (int(theta.shape[0]), int(theta.shape[1]))
    try:
        y = user.fast(f, framework)(theta, data)
    except Exception as e:  # noqa: BLE001 - the reader's function failed
        raise ContractError(f"FUNCTION(theta, data) raised {type(e).__name__}: {e}") from None
    if user.framework_of(y) is None:
        raise ContractError(f"FUNCTION must return a tensor of outputs, got a {type(y).__name__}")
    if tuple(y.shape)[:1] != shape[:1]:
        raise ContractError(
            f"with --batch, FUNCTION must return y led by the {shape[0]:,} samples of theta "
            f"{shape}, got shape {tuple(y.shape)}"
        )
    return _flat(f, shape, framework), reshape(theta, (-1,), framework), shape


def _spans(jac: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows holding a non-zero entry, and the first and last column of one in each."""
    nonzero = jac != 0
    rows = np.flatnonzero(nonzero.any(axis=1))
    first = nonzero[rows].argmax(axis=1)
    last = jac.shape[1] - 1 - nonzero[rows, ::-1].argmax(axis=1)
    return rows, first, last


def _outside(spans, shape: tuple[int, int], blocks: int) -> tuple[int, int] | None:
    """(b, c) where block row b has a non-zero entry in block column c != b, cutting the
    (m, d) matrix into blocks x blocks equal blocks; None when every entry off the diagonal
    blocks is zero."""
    rows, first, last = spans
    height, width = shape[0] // blocks, shape[1] // blocks
    own = rows // height
    bad = (first // width != own) | (last // width != own)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    other = first[i] // width if first[i] // width != own[i] else last[i] // width
    return int(own[i]), int(other)


def diagonal_blocks(jac: np.ndarray, blocks: int) -> np.ndarray:
    """The (B, m', d) diagonal blocks of the flattened problem's (B m', B d) Jacobian;
    ContractError where an entry off them is not zero."""
    m, n = jac.shape
    found = _outside(_spans(jac), (m, n), blocks)
    if found is not None:
        b, c = found
        raise ContractError(
            f"with --batch, sample b's outputs must depend on theta[b] alone, but sample {b}'s "
            f"outputs depend on sample {c}'s inputs: this is not a batch"
        )
    index = np.arange(blocks)
    return jac.reshape(blocks, m // blocks, blocks, n // blocks)[index, :, index, :]


def _divisors(n: int) -> list[int]:
    """n's divisors above 1, largest first."""
    small = [k for k in range(2, math.isqrt(n) + 1) if n % k == 0]
    return sorted({*small, *(n // k for k in small), *([n] if n > 1 else [])}, reverse=True)


def blocks(jac: np.ndarray) -> dict[str, Any]:
    """Whether the (m, d) Jacobian is block-diagonal: the largest B > 1 that cuts it into B
    equal diagonal blocks (B dividing m and d) with every entry off them zero and one on them
    not, and a block's shape; None for both when there is none.

    Every divisor of gcd(m, d) is tried: the candidates a batch suggests (the leading dimension of
    data's tensors or of y) are among them. The largest that holds is the finest cut, each
    sample's own block where the samples are the batch.
    """
    m, d = jac.shape
    none = {"blocks": None, "block_shape": None}
    if not np.any(jac):
        return none
    spans = _spans(jac)
    for b in _divisors(math.gcd(m, d)):
        if _outside(spans, (m, d), b) is None:
            return {"blocks": b, "block_shape": [m // b, d // b]}
    return none


def reference(derivative: np.ndarray, batch: tuple[int, int] | None) -> np.ndarray:
    """What every strategy is checked against: the derivative, or for a batch its diagonal
    blocks (ContractError where the samples are coupled)."""
    return derivative if batch is None else diagonal_blocks(derivative, batch[0])


def found(params: UserParams, derivative: np.ndarray, batch: tuple[int, int] | None) -> dict:
    """The probe's record of the batch: its samples and a sample's inputs and outputs with
    --batch; without, the blocks of the Jacobian, where it has them."""
    if batch is not None:
        samples, d = batch
        per_sample = {"samples": samples, "inputs": d, "outputs": derivative.shape[0] // samples}
        return {"batch": per_sample, "blocks": None, "block_shape": None}
    if params.order != 1:
        return {"batch": None, "blocks": None, "block_shape": None}
    return {"batch": None, **blocks(derivative)}


def dense_on_batch(build: Callable, case) -> Callable[[], np.ndarray]:
    """An unbatched record on a batched case: its dense Jacobian of the flattened problem, cut
    to the diagonal blocks (what a reader who flattens the batch computes, measured beside).
    build(f) is the record's jacobian(theta, data) for a function f."""
    samples, m, d = case.shape
    jacobian = build(_flat(case.f, (samples, d), case.framework))
    theta, data = reshape(case.theta, (-1,), case.framework), case.data
    index = np.arange(samples)

    def call() -> np.ndarray:
        full = user.to_numpy(jacobian(theta, data)).reshape(samples, m, samples, d)
        return full[index, :, index, :]

    return call
