"""Check a reader's function against the contract, in a worker, before anything is measured.

At the smallest size: the factory returns (theta, data), the same on every call; the function
returns a finite tensor, the same on every call (no random draws inside); and it has a derivative
that the framework's plain reverse loop can take. That derivative is saved for every strategy to
be checked against, and is itself checked against central finite differences in float64 along a
few directions, where the function computes in float64. A broken contract is a record with
status "contract" and one line; the advice stops there, exit status 2, nothing written.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from jacbench.problems import batched, user
from jacbench.problems.user import ContractError, UserParams
from jacbench.strategies import generic

# The function's own time: the median of this many warm calls.
FUNCTION_CALLS = 5
# The boundary check (one output per row): each input bumped by this share of itself, and a
# jump found where the mean gap between the bumped and per-row derivatives exceeds this many
# standard errors and this share of the derivative.
BUMP = 1e-2
BOUNDARY_SE = 3.0
BOUNDARY_SHARE = 0.01


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    scale = float(np.max(np.abs(a))) if a.size else 0.0
    return bool(np.max(np.abs(a - b), initial=0.0) <= user.DETERMINISM_RTOL * max(scale, 1e-30))


def _arrays(tree: Any) -> list[np.ndarray]:
    return [user.to_numpy(x) for x in user.leaves(tree) if user.framework_of(x)]


def _check_factory(params: UserParams, theta: Any, data: Any) -> None:
    _, theta2, data2, _ = user.example(params)
    first, second = (
        [user.to_numpy(theta), *_arrays(data)],
        [
            user.to_numpy(theta2),
            *_arrays(data2),
        ],
    )
    if len(first) != len(second) or not all(map(_same, first, second)):
        raise ContractError(
            f"FACTORY({params.n}) gave different values on a second call: seed its random "
            "draws so that every call builds the same example"
        )


def _directions(d: int) -> np.ndarray:
    """Unit vectors while d is small, else a few random directions of unit length."""
    if d <= user.FD_DIRECTIONS:
        return np.eye(d)
    v = np.random.default_rng(0).standard_normal((user.FD_DIRECTIONS, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def finite_differences(f, theta, data, framework: str, derivative: np.ndarray, order: int) -> dict:
    """The derivative along a few directions against central differences in float64: the
    largest relative error, or why the check did not run."""
    if framework == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    try:
        t64, d64 = user.as_float64(theta, framework), user.as_float64(data, framework)
        y0 = f(t64, d64)
        if "float64" not in str(y0.dtype):
            return {"fd_status": f"not run: the function computes in {y0.dtype} given float64"}
        size = np.abs(user.to_numpy(t64))
        dirs = _directions(derivative.shape[1])
        estimates, exact, steps = [], [], []
        for v in dirs:
            # A step relative to the inputs the direction moves (0.04 and 100 get their own).
            h = user.FD_STEP[order] * (float(size @ np.abs(v)) or 1.0)
            steps.append(h)
            plus = user.to_numpy(f(user.shift(t64, v, h, framework), d64)).reshape(-1)
            minus = user.to_numpy(f(user.shift(t64, v, -h, framework), d64)).reshape(-1)
            if order == 1:
                estimates.append((plus - minus) / (2 * h))
                exact.append(derivative @ v)
            else:
                mid = user.to_numpy(y0).reshape(-1)
                estimates.append((plus - 2 * mid + minus) / h**2)
                exact.append(np.atleast_1d(v @ derivative @ v))
    except Exception as e:  # noqa: BLE001 - the function refused float64: no check
        return {"fd_status": f"not run: in float64 the function raised {type(e).__name__}: {e}"}
    exact, estimates = np.array(exact), np.array(estimates)
    err = user.relative_error(exact, estimates)
    # Per output: a kink (max(v, 0), a payoff's strike) near one output's path spoils its
    # differences alone; the share of outputs that agree says whether the rest do.
    scale = np.max(np.abs(estimates), axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    per_output = np.max(np.abs(exact - estimates) / scale, axis=0)
    agree = float(np.mean(per_output <= user.FD_AGREE))
    return {"fd_status": "ok", "fd_error": err, "fd_agree": agree, "fd_directions": len(dirs),
            "fd_step": max(steps)}  # fmt: skip


def largest_bytes(data: Any) -> int | None:
    """The bytes of data's largest tensor (None without one): what the advice carries to
    other sizes against glibc's mmap threshold (advise.fit.crosses)."""
    sizes = [
        int(np.prod(tuple(x.shape))) * np.dtype(user.dtype_name(x)).itemsize
        for x in user.leaves(data)
        if user.framework_of(x) and user.dtype_name(x) in np.sctypeDict
    ]
    return max(sizes, default=None)


def function_time(call, theta, data, calls: int = FUNCTION_CALLS) -> float:
    """The median of a few warm calls of the function itself (waiting for its result)."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        user.to_numpy(call(theta, data))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def boundary(call, theta, data, framework: str, derivative: np.ndarray) -> dict:
    """Whether the mean over rows of the per-row Jacobian is the derivative of the mean output:
    each input bumped up and down by BUMP of itself on the same data (bump and reprice), the
    per-row differences set beside the per-row derivatives. Where the function jumps (a
    barrier, a digital), the rows that cross it carry a boundary term the per-row derivative
    misses: their mean differs beyond its standard error and by more than BOUNDARY_SHARE."""
    if framework == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    try:
        t64, d64 = user.as_float64(theta, framework), user.as_float64(data, framework)
        size = np.abs(user.to_numpy(t64))
        found = []
        for j in range(derivative.shape[1]):
            h = BUMP * (float(size[j]) or 1.0)
            unit = np.eye(derivative.shape[1])[j]
            plus = user.to_numpy(call(user.shift(t64, unit, h, framework), d64)).reshape(-1)
            minus = user.to_numpy(call(user.shift(t64, unit, -h, framework), d64)).reshape(-1)
            bumped = (plus.astype(np.float64) - minus) / (2 * h)
            gap = bumped - derivative[:, j]
            error = float(np.std(gap, ddof=1) / np.sqrt(len(gap)))
            mean_gap = float(np.mean(gap))
            scale = max(abs(float(np.mean(bumped))), abs(float(np.mean(derivative[:, j]))))
            jumps = abs(mean_gap) > BOUNDARY_SE * error and abs(mean_gap) > BOUNDARY_SHARE * scale
            found.append({"input": j, "per_row_mean": float(np.mean(derivative[:, j])),
                          "bumped_mean": float(np.mean(bumped)), "standard_error": error,
                          "step": h, "jumps": bool(jumps)})  # fmt: skip
    except Exception as e:  # noqa: BLE001 - the function refused the bumped inputs: no check
        return {"status": f"not run: {type(e).__name__}: {e}"}
    return {"status": "ok", "inputs": found, "jumps": any(x["jumps"] for x in found)}


def floor_size(p: UserParams, seconds: float, grow: dict) -> dict[str, Any]:
    """The size from which the function's own call takes grow["floor_s"]: from p.n, n grows
    (by the factor the time falls short, between 2x and 10x) and the function is timed again,
    until it does, a call passes grow["budget_s"], or n reaches grow["max_n"]."""
    import dataclasses

    n, took = p.n, seconds
    while took < grow["floor_s"] and n < grow["max_n"]:
        factor = min(10.0, max(2.0, 1.2 * grow["floor_s"] / max(took, 1e-9)))
        n = min(int(grow["max_n"]), int(n * factor))
        at = dataclasses.replace(p, n=n)
        f, theta, data, framework = user.example(at)
        f, theta, _ = batched.flatten(at, f, theta, data, framework)
        took = function_time(user.fast(f, framework), theta, data)
        if took > grow["budget_s"]:
            break
    return {"floor_n": n, "floor_n_s": took}


def probe(params: dict) -> dict[str, Any]:
    """What the advice needs to know of the reader's function at the smallest size, and, where
    params["grow"] asks, the size from which its own call takes the floor (floor_size); raises
    ContractError where the contract is broken."""
    params = dict(params)
    grow = params.pop("grow", None)
    p = UserParams(**params).validate()
    f, theta, data, framework = user.example(p)
    _check_factory(p, theta, data)
    f, theta, batch = batched.flatten(p, f, theta, data, framework)  # --batch: theta (B, d) flat
    call = user.fast(f, framework)
    y = user.evaluate(call, theta, data)
    if not _same(y, user.evaluate(call, theta, data)):
        raise ContractError(
            "FUNCTION gave different outputs on two calls with the same inputs: draw its "
            "random numbers outside it (in FACTORY) and pass them in data"
        )
    d, m = int(theta.shape[0]), int(y.size)
    if p.order == 2 and m != 1:
        raise ContractError(f"--hessian needs a function of one output; this one has {m}")
    ref = generic.reference(framework, p.order)
    shape = (d, d) if p.order == 2 else (m, d)
    start = time.perf_counter()
    try:
        derivative = user.to_numpy(generic.build(ref, f)(theta, data)).reshape(shape)
    except Exception as e:  # noqa: BLE001 - the framework cannot differentiate it at all
        raise ContractError(
            f"the plain reverse loop ({ref.call}) failed on FUNCTION: {type(e).__name__}: {e}"
        ) from None
    took = time.perf_counter() - start
    bad = int(np.sum(~np.isfinite(derivative)))
    if bad:
        raise ContractError(f"the derivative has {bad} NaN or infinite entries at n={p.n}")
    checked = batched.reference(derivative, batch)  # with --batch, the (B, m', d) blocks
    if p.reference:
        np.save(p.reference, checked)
    record = {
        "framework": framework,
        "dtype": user.dtype_name(theta),
        "inputs": d,
        "outputs": m,
        "output_shape": list(np.shape(user.to_numpy(call(theta, data)))),
        "rows": user.rows_of(data),
        "reference": ref.name,
        "reference_s": took,
        "derivative_zero": bool(not np.any(derivative)),
    }
    record["function_s"] = function_time(call, theta, data)
    record["data_bytes"] = largest_bytes(data)
    record.update(batched.found(p, derivative, batch))
    record.update(finite_differences(call, theta, data, framework, derivative, p.order))
    if p.order == 1 and batch is None and record["rows"] == m and m > 1:
        record["boundary"] = boundary(call, theta, data, framework, derivative)
    if grow:
        record.update(floor_size(p, record["function_s"], grow))
    return record
