"""Peak memory of a phase from the kernel: reset the high-water mark, run, read VmHWM."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_STATUS = "/proc/self/status"
_CLEAR_REFS = "/proc/self/clear_refs"


def _status_kib(field: str) -> int:
    with open(_STATUS) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in {_STATUS}")


def rss_bytes() -> int:
    """Resident set size now."""
    return _status_kib("VmRSS") * 1024


def hwm_bytes() -> int:
    """Resident high-water mark since the last reset (or process start)."""
    return _status_kib("VmHWM") * 1024


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (writing 5 to clear_refs); False where the kernel refuses."""
    try:
        with open(_CLEAR_REFS, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


@dataclass
class PhaseMemory:
    """Resident memory of one phase: before it, its peak, and whether the peak was reset first."""

    baseline: int
    peak: int
    reset: bool  # False: VmHWM could not be reset, so peak may belong to an earlier phase

    @property
    def over_baseline(self) -> int:
        return max(self.peak - self.baseline, 0)


def measure_phase(fn: Callable[[], Any]) -> tuple[Any, PhaseMemory]:
    """Run fn and return its value with the phase's memory."""
    baseline = rss_bytes()
    was_reset = reset_peak()
    value = fn()
    return value, PhaseMemory(baseline=baseline, peak=hwm_bytes(), reset=was_reset)
