"""Compile cost apart from the first call's allocation.

A target's first call pays for tracing and compiling and also for its first allocation: the
pages of every array it touches for the first time. After the warm calls the worker empties the
framework's compiler caches, builds the target again and times one more call (recompile_s).
That call allocates as a warm call does, so the compile cost is it less the fastest warm call
(compile_s). The caches emptied:

- JAX: ``jax.clear_caches()``, every jitted function's compiled programs;
- PyTorch: ``torch._dynamo.reset()`` and inductor's caches, in memory and on disk, fresh
  (``torch._inductor.utils.fresh_cache``); each worker's first call also starts from a cache
  directory of its own (``fresh_worker_cache``), so no case finds another's kernels;
- TensorFlow: a rebuilt target's ``tf.function`` objects are new, traced and compiled again.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"
# "shared" (the test suite's setting): workers leave inductor's cache where it is, one directory
# for all of them, so a graph compiled by an earlier case or test run is found again (a test
# sweep's compiled case: 25 s in a fresh cache on 2 busy cores). The compile cost (measure) is
# still measured in a fresh cache of its own.
SHARED_VARIABLE, SHARED = "JACBENCH_INDUCTOR_CACHE", "shared"
# "skip" (the test suite's quick sweep, whose tests read its rows' statuses, checks and memory):
# no second compile, no compile_s. tests/test_compile_cost.py measures it.
MEASURE_VARIABLE, SKIP = "JACBENCH_COMPILE_COST", "skip"


def wanted() -> bool:
    return os.environ.get(MEASURE_VARIABLE) != SKIP


_WORKER_CACHES: list[str] = []


def fresh_worker_cache() -> str | None:
    """Point inductor's on-disk cache at a new directory for this worker (before torch compiles
    anything), removed when the worker exits (remove_worker_caches); returns the directory.
    None, and nothing changed, under JACBENCH_INDUCTOR_CACHE=shared."""
    if os.environ.get(SHARED_VARIABLE) == SHARED:
        return None
    path = tempfile.mkdtemp(prefix="jacbench-inductor-")
    os.environ[CACHE_ENV] = path
    _WORKER_CACHES.append(path)
    atexit.register(remove_worker_caches)
    return path


def remove_worker_caches() -> None:
    """Remove the directories fresh_worker_cache made: the worker calls it before os._exit,
    which skips atexit (they were left in the temporary folder, one per torch case)."""
    while _WORKER_CACHES:
        shutil.rmtree(_WORKER_CACHES.pop(), ignore_errors=True)


@contextlib.contextmanager
def emptied(framework: str) -> Iterator[None]:
    """The framework's compiler caches empty for the duration (see the module's text)."""
    if framework == "jax":
        import jax

        jax.clear_caches()
        yield
    elif framework == "torch":
        import torch._dynamo
        from torch._inductor import utils

        torch._dynamo.reset()
        fresh = getattr(utils, "fresh_cache", None) or utils.fresh_inductor_cache
        with fresh():
            yield
        torch._dynamo.reset()
    else:
        yield


def measure(framework: str, build: Callable[[], Callable[[], Any]], warm_min_s: float) -> dict:
    """One call of a target built again with the compiler's caches empty: recompile_s, and
    compile_s, that call less the fastest warm call."""
    with emptied(framework):
        call = build()
        t0 = time.perf_counter()
        call()
        recompile_s = time.perf_counter() - t0
    return {"recompile_s": recompile_s, "compile_s": recompile_s - warm_min_s}


def record(target, case, device: str, rec: dict[str, Any]) -> None:
    """measure for a worker's target, into its record: the target built again (on its device,
    measure.gpu_memory) and called once with its compiler's caches empty. A failure is said in
    the message; the measurement stands."""
    from jacbench.measure import gpu_memory

    def build():
        return gpu_memory.prepared(target.build(case), target.imports, device)

    try:
        rec.update(measure(target.imports, build, rec["warm_min_s"]))
    except Exception as e:  # noqa: BLE001 - the measurement stands without its compile cost
        said = f"compile cost not measured: {type(e).__name__}: {e}"
        rec["message"] = "; ".join(m for m in (rec.get("message"), said) if m)
