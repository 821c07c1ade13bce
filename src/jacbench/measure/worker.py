"""Measure one case in this (fresh) process: time and peak memory per phase.

Run as ``python -m jacbench.measure.worker SPEC_JSON``; prints one JSON record on the last line
of stdout. Thread counts are fixed before any framework is imported. Phases: import, inputs
(inputs made, target prepared), cold call (tracing and compilation included), warm calls, and,
for a target with a simulation baseline, paired calls: the target and its baseline timed
alternately (A B, then B A, ...), so both see the same machine load and their ratio does not
move with it. A record is printed after the warm calls too, so a kill during the paired calls
loses only the ratio.

Every timed call also counts the minor page faults the process took during it: under glibc's
malloc a call of 10^4 to 10^6 paths may find the memory of its last call given back to the
kernel and fault it in again, page by page, and how much depends on the process (see
paired_calls). An extra worker of a case (spec "extra") makes the warm calls and the pairs
only: the runner pools its calls with the first worker's.

The spec names its target in the string form of a results row (``{"framework", "name"}``),
parsed by measure.targets like everywhere else; "problem" and "params" give the case, "device"
where it computes. On a GPU every timed call waits for the device before the clock stops
(strategies.devices.synchronized), the result is brought to the host for the check after it, and
the device's peak memory is read per phase beside the resident memory. A target the second
question timed (its ``question_timed`` role) is also timed as it timed it: the clock stopped when
the call returns, nothing waited for (unsynced_median_s).
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from jacbench.constants import TOLERANCE
from jacbench.measure import compile_cost, gpu_memory, heap
from jacbench.measure.memory import PhaseMemory, measure_phase
from jacbench.strategies import devices


class WrongAnswer(Exception):
    """The result a target returned does not match the closed form."""


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


def _configure_framework(framework: str | None, threads: int, device: str) -> dict[str, Any]:
    """Import the framework, set its thread pools and make the case's device its default
    (strategies.devices.configure); return what was set."""
    if framework is None:
        return {}
    if framework == "torch":  # before anything compiles: no case finds another's kernels
        compile_cost.fresh_worker_cache()
    mod = importlib.import_module(framework)
    devices.configure(framework, device)
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


def _memory_fields(prefix: str, m: PhaseMemory) -> dict[str, Any]:
    return {
        f"{prefix}_rss_before": m.baseline,
        f"{prefix}_peak": m.peak,
        f"{prefix}_peak_over_baseline": m.over_baseline,
    }


def _faults() -> int:
    """Minor page faults this process has taken so far (every thread's)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _timed(fn: Callable[[], Any], faults: list[int] | None = None) -> float:
    """Seconds one call of fn took; with a list, the page faults it took are appended to it."""
    before = _faults()
    start = time.perf_counter()
    fn()  # numpy arrays, or synchronized on a GPU: asynchronous work has finished
    took = time.perf_counter() - start
    if faults is not None:
        faults.append(_faults() - before)
    return took


# Past the warm-call budget a worker still makes MIN_CALLS warm calls and MIN_CALLS pairs (a
# median of one or two calls has no spread to speak of), unless one warm call takes
# LONG_CALL_S or more: then it stops where the budget does, and the row's warm_n says how many
# it made. Pairs are always made MIN_CALLS times, a ratio from fewer being no ratio, and up to
# MIN_PAIRS while the pairs so far took less than MIN_PAIRS_WITHIN_S.
MIN_CALLS = 3
LONG_CALL_S = 30.0
MIN_PAIRS = 5
MIN_PAIRS_WITHIN_S = 30.0


def _repeat(
    body: Callable[[int], None],
    count: Callable[[], int],
    repeats: int,
    budget: float,
    at_least: int = MIN_CALLS,
    unless_slower_than: float = LONG_CALL_S,
    prefer: int = 0,
    prefer_within: float = 0.0,
):
    """Run body(i) until repeats runs or the budget is spent, but past the budget on to
    at_least runs while no run took unless_slower_than seconds or more, and on to prefer runs
    while less than prefer_within seconds have gone."""
    start = time.perf_counter()
    slowest = 0.0
    i = 0
    while count() < repeats:
        spent = time.perf_counter() - start
        n = count()
        if n > 0 and spent >= budget:
            owed = n < at_least and slowest < unless_slower_than
            wanted = n < prefer and spent < prefer_within
            if not (owed or wanted):
                break
        began = time.perf_counter()
        body(i)
        slowest = max(slowest, time.perf_counter() - began)
        i += 1


class Pairs:
    """Calls of a target and its baseline made one right after the other, the order alternating
    (A B, B A, ...) so that neither always runs on the other's warm caches: each pair's times,
    their ratio and the page faults of each side's calls."""

    def __init__(self):
        self.target: list[float] = []
        self.baseline: list[float] = []
        self.target_faults: list[int] = []
        self.baseline_faults: list[int] = []

    @property
    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.target, self.baseline, strict=True)]

    def fields(self) -> dict[str, list[float]]:
        """What the worker reports: the ratios and both sides' times and faults (the runner
        pools them)."""
        return {
            "ratio_values": self.ratios,
            "pair_target_values": self.target,
            "pair_baseline_values": self.baseline,
            "pair_target_fault_values": self.target_faults,
            "pair_baseline_fault_values": self.baseline_faults,
        }


# A side of a pair whose last call took less than this is called once more, untimed, right
# before its timed call (a "settled" pair): each side is then timed in the state its own call
# leaves, as its warm calls are. Without it the call after the other side's pays for what that
# one left: a 3 ms simulation timed after a 1 s Jacobian finds its data out of cache and took
# 1.5 to 6 ms (ratio spreads of 3x), and a 15 ms torch simulation at 10^5 paths timed after a
# Jacobian that left glibc's heap large took none of the page faults it takes after itself,
# so its pairs ran 3x faster than its own warm calls. Sides slower than this pay for the
# settling call more than they gain: their state is their own data's size anyway.
SETTLE_BELOW_S = 1.0


def paired_calls(call, baseline, repeats: int, budget: float) -> Pairs:
    """At least MIN_CALLS pairs of calls, whatever they take; see _repeat for the rest. Each
    side is settled (see SETTLE_BELOW_S) while its calls are quick."""
    pairs = Pairs()
    last = {"target": 0.0, "baseline": 0.0}

    def side(fn, name: str) -> None:
        if last[name] < SETTLE_BELOW_S:
            fn()
        took = _timed(fn, getattr(pairs, f"{name}_faults"))
        getattr(pairs, name).append(took)
        last[name] = took

    def pair(i: int) -> None:
        order = ("target", "baseline") if i % 2 == 0 else ("baseline", "target")
        for name in order:
            side(call if name == "target" else baseline, name)

    _repeat(pair, lambda: len(pairs.target), repeats, budget, at_least=MIN_CALLS,
            unless_slower_than=float("inf"), prefer=MIN_PAIRS,
            prefer_within=MIN_PAIRS_WITHIN_S)  # fmt: skip
    return pairs


def _emit(rec: dict[str, Any]) -> None:
    sys.stdout.write("\n" + json.dumps(rec) + "\n")
    sys.stdout.flush()


def run(spec: dict, emit: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Measure the spec's target; never raises (an exception becomes status 'error')."""
    from jacbench.measure import targets

    threads = int(spec.get("threads", 1))
    repeats = int(spec.get("repeats", 5))
    budget = float(spec.get("warm_budget_s", 10.0))
    device = spec.get("device", "cpu")
    rec: dict[str, Any] = {"status": "error", "message": "", "threads": threads}
    if "probe" in spec:
        return _probe(spec["probe"], rec)
    resets = []
    try:
        target = targets.parse(spec["target"]["framework"], spec["target"]["name"])
        baseline = (
            targets.parse(spec["target"]["framework"], spec["baseline"])
            if spec.get("baseline")
            else None
        )
        t0 = time.perf_counter()
        info, mem = measure_phase(lambda: _configure_framework(target.imports, threads, device))
        rec.update(info, import_s=time.perf_counter() - t0, **_memory_fields("import", mem))
        resets.append(mem.reset)
        gpu = devices.device_memory(target.imports, device)  # None on the CPU

        case = (
            None
            if target.kind == "callable"
            else target.make_case(spec["problem"], spec["params"], device)
        )
        if spec.get("extra"):
            call = gpu_memory.prepared(target.build(case), target.imports, device)
            call()
            rec.update(_warm_calls(call, repeats, budget))
            if baseline is not None:
                rec.update(_paired(baseline, case, call, repeats, budget, device).fields())
            rec["status"] = "ok"
            return rec

        t0 = time.perf_counter()
        raw, mem = measure_phase(lambda: target.build(case))
        call = gpu_memory.prepared(raw, target.imports, device)
        rec.update(inputs_s=time.perf_counter() - t0, **_memory_fields("inputs", mem))
        rec.update(heap.heap_fields("inputs"))  # what malloc holds before the first call
        rec.update(gpu_memory.fields("inputs", gpu))
        resets.append(mem.reset)

        if emit:  # a kill from here on is said to be in the first call
            emit({"phase": "cold"})
        t0 = time.perf_counter()
        result, mem = measure_phase(gpu_memory.phase(call, gpu))
        rec.update(cold_s=time.perf_counter() - t0, **_memory_fields("cold", mem))
        rec.update(gpu_memory.fields("cold", gpu))
        resets.append(mem.reset)
        error = target.error(case, result)
        if error is not None:
            rec["max_rel_error"] = error
            tol = TOLERANCE[case.params.dtype]
            if not error <= tol:
                del rec["cold_s"]
                raise WrongAnswer(
                    f"max relative error {error:.2e} against the closed form exceeds {tol:.0e}"
                )
        del result
        rec.update(heap.heap_fields("cold"))

        if emit:
            emit({"phase": "warm"})
        warm, mem = measure_phase(gpu_memory.phase(lambda: _warm_calls(call, repeats, budget), gpu))
        resets.append(mem.reset)
        rec.update(
            warm,
            # Peak of the warm calls over the resident memory before the first call: what the
            # target needs beyond its inputs, memory its allocator keeps between calls included.
            warm_peak_over_inputs=max(mem.peak - rec["cold_rss_before"], 0),
            **_memory_fields("warm", mem),
        )
        rec.update(heap.heap_fields("warm"))
        rec.update(gpu_memory.fields("warm", gpu))
        if target.question_timed:
            wait = devices.synchronizer(target.imports, device)
            rec.update(_unsynced_calls(raw, wait, repeats, budget))
        rec["status"] = "ok"
        if baseline is not None:
            if emit:
                emit({**rec, "hwm_reset": all(resets)})  # a kill in the paired calls keeps this
            try:
                rec.update(_paired(baseline, case, call, repeats, budget, device).fields())
            except Exception as e:  # noqa: BLE001 - the measurement stands without its ratio
                rec["message"] = f"ratio to {baseline.text} not measured: {type(e).__name__}: {e}"
        if target.compiles and compile_cost.wanted():
            if emit:
                emit({**rec, "hwm_reset": all(resets)})  # a kill in the second compile keeps this
            del call, raw
            compile_cost.record(target, case, device, rec)
    except BaseException as e:  # noqa: BLE001 - any failure of the case is its result
        rec["status"] = "error"
        rec["message"] = f"{type(e).__name__}: {e}".strip()[:2000]
        rec["traceback"] = traceback.format_exc()[-4000:]
    rec["hwm_reset"] = all(resets) if resets else False
    return rec


def _probe(params: dict, rec: dict[str, Any]) -> dict[str, Any]:
    """A reader's function checked against the contract (measure.user_probe): status ok with
    what was found, "contract" with the one line that says what is wrong, or "error"."""
    from jacbench.measure import user_probe
    from jacbench.problems.user import ContractError

    try:
        rec.update(user_probe.probe(params), status="ok")
    except ContractError as e:
        rec.update(status="contract", message=str(e))
    except BaseException as e:  # noqa: BLE001 - anything else is the probe's failure
        rec.update(status="error", message=f"{type(e).__name__}: {e}"[:2000])
        rec["traceback"] = traceback.format_exc()[-4000:]
    return rec


def warm_summary(times: list[float]) -> dict[str, float | int]:
    """How many warm calls, their median, fastest and slowest."""
    return {
        "warm_n": len(times),
        "warm_median_s": statistics.median(times),
        "warm_min_s": min(times),
        "warm_max_s": max(times),
    }


def _warm_calls(call, repeats: int, budget: float) -> dict[str, Any]:
    """The warm calls, one after the other: their summary, times and page faults."""
    times: list[float] = []
    faults: list[int] = []
    _repeat(lambda i: times.append(_timed(call, faults)), times.__len__, repeats, budget)
    return {**warm_summary(times), "warm_values": times, "warm_fault_values": faults}


def _paired(baseline, case, call, repeats: int, budget: float, device: str = "cpu") -> Pairs:
    """Build the baseline (its first call untimed, as the target's was) and pair the calls."""
    simulate = devices.synchronized(baseline.build(case), baseline.imports, device)
    simulate()
    return paired_calls(call, simulate, repeats, budget)


def _unsynced_calls(raw, wait, repeats: int, budget: float) -> dict[str, Any]:
    """Calls timed as the second question timed them: time.time() around the call, the clock
    stopped when it returns, whether or not the device has finished; each call is waited for
    after its clock stopped, so that the next starts on an idle device."""
    times: list[float] = []

    def call(i: int) -> None:
        start = time.time()
        result = raw()
        times.append(time.time() - start)
        wait(result)

    _repeat(call, times.__len__, repeats, budget)
    return {"unsynced_n": len(times), "unsynced_median_s": statistics.median(times)}


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
    _emit(run(json.loads(argv[0]), emit=_emit))
    compile_cost.remove_worker_caches()  # os._exit skips atexit, which would remove them
    # The record is out: skip the interpreter's teardown (TensorFlow's and PyTorch's: 1.5 s).
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
