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


def fresh_worker_cache() -> str:
    """Point inductor's on-disk cache at a new directory for this worker (before torch is
    imported), removed when the worker exits; returns the directory."""
    path = tempfile.mkdtemp(prefix="jacbench-inductor-")
    os.environ[CACHE_ENV] = path
    atexit.register(shutil.rmtree, path, True)
    return path


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
