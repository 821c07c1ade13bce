"""Measure one case in this (fresh) process: time and peak memory per phase.

Run as ``python -m jacbench.measure.worker SPEC_JSON``; prints one JSON record on the last line
of stdout. Thread counts are fixed before any framework is imported. Phases: import, inputs
(normals drawn, strategy prepared), cold call (tracing and compilation included), warm calls.

A spec's target is a registered strategy ({"framework", "strategy"}), a second-order method
({"framework", "second": name}), a simulation baseline ({"framework", "simulation":
execution}) or any callable ({"callable": "module:function"}, called with no arguments); its
"problem" (gbm, moments, moments-batch) and "params" give the case.
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import sys
import time
import traceback
from typing import Any

from jacbench.measure.memory import PhaseMemory, measure_phase

# The acceptance tolerances of the test suite: a larger error makes the row an error, not a time.
TOLERANCE = {"float32": 1e-4, "float64": 1e-10}


class WrongAnswer(Exception):
    """The Jacobian a strategy returned does not match the closed form."""


FRAMEWORK_MODULES = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax", "numpy": "numpy"}


def thread_environment(threads: int) -> dict[str, str]:
    """Variables that fix the thread pools of BLAS, OpenMP, TensorFlow and XLA."""
    k = str(threads)
    env = {
        "OMP_NUM_THREADS": k,
        "MKL_NUM_THREADS": k,
        "OPENBLAS_NUM_THREADS": k,
        "TF_NUM_INTRAOP_THREADS": k,
        "TF_NUM_INTEROP_THREADS": k,
        "TF_CPP_MIN_LOG_LEVEL": "3",
    }
    if threads == 1:
        env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return env


def _configure_framework(framework: str, threads: int) -> dict[str, Any]:
    """Import the framework and set its thread pools; return what was set."""
    mod = importlib.import_module(FRAMEWORK_MODULES[framework])
    info: dict[str, Any] = {"framework_version": getattr(mod, "__version__", "")}
    if framework == "torch":
        mod.set_num_threads(threads)
        mod.set_num_interop_threads(threads)
        info["torch_threads"] = mod.get_num_threads()
    elif framework == "tensorflow":
        mod.config.threading.set_intra_op_parallelism_threads(threads)
        mod.config.threading.set_inter_op_parallelism_threads(threads)
        info["tf_intra_op"] = mod.config.threading.get_intra_op_parallelism_threads()
    return info


def _target(spec: dict):
    """(builder of a no-argument callable, closed-form check or None) for the spec's target."""
    from jacbench.strategies import registry

    target = spec["target"]
    if "callable" in target:
        module, _, func = target["callable"].partition(":")
        fn = getattr(importlib.import_module(module), func)
        return (lambda: fn), None
    case = make_case(spec.get("problem", "gbm"), spec.get("params", {}))
    if "simulation" in target:
        if case.problem != "gbm":
            raise ValueError("simulation baselines exist for the gbm problem only")
        builder = registry.simulation(target["framework"], target["simulation"])
        return (lambda: builder(case)), None
    if "second" in target:
        from jacbench.second import registry as second

        method = second.get(target["framework"], target["second"])
        return (lambda: method.build(case)), lambda result: method.error(case, result)
    strategy = registry.get(target["framework"], target["strategy"])
    return (lambda: strategy.build(case)), lambda result: strategy.error(case, result)


def make_case(problem: str, params: dict):
    """The problem's case from its parameters (numpy only: no framework is imported here)."""
    from jacbench.problems import gbm, moments

    if problem == "gbm":
        return gbm.make_case(gbm.GBMParams(**params).validate())
    if problem in ("moments", "moments-batch"):
        case = moments.make_case(moments.MomentsParams(**params).validate())
        if case.problem != problem:
            raise ValueError(f"problem {problem} with batch={case.params.batch}")
        return case
    raise ValueError(f"unknown problem {problem!r}")


def _memory_fields(prefix: str, m: PhaseMemory) -> dict[str, Any]:
    return {
        f"{prefix}_rss_before": m.baseline,
        f"{prefix}_peak": m.peak,
        f"{prefix}_peak_over_baseline": m.over_baseline,
    }


def run(spec: dict) -> dict[str, Any]:
    """Measure the spec's target; never raises (an exception becomes status 'error')."""
    threads = int(spec.get("threads", 1))
    repeats = int(spec.get("repeats", 5))
    budget = float(spec.get("warm_budget_s", 10.0))
    rec: dict[str, Any] = {"status": "error", "message": "", "threads": threads}
    resets = []
    try:
        framework = spec["target"].get("framework")
        t0 = time.perf_counter()
        info, mem = measure_phase(
            lambda: _configure_framework(framework, threads) if framework else {}
        )
        rec.update(info, import_s=time.perf_counter() - t0, **_memory_fields("import", mem))
        resets.append(mem.reset)

        t0 = time.perf_counter()
        (call, check), mem = measure_phase(lambda: _prepare(spec))
        rec.update(inputs_s=time.perf_counter() - t0, **_memory_fields("inputs", mem))
        resets.append(mem.reset)

        t0 = time.perf_counter()
        result, mem = measure_phase(call)
        rec.update(cold_s=time.perf_counter() - t0, **_memory_fields("cold", mem))
        resets.append(mem.reset)
        if check is not None:
            rec["max_rel_error"] = error = check(result)
            tol = TOLERANCE[spec.get("params", {}).get("dtype", "float32")]
            if not error <= tol:
                del rec["cold_s"]
                raise WrongAnswer(
                    f"max relative error {error:.2e} against the closed form exceeds {tol:.0e}"
                )
        del result

        times: list[float] = []

        def warm():
            start = time.perf_counter()
            while len(times) < repeats and (not times or time.perf_counter() - start < budget):
                t = time.perf_counter()
                call()  # every strategy returns numpy arrays: asynchronous work has finished
                times.append(time.perf_counter() - t)

        _, mem = measure_phase(warm)
        resets.append(mem.reset)
        rec.update(
            # Peak of the warm calls over the resident memory before the first call: what the
            # strategy needs beyond its inputs, memory its allocator keeps between calls included.
            warm_peak_over_inputs=max(mem.peak - rec["cold_rss_before"], 0),
            warm_n=len(times),
            warm_median_s=statistics.median(times),
            warm_min_s=min(times),
            warm_max_s=max(times),
            **_memory_fields("warm", mem),
        )
        rec["status"] = "ok"
    except BaseException as e:  # noqa: BLE001 - any failure of the case is its result
        rec["message"] = f"{type(e).__name__}: {e}".strip()[:2000]
        rec["traceback"] = traceback.format_exc()[-4000:]
    rec["hwm_reset"] = all(resets) if resets else False
    return rec


def _prepare(spec: dict):
    build, check = _target(spec)
    return build(), check


def _die_with_parent() -> None:
    """Ask Linux to kill this worker if the harness dies: no case runs on without its cap."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _die_with_parent()
    spec = json.loads(argv[0])
    rec = run(spec)
    sys.stdout.write("\n" + json.dumps(rec) + "\n")
    sys.stdout.flush()
    # The record is out: skip the interpreter's teardown, which for TensorFlow and PyTorch
    # (thread pools, atexit hooks) takes up to a second and a half per case.
    os._exit(0)


def launch_environment(spec: dict) -> dict[str, str]:
    """Environment for a worker process: the parent's, with the spec's thread counts."""
    env = dict(os.environ)
    env.update(thread_environment(int(spec.get("threads", 1))))
    return env


if __name__ == "__main__":
    raise SystemExit(main())
