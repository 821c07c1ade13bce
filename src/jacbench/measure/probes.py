"""Callables with known behaviour, to check the harness (``jacbench measure --callable``)."""

from __future__ import annotations

import os
import time

import numpy as np

MB = 10**6


def allocate_400mb() -> int:
    """Allocate and touch exactly 400 MB, then free it; returns the bytes touched."""
    block = np.ones(400 * MB, dtype=np.uint8)  # np.ones writes every page
    return int(block.sum() > 0) * block.nbytes


def allocate_forever() -> None:
    """Allocate and touch 100 MB blocks until the harness kills the process."""
    blocks = []
    while True:
        blocks.append(np.ones(100 * MB, dtype=np.uint8))
        time.sleep(0.005)


def sleep_forever() -> None:
    """Never return: the harness's timeout must end it."""
    while True:
        time.sleep(1)


def nap() -> float:
    """Sleep a quarter of a second."""
    time.sleep(0.25)
    return 0.25


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
