"""Run one case in a fresh worker process under a memory cap and a time cap.

The parent never imports torch, tensorflow or jax. It launches ``python -m
jacbench.measure.worker`` with the case's thread counts and allocator in the environment,
watches the worker's resident memory with psutil, and kills it above the cap or past the
timeout. Every outcome is a record with one of constants.STATUSES. With ``JACBENCH_WORKERS=fork``
(the test suite's setting) the worker is forked from a process that imported its framework
once, in the same environment, instead (measure.forks).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import psutil

from jacbench.constants import ALL_ALLOCATORS, ALLOCATOR_EXPERIMENTS, GIB, HEAP_ALLOCATOR
from jacbench.errors import UsageError
from jacbench.measure import forks, targets
from jacbench.measure.heap import NO_MAPPINGS, STEADY, TRIM_VARIABLE
from jacbench.measure.worker import thread_environment

JEMALLOC_PATHS = (
    "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
    "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
)
# glibc-mmap: every allocation above 64 KiB is its own mapping, returned to the kernel on free.
MMAP_THRESHOLD = "65536"
# glibc-trim sets no MALLOC_TRIM_THRESHOLD_: setting it would also fix the mmap threshold at its
# initial 128 KiB (glibc stops adjusting both), and the variant would be glibc-mmap by another
# name. It asks the worker for malloc_trim(0) after each call instead (see measure.heap).
EXPERIMENT_ENVIRONMENT = {
    "glibc-arena1": {"MALLOC_ARENA_MAX": "1"},
    "glibc-trim": {TRIM_VARIABLE: "1"},
}
POLL_S = 0.02
# What the worker was doing when it said so last (measure.worker emits it before each phase).
PHASES = {"cold": "first call (tracing and compiling included)", "warm": "warm calls"}
# A worker on a GPU: JAX would otherwise take 75% of the card's memory when it starts, and its
# peak would read as that (measure.gpu_memory reads what its allocator has handed out).
GPU_ENVIRONMENT = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


def default_mem_cap(ram: int | None = None) -> int:
    """The smaller of 8 GiB and half the RAM: this machine's, or that of the machine given
    (the reference dataset's, when its cases are expanded elsewhere)."""
    ram = psutil.virtual_memory().total if ram is None else int(ram)
    return min(8 * GIB, ram // 2)


def jemalloc_path() -> str | None:
    return next((p for p in JEMALLOC_PATHS if os.path.exists(p)), None)


def allocator_environment(allocator: str, steady: bool = False) -> dict[str, str]:
    """Variables that select the worker's allocator (plain glibc's thresholds fixed if steady,
    see heap.STEADY); UsageError if it is unknown or missing."""
    if allocator == "glibc":
        return dict(STEADY) if steady else {}
    if allocator == "glibc-mmap":
        return {"MALLOC_MMAP_THRESHOLD_": MMAP_THRESHOLD}
    if allocator == "jemalloc":
        path = jemalloc_path()
        if path is None:
            raise UsageError("allocator jemalloc needs Debian's libjemalloc2 (apt-get install)")
        return {"LD_PRELOAD": path}
    if allocator in ALLOCATOR_EXPERIMENTS:
        return dict(EXPERIMENT_ENVIRONMENT[allocator])
    if allocator == HEAP_ALLOCATOR:
        return dict(NO_MAPPINGS)
    valid = ", ".join(ALL_ALLOCATORS)
    raise UsageError(f"unknown allocator {allocator!r}; choose one of: {valid}")


@dataclass
class Limits:
    mem_cap: int = field(default_factory=default_mem_cap)
    timeout: float = 300.0


_LIVE: set = set()  # the workers running: subprocess.Popen or forks.Forked
# Where run_worker's calls go instead of this machine (measure.cluster.pinned), or None.
_ELSEWHERE = None


@contextlib.contextmanager
def elsewhere(run):
    """Every run_worker call made meanwhile answered by run(spec, limits, allocator, steady)."""
    global _ELSEWHERE
    before, _ELSEWHERE = _ELSEWHERE, run
    try:
        yield
    finally:
        _ELSEWHERE = before


def kill_all() -> None:
    """Kill every worker still running (a sweep interrupted with Ctrl-C)."""
    for popen in list(_LIVE):
        _kill_group(popen)


# Linux lists each thread's children in /proc (CONFIG_PROC_CHILDREN); psutil finds them by
# reading every process's parent, about a millisecond a poll, 5% of a core per running case.
PROC_CHILDREN = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _tree_rss(pid: int) -> int:
    """The resident memory of the worker and its children (0 once it is gone: a forked worker
    is reaped by its template, not by this process)."""
    if not PROC_CHILDREN:
        return _tree_rss_psutil(pid)
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * forks.PAGE
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):  # it ended meanwhile
            continue
    return total


def _tree_rss_psutil(pid: int) -> int:
    try:
        proc = psutil.Process(pid)
        tree = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in tree:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def _kill_group(popen) -> None:
    try:
        os.killpg(popen.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_worker(
    spec: dict, limits: Limits, allocator: str = "glibc", steady: bool = False
) -> dict[str, Any]:
    """Launch the worker for spec (under allocator, glibc's thresholds fixed if steady), watch
    it, and return its record with a status."""
    if _ELSEWHERE is not None:
        return _ELSEWHERE(spec, limits, allocator, steady)
    env = {k: v for k, v in os.environ.items() if k not in NO_MAPPINGS}
    env.update(thread_environment(int(spec.get("threads", 1))))
    env.update(allocator_environment(allocator, steady))
    if spec.get("device", "cpu") != "cpu":
        env.update(GPU_ENVIRONMENT)
    with tempfile.NamedTemporaryFile("w+") as out, tempfile.NamedTemporaryFile("w+") as err:
        popen = _launch(spec, env, out, err)
        _LIVE.add(popen)
        start = time.monotonic()
        peak_seen, status, message = 0, None, ""
        while popen.poll() is None:
            rss = _tree_rss(popen.pid)
            peak_seen = max(peak_seen, rss)
            if rss > limits.mem_cap:
                _kill_group(popen)
                status = "memory-cap"
                message = (
                    f"killed at {rss / GIB:.2f} GiB RSS, "
                    f"above the cap of {limits.mem_cap / GIB:.2f} GiB"
                )
            elif time.monotonic() - start > limits.timeout:
                _kill_group(popen)
                status = "timeout"
                message = f"killed after {limits.timeout:.0f} s"
            if status:
                popen.wait()
                break
            time.sleep(POLL_S)
        elapsed = time.monotonic() - start
        _LIVE.discard(popen)
        getattr(popen, "release", lambda: None)()  # a forked worker's template serves again
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    rec: dict[str, Any] = {}
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if lines:
        rec = json.loads(lines[-1])
    phase = rec.pop("phase", None)  # the worker's last word before a kill: where it was
    if phase and status is not None:
        message += f", in its {PHASES[phase]}"
    elif phase:  # it died in that phase without a record of its own
        lines, rec = [], {}
    if status is not None and rec.get("status") == "ok":
        # Killed after the worker printed its measurements, in the paired calls: they stand.
        status, message = "ok", f"ratio not measured: {message} in the paired calls"
    elif status is None:
        if not lines:
            status = "error"
            message = _death_message(popen.returncode, stderr)
        else:
            status = rec.get("status", "error")
            message = rec.get("message", "")
    rec.update(status=status, message=message, wall_s=elapsed, watched_peak_rss=peak_seen)
    rec.pop("traceback", None) if status == "ok" else None
    return rec


def _launch(spec: dict, env: dict[str, str], out, err):
    """The worker for spec, started fresh or forked (measure.forks), in its own process group."""
    if forks.enabled() and spec.get("device", "cpu") == "cpu":
        target = spec.get("target")
        try:
            framework = (
                targets.parse(target["framework"], target["name"]).imports if target else None
            )
        except Exception:  # noqa: BLE001 - a fresh worker records what is wrong with the target
            pass
        else:
            forked = forks.start(framework, env, spec, out.name, err.name)
            if forked is not None:
                return forked
    return subprocess.Popen(
        [sys.executable, "-m", "jacbench.measure.worker", json.dumps(spec)],
        stdout=out,
        stderr=err,
        env=env,
        start_new_session=True,  # its own process group, killed whole
    )


def _death_message(returncode: int, stderr: str) -> str:
    """Why a worker died without a record (a signal, an abort, an interpreter crash)."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        what = f"worker died of {name}"
    else:
        what = f"worker exited with status {returncode} and no result"
    tail = [ln for ln in stderr.strip().splitlines() if ln.strip()][-1:]
    return what + (f": {tail[0][:300]}" if tail else "")
