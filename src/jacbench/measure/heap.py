"""What glibc's malloc holds after a phase: memory in use against memory freed but kept.

The resident peak alone cannot tell a program that holds its memory from an allocator that
keeps what the program freed; mallinfo2 can. The worker reads it before the first call, after it
and after the warm calls, and only where glibc's malloc is the one in use: under a preloaded
allocator (jemalloc) it would describe glibc's own heap, which nothing allocates from. Where it
cannot be read (another libc, a glibc before 2.33) nothing is recorded and the case goes on.

An allocator variant may also ask, through TRIM_VARIABLE in the worker's environment, for
malloc_trim(0) after every call of the target, to see how much of what glibc keeps it gives
back to the kernel when asked.

A case timed in several processes runs plain glibc with its two thresholds fixed (STEADY, see
steadies): left to adjust them, glibc gave a simulation's freed arrays back to the kernel after
every call in one process and kept them in the next, so the same call paid 15,000 page faults
in one and none in another, and a ratio across processes measured that, not the strategy.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from typing import Any

# Set to "1" by the harness for an allocator that trims after every call (see harness).
TRIM_VARIABLE = "JACBENCH_MALLOC_TRIM"

# The thresholds glibc's own rule reaches in a long-running process, fixed from the start: a
# block under 32 MiB (the most the rule raises the mmap threshold to on 64-bit) comes from the
# heap, a larger one is a mapping of its own, as it would be anyway; and the top of the heap is
# not given back below 4 GiB, so that what a call frees the next reuses whatever else the heap
# holds. Setting either also stops glibc's adjustment of both.
MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 4 * 2**30
STEADY = {
    "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD),
    "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD),
}
# STEADY with no block a mapping of its own, whatever its size (constants.HEAP_ALLOCATOR): every
# array from the heap, reused by the next call instead of faulted in afresh, and kept by the heap
# once freed. Not the dataset's method: what a block above 32 MiB costs is part of what a
# program under glibc pays; this variant measures how much.
NO_MAPPINGS = {**STEADY, "MALLOC_MMAP_MAX_": "0"}


def steadies(allocator: str, ratio_processes) -> bool:
    """Whether a case's workers run with STEADY: under plain glibc, where the case is timed in
    more than one process (its rows then compare processes). The allocator variants keep their
    own settings: they are what the allocator chapter measures."""
    return allocator == "glibc" and int(ratio_processes or 1) > 1


_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
           "fordblks", "keepcost")  # fmt: skip


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _FIELDS]


def _address(fn: Any) -> int | None:
    return ctypes.cast(fn, ctypes.c_void_p).value


def glibc() -> ctypes.CDLL | None:
    """glibc with mallinfo2 and malloc_trim typed, if it is the malloc this process uses."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Mallinfo2
        libc.mallinfo2.argtypes = []
        libc.malloc_trim.restype = ctypes.c_int
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        # The malloc every library calls is the first one in the global scope: glibc's
        # unless another allocator was preloaded.
        if _address(ctypes.CDLL(None).malloc) != _address(libc.malloc):
            return None
    except (OSError, AttributeError):
        return None
    return libc


def heap_fields(prefix: str) -> dict[str, int]:
    """{prefix}_heap_in_use: bytes malloc has handed out and not had back (uordblks, in its
    arenas, plus hblkhd, in mappings of their own); {prefix}_heap_free_kept: bytes freed but
    kept in the arenas (fordblks), resident or, after malloc_trim, given back page by page while
    still counted. Empty where glibc's malloc is not in use or mallinfo2 is missing."""
    libc = glibc()
    if libc is None:
        return {}
    info = libc.mallinfo2()
    return {
        f"{prefix}_heap_in_use": info.uordblks + info.hblkhd,
        f"{prefix}_heap_free_kept": info.fordblks,
    }


def trimming(call: Callable[[], Any]) -> Callable[[], Any]:
    """call, followed by malloc_trim(0) where the environment asks for it (and glibc's malloc
    is in use); otherwise call itself. The trim is timed with the call: it is what the variant
    costs."""
    libc = glibc() if os.environ.get(TRIM_VARIABLE) == "1" else None
    if libc is None:
        return call

    def trimmed() -> Any:
        value = call()
        libc.malloc_trim(0)
        return value

    return trimmed
