"""Where the advice measures, and what else ran meanwhile: the sizes grown from the function's
own time (auto_sizes), and the cores other processes kept busy between the workers (Load)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Without --sizes: the probe runs at START, times the function itself there, and the sizes are
# grown from it (auto_sizes) until the function's own call takes at least the floor.
START = 1_000
# Without --target, the sizes grow no further than this looking for the floor.
MAX_AUTO = 10**7
# The sizes fitted: this many over a decade, one more where they reach further toward the target.
POINTS = 4
# A size is not measured where one call of the function itself would take more than the
# worker's limit over this (a Jacobian takes several calls' worth, and each worker makes CALLS).
BUDGET_CALLS = 200
# The machine's load: each sample lasts this long; a run is busy where other processes kept
# more than this many cores busy on average.
LOAD_SAMPLE_S = 0.2
BUSY_CORES = 0.5


def _nice(n: float) -> int:
    """n rounded to two significant digits (a size a reader would type)."""
    if n < 100:
        return max(int(round(n)), 1)
    digits = 10 ** (int(math.floor(math.log10(n))) - 1)
    return int(round(n / digits) * digits)


def auto_sizes(start: int, function_s: float, timeout: float, floor: float,
               target: int | None = None) -> tuple[tuple[int, ...], str]:  # fmt: skip
    """The sizes to fit, from one call of the function at start taking function_s (taken as
    growing in proportion to n): the smallest where that call takes the floor or more, POINTS
    of them over a decade, or on to a tenth of the target (POINTS + 1); none where one call
    would take more than timeout / BUDGET_CALLS. A note where the floor or the target's tenth
    could not be reached within that budget ("" otherwise)."""
    per_n = max(function_s, 1e-9) / start
    budget = timeout / BUDGET_CALLS / per_n  # the largest n within the budget
    smallest = max(start, floor / per_n)
    largest = max(10 * smallest, (target or 0) / 10)
    notes = []
    if largest > budget:  # a slow function: the sizes end where a call takes the budget
        largest = max(budget, 1.0)
        smallest = min(smallest, largest / 10)
        notes.append(
            f"the sizes stop at {_nice(largest):,}, where one call of the function would take "
            f"the budget of {timeout / BUDGET_CALLS:.2g} s (--timeout over {BUDGET_CALLS})"
        )
        if smallest < floor / per_n:
            notes.append(f"its own call reaches the {floor * 1e3:g} ms floor only past that")
    smallest = max(smallest, 1.0)
    largest = max(largest, smallest)
    points = POINTS + (largest > 20 * smallest)
    sizes = sorted({_nice(x) for x in np.geomspace(smallest, largest, points)})
    return tuple(sizes), "; ".join(notes)


@dataclass
class Load:
    """How many cores other processes keep busy, sampled before the run and before each worker,
    while none of the advice's workers runs and its parent waits: the machine's load without
    the advice's own."""

    samples: list[float] = field(default_factory=list)

    def sample(self, seconds: float | None = None) -> None:
        import psutil

        wait = LOAD_SAMPLE_S if seconds is None else seconds
        self.samples.append(psutil.cpu_percent(interval=wait) / 100 * (os.cpu_count() or 1))

    def record(self) -> dict[str, Any]:
        """advice.json's load: cores busy before, on average and at most during; busy when
        other processes kept more than BUSY_CORES busy on average."""
        during = self.samples[1:] or self.samples
        mean = float(np.mean(during)) if during else None
        return {"cores": os.cpu_count() or 1, "before": self.samples[0] if self.samples else None,
                "during_mean": mean, "during_max": max(during) if during else None,
                "samples": len(self.samples),
                "busy": mean is not None and mean > BUSY_CORES}  # fmt: skip
