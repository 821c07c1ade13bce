"""Where the advice measures, and what else ran meanwhile: the sizes grown from the function's
own time (auto_sizes), and the cores other processes kept busy between the workers (Load)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from jacbench.measure.heap import MMAP_THRESHOLD
from jacbench.report import advice

# Without --sizes: the probe runs at START, times the function itself there, and the sizes are
# grown from it (auto_sizes) until the function's own call takes at least the floor.
START = 1_000
# Without --target, the sizes grow no further than this looking for the floor.
MAX_AUTO = 10**7
# The sizes fitted: this many over a decade, one more where they reach further toward the target.
POINTS = 5
# Where the target's data passes glibc's mmap threshold (measure.heap), the sizes start this far
# past the size at which the data's largest array reaches it.
PAST_MMAP = 1.25
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
               target: int | None = None,
               bytes_per_n: float | None = None) -> tuple[tuple[int, ...], str]:  # fmt: skip
    """The sizes to fit, from one call of the function at start taking function_s (taken as
    growing in proportion to n): the smallest where that call takes the floor or more, POINTS
    of them over a decade, or on to a tenth of the target (POINTS + 1); none where one call
    would take more than timeout / BUDGET_CALLS. Where the data's largest array (bytes_per_n a
    unit of n) passes glibc's mmap threshold on the way to the target, the sizes start past
    it (PAST_MMAP), in the target's regime, and end at half the target (at the target where
    that leaves less than a factor of 2). A note where the floor, the target's tenth or the
    threshold could not be reached within that budget, or where the sizes moved past the
    threshold ("" otherwise)."""
    per_n = max(function_s, 1e-9) / start
    budget = timeout / BUDGET_CALLS / per_n  # the largest n within the budget
    smallest = max(start, floor / per_n)
    notes = []
    past = PAST_MMAP * MMAP_THRESHOLD / bytes_per_n if bytes_per_n else None
    if past and target and smallest < past / PAST_MMAP <= target:
        if past <= budget:
            smallest = past
            notes.append(
                f"the sizes start at {_nice(past):,}, past where the data's largest array "
                f"reaches glibc's {MMAP_THRESHOLD >> 20} MiB mmap threshold, as it does at the "
                "target (below it arrays are reused; above it each call maps them afresh)"
            )
        else:
            notes.append(
                f"the data's largest array reaches glibc's {MMAP_THRESHOLD >> 20} MiB mmap "
                f"threshold only past {_nice(budget):,}, the budget's last size: the "
                "prediction crosses it"
            )
    largest = max(10 * smallest, (target or 0) / 10)
    # Past the threshold (moved there, or there from the floor on): the sizes end short of the
    # target, so that its time is a prediction; less than a decade, if need be.
    if past and target and smallest >= past:
        end = target / 2 if 4 * smallest <= target else target
        largest = min(largest, end, budget)
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

    def record(self) -> advice.Load:
        """advice.json's load: cores busy before, on average and at most during; busy when
        other processes kept more than BUSY_CORES busy on average."""
        during = self.samples[1:] or self.samples
        mean = float(np.mean(during)) if during else None
        return advice.Load(cores=os.cpu_count() or 1,
                           before=self.samples[0] if self.samples else None,
                           during_mean=mean, during_max=max(during) if during else None,
                           samples=len(self.samples),
                           busy=mean is not None and mean > BUSY_CORES)  # fmt: skip
