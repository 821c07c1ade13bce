"""The tall-to-wide crossover: forward against reverse Jacobian time as m x n moves, m * n fixed.

Each framework runs in its own process (``python -m jacbench.crossover --framework F``), which
prints one JSON row per shape and mode; ``jacbench crossover`` runs them all and reports, per
framework, the shape where reverse mode starts to beat forward mode.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

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
    """The aspect m / n from which reverse mode beats forward mode at every wider shape.

    Going from tall to wide, the tallest shape where reverse is faster there and at every
    shape after it: a single noisy shape where reverse happens to win does not count.
    """
    by_shape: dict[tuple[int, int], dict[str, float]] = {}
    for r in rows:
        by_shape.setdefault((r["outputs"], r["inputs"]), {})[r["mode"]] = r["warm_median_s"]
    shapes = [(m, n) for (m, n), t in by_shape.items() if "forward" in t and "reverse" in t]
    found = None
    for m, n in sorted(shapes, key=lambda s: s[0] / s[1]):  # from wide to tall
        t = by_shape[(m, n)]
        if t["reverse"] >= t["forward"]:
            break
        found = m / n
    return found


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


FIELDS = ("framework", "mode", "outputs", "inputs", "cold_s", "warm_median_s", "max_rel_error")


def path_for(results: Path) -> Path:
    """Where a sweep's crossover rows live: beside its results, results/PROFILE.crossover.csv."""
    return results.with_name(results.stem + ".crossover.csv")


def write_csv(rows: list[dict], out: Path) -> Path:
    """Write the rows atomically (a half-written file is never left behind)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(buf.getvalue())
    os.replace(tmp, out)
    return out


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("outputs", "inputs"):
            r[k] = int(r[k])
        for k in ("cold_s", "warm_median_s", "max_rel_error"):
            r[k] = float(r[k])
    return rows


def run_profile(spec: dict, results: Path, frameworks=("torch", "tensorflow", "jax")) -> Path:
    """Measure a profile's crossover (its "crossover" entry) beside its results, unless the
    file is already there; returns the file."""
    out = path_for(results)
    if out.exists():
        return out
    c = {"total": 1024, "steps": 7, "repeats": 5, **spec.get("crossover", {})}
    rows = run_all(list(frameworks), int(c["total"]), int(c["steps"]), int(c["repeats"]), 2.0)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_csv(rows, out)


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
