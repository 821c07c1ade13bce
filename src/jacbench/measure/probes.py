"""Callables with known behaviour, to check the harness (``jacbench measure --callable``)."""

from __future__ import annotations

import ctypes
import os
import signal
import time

import numpy as np

MB = 10**6
# Blocks the heap probe allocates: below every mmap threshold (glibc-mmap's is 64 KiB), above
# the sizes glibc's tcache and fastbins hold, and nine whole pages wide, which malloc_trim can
# give back; and how many of them stay in use (as many more are freed between them).
BLOCK = 40_000
BLOCKS_HELD = 500
_held: list[int] = []


def allocate_400mb() -> int:
    """Allocate and touch exactly 400 MB, then free it; returns the bytes touched."""
    block = np.ones(400 * MB, dtype=np.uint8)  # np.ones writes every page
    return int(block.sum() > 0) * block.nbytes


# allocate_forever's pause between blocks: 100 MB a tenth of a second, so that the harness's
# poll (every 20 ms) would have to be late by most of a second, on busy cores, for the process
# to pass twice a 1 GiB cap before it is killed (at 5 ms it passed it on a loaded machine).
FOREVER_PAUSE_S = 0.1


def allocate_forever() -> None:
    """Allocate and touch 100 MB blocks, one every FOREVER_PAUSE_S, until the harness kills the
    process."""
    blocks = []
    while True:
        blocks.append(np.ones(100 * MB, dtype=np.uint8))
        time.sleep(FOREVER_PAUSE_S)


def sleep_forever() -> None:
    """Never return: the harness's timeout must end it."""
    while True:
        time.sleep(1)


def nap() -> float:
    """Sleep a quarter of a second."""
    time.sleep(0.25)
    return 0.25


# For the cluster's tests: COUNTER_FILE:TIMES, the Dask worker to kill and how often (lose_worker).
LOSE_VARIABLE = "JACBENCH_LOSE_WORKER"
# Set by a Dask worker before it measures (measure.cluster): its process id.
WORKER_VARIABLE = "JACBENCH_CLUSTER_WORKER"


def lose_worker() -> float:
    """Kill the Dask worker measuring this case (as a machine lost would end it), the first
    TIMES calls of all (LOSE_VARIABLE); then nap as nap does."""
    path, _, times = os.environ[LOSE_VARIABLE].rpartition(":")
    done = len(open(path).read()) if os.path.exists(path) else 0
    if done < int(times):
        with open(path, "a") as f:
            f.write("x")
        os.kill(int(os.environ[WORKER_VARIABLE]), signal.SIGKILL)
        time.sleep(60)  # this process dies with its parent (measure.worker._die_with_parent)
    return nap()


def abort() -> None:
    """Abort the interpreter (SIGABRT), as a crashing native library would."""
    os.abort()


def fail() -> None:
    """Raise an ordinary exception."""
    raise RuntimeError("this probe always fails")


def report_then_allocate() -> None:
    """Print an ok record, as the worker does before its paired calls, then allocate until
    the harness kills the process: what was reported must stand."""
    print('\n{"status": "ok", "message": "", "cold_s": 0.5, "warm_median_s": 0.25}', flush=True)
    allocate_forever()


def free_every_other_block() -> int:
    """With the process's malloc, allocate and touch 2 x BLOCKS_HELD blocks of BLOCK bytes and
    free every other one: 20 MB stay in use (held until the next call frees them) and 20 MB are
    free between them, kept by malloc, as no two of the holes can merge. Returns the bytes held."""
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    for p in _held:
        libc.free(p)
    _held.clear()
    blocks = [libc.malloc(BLOCK) for _ in range(2 * BLOCKS_HELD)]
    for p in blocks:
        ctypes.memset(p, 1, BLOCK)
    for p in blocks[::2]:
        libc.free(p)
    _held.extend(blocks[1::2])  # the last block is held: no hole borders malloc's top chunk
    return BLOCKS_HELD * BLOCK


def allocate_20mb() -> int:
    """Allocate and touch 20 MB, then free it: under glibc's fixed thresholds (heap.STEADY) a
    block from the heap that the next call reuses, under glibc-mmap a mapping of its own that
    every call faults in again."""
    block = np.ones(20 * MB, dtype=np.uint8)
    return int(block.sum() > 0) * block.nbytes


def allocate_40mb() -> int:
    """Allocate and touch 40 MB, then free it: above the 32 MiB of glibc's fixed thresholds, a
    mapping of its own that every call faults in again, unless no block may be one (glibc-heap,
    heap.NO_MAPPINGS): then from the heap and reused."""
    block = np.ones(40 * MB, dtype=np.uint8)
    return int(block.sum() > 0) * block.nbytes
