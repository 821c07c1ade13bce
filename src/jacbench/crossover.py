"""The tall-to-wide crossover: forward against reverse Jacobian time as m x n moves, m * n fixed.

Each framework runs in its own process (``python -m jacbench.crossover --framework F``), which
prints one JSON row per shape and mode; ``jacbench crossover`` runs them all and reports, per
framework, the shape where reverse mode starts to beat forward mode.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

from jacbench.problems import shapes

MODES = ("forward", "reverse")


def builder(framework: str, w: np.ndarray, x: np.ndarray, mode: str) -> Callable[[], np.ndarray]:
    """A callable computing the (m, n) Jacobian of tanh(W x) by forward or reverse mode."""
    if framework == "torch":
        import torch

        wt, xt = torch.from_numpy(w), torch.from_numpy(x)
        transform = torch.func.jacfwd if mode == "forward" else torch.func.jacrev
        jac = transform(lambda v: torch.tanh(wt @ v))
        return lambda: jac(xt).numpy()
    if framework == "jax":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)  # float64 inputs stay float64
        wj, xj = jnp.asarray(w), jnp.asarray(x)
        transform = jax.jacfwd if mode == "forward" else jax.jacrev
        jac = jax.jit(transform(lambda v, w: jnp.tanh(w @ v)))
        return lambda: np.asarray(jac(xj, wj))
    if framework == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        wt, xt = tf.constant(w), tf.constant(x)
        n = x.shape[0]

        def f(v):
            return tf.tanh(tf.linalg.matvec(wt, v))

        if mode == "reverse":

            def rev():
                with tf.GradientTape() as tape:
                    tape.watch(xt)
                    y = f(xt)
                return tape.jacobian(y, xt).numpy()

            return rev

        def column(e):
            with tf.autodiff.ForwardAccumulator(primals=xt, tangents=e) as acc:
                y = f(xt)
            return acc.jvp(y)

        basis = tf.eye(n, dtype=wt.dtype)
        # pfor over the n unit tangents: n JVPs in one vectorized pass.
        return lambda: tf.transpose(tf.vectorized_map(column, basis)).numpy()
    if framework == "numpy":
        return lambda: shapes.jacobian_closed_form(w, x).astype(w.dtype)
    raise ValueError(f"unknown framework {framework!r}")


def measure(framework: str, total: int, steps: int, repeats: int, budget: float) -> list[dict]:
    """Cold and warm median time of both modes for every shape, checked against the closed form."""
    rows = []
    for m, n in shapes.shapes(total, steps):
        w, x = shapes.make(n, m)
        reference = shapes.jacobian_closed_form(w, x)
        for mode in MODES:
            run = builder(framework, w, x, mode)
            t0 = time.perf_counter()
            j = run()
            cold = time.perf_counter() - t0
            error = float(np.max(np.abs(j - reference)) / np.max(np.abs(reference)))
            times: list[float] = []
            start = time.perf_counter()
            while len(times) < repeats and (not times or time.perf_counter() - start < budget):
                t0 = time.perf_counter()
                run()
                times.append(time.perf_counter() - t0)
            rows.append(
                {
                    "framework": framework,
                    "mode": mode,
                    "outputs": m,
                    "inputs": n,
                    "cold_s": cold,
                    "warm_median_s": statistics.median(times),
                    "max_rel_error": error,
                }
            )
    return rows


def crossover(rows: list[dict]) -> float | None:
    """The aspect m / n where reverse mode first beats forward mode, going from tall to wide."""
    by_shape: dict[tuple[int, int], dict[str, float]] = {}
    for r in rows:
        by_shape.setdefault((r["outputs"], r["inputs"]), {})[r["mode"]] = r["warm_median_s"]
    for (m, n), t in sorted(by_shape.items(), key=lambda kv: -kv[0][0] / kv[0][1]):
        if "forward" in t and "reverse" in t and t["reverse"] < t["forward"]:
            return m / n
    return None


def run_all(frameworks: list[str], total: int, steps: int, repeats: int, budget: float,
            threads: int = 1) -> list[dict]:  # fmt: skip
    """Each framework in its own process, with thread pools fixed before import."""
    from jacbench.measure.worker import thread_environment

    rows: list[dict] = []
    for fw in frameworks:
        env = {**os.environ, **thread_environment(threads)}
        cmd = [sys.executable, "-m", "jacbench.crossover", "--framework", fw,
               "--total", str(total), "--steps", str(steps),
               "--repeats", str(repeats), "--budget", str(budget)]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        got = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not got:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"crossover for {fw} failed: {tail}")
        rows += got
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="one framework's crossover rows as JSON lines")
    ap.add_argument("--framework", required=True)
    ap.add_argument("--total", type=int, default=2**12)
    ap.add_argument("--steps", type=int, default=9)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--budget", type=float, default=2.0)
    a = ap.parse_args(argv)
    for row in measure(a.framework, a.total, a.steps, a.repeats, a.budget):
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
