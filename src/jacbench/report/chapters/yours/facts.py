"""The facts of "Your function": one advice (advice.json) and a series of advice on one model
as its inputs grow (the basket), as numbers, names and flags."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.measure.dataset import ADVICE as REFERENCE
from jacbench.report import advice as record
from jacbench.report import margins

ADVICE = record.FILE
# The reference advice (REFERENCE, measure.dataset.ADVICE), committed beside the reference
# dataset: the basket's series (one folder per number of assets) and the Heston loop.
FAILED = ("wrong", "memory-cap", "timeout", "error")


def is_reference(path: str | Path) -> bool:
    """Whether the advice lies in the reference's folder: the one the text was written about."""
    parts = Path(path).resolve().parts
    return any(parts[i : i + len(REFERENCE.parts)] == REFERENCE.parts for i in range(len(parts)))


class Advice(record.Advice):
    """One advice (report.advice) as the chapter reads it."""

    @property
    def fd_error(self) -> float | None:
        """How far the reference derivative was from finite differences (None: not checked)."""
        return self.check.fd_error if self.check.fd_status == "ok" else None

    @property
    def fd_agree(self) -> float | None:
        """The share of outputs whose derivative agreed with finite differences."""
        return self.check.fd_agree if self.check.fd_status == "ok" else None

    @property
    def mmap_at(self) -> int | None:
        """The size at which the data's largest array reaches glibc's mmap threshold, where it
        does before the target (None otherwise, or where the advice did not record its data)."""
        from jacbench.measure.heap import MMAP_THRESHOLD

        if not self.data_bytes or not self.probe_n:
            return None
        at = math.ceil(MMAP_THRESHOLD / (self.data_bytes / self.probe_n))
        return at if at <= self.target else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The pick's 95% prediction interval at the target (None where it has none)."""
        low, high = (self.pick and self.pick.predicted_interval_s) or (None, None)
        return None if low is None or high is None else (low, high)

    def function_time(self, n: int | None = None) -> float | None:
        """The function's own warm call at n (the largest size where None)."""
        n = max(self.sizes) if n is None else n
        rows = self.baseline.rows if self.baseline else ()
        row = next((r for r in rows if r.n == n and r.ok), None)
        return row.warm_median_s if row else None

    @property
    def name(self) -> str:
        return FRAMEWORK_NAMES[self.framework]

    def with_status(self, *statuses: str) -> tuple[str, ...]:
        return tuple(s.name for s in self.strategies if s.status in statuses)

    @property
    def passed(self) -> tuple[str, ...]:
        return self.with_status("ok")

    @property
    def refused(self) -> tuple[str, ...]:
        return self.with_status("refused")

    @property
    def failed(self) -> tuple[str, ...]:
        return self.with_status(*FAILED)

    @property
    def picked(self) -> str | None:
        return self.pick.strategy if self.pick else None

    @property
    def picked_mode(self) -> str | None:
        return self.strategy(self.picked).mode if self.pick else None

    @property
    def tied(self) -> tuple[str, ...]:
        return self.pick.tied if self.pick else ()

    @property
    def measured_at_target(self) -> record.Measured | None:
        """The pick measured at the target afterwards (jacbench advise --check), or None."""
        found = self.pick.measured if self.pick else None
        return found if found and found.ok else None

    def row(self, name: str, n: int | None = None) -> record.StrategyRow | None:
        """A strategy's measured row at n (the largest size where None), if it passed there."""
        n = max(self.sizes) if n is None else n
        row = next((r for r in self.strategy(name).rows if r.n == n), None)
        return row if row and row.ok else None

    def warm(self, name: str, n: int | None = None) -> float | None:
        """A strategy's measured warm median at n (the largest size where None)."""
        row = self.row(name, n)
        return row.warm_median_s if row else None

    def ahead(self, first: str, second: str, n: int | None = None) -> bool:
        """Whether first's warm calls at n rank ahead of second's by the book's rule on this
        run's own spreads (report.margins.ranks, margin 1: each median between its fastest
        and slowest call, and the two ranges apart)."""
        a, b = self.row(first, n), self.row(second, n)
        if a is None or b is None:
            return False
        spread = [margins.Spread(r.warm_median_s, r.warm_min_s, r.warm_max_s, r.warm_median_s)
                  for r in (a, b)]  # fmt: skip
        return margins.ranks(spread[0], spread[1], 1.0)

    def fastest_measured(self, n: int | None = None) -> tuple[str, float] | None:
        """The passed strategy fastest at n (the largest size where None), and its time."""
        found = [(s, t) for s in self.passed if (t := self.warm(s, n)) is not None]
        return min(found, key=lambda p: p[1]) if found else None


def advice(path: str | Path) -> Advice:
    """The advice in a folder (or the file itself)."""
    return Advice.read(path)


@dataclass(frozen=True)
class Series:
    """Advice on one model at several numbers of inputs, all measured at the same sizes."""

    runs: tuple[Advice, ...]

    @property
    def inputs(self) -> tuple[int, ...]:
        return tuple(a.inputs for a in self.runs)

    @property
    def n(self) -> int:
        """The largest size every run measured: where the series is compared."""
        return min(max(a.sizes) for a in self.runs)

    def at(self, inputs: int) -> Advice:
        return next(a for a in self.runs if a.inputs == inputs)

    def frame(self) -> pd.DataFrame:
        """One row per run and strategy: inputs, strategy, mode, status, warm time at n."""
        rows = [
            {
                "inputs": a.inputs,
                "strategy": s.name,
                "mode": s.mode,
                "status": s.status,
                "warm_s": a.warm(s.name, self.n),
                "picked": s.name == a.picked,
            }
            for a in self.runs
            for s in a.strategies
        ]
        return pd.DataFrame(rows)

    def ratio(self, slower: str, faster: str, inputs: int) -> float | None:
        """How many times slower's warm time at n is faster's, at that many inputs."""
        a = self.at(inputs)
        ts, tf = a.warm(slower, self.n), a.warm(faster, self.n)
        return None if ts is None or tf is None else ts / tf

    def ahead(self, first: str, second: str, inputs: int) -> bool:
        """Whether first ranks ahead of second at n by the rule, at that many inputs."""
        return self.at(inputs).ahead(first, second, self.n)

    def overtakes(self, first: str, second: str) -> int | None:
        """The fewest inputs from which first stays ahead of second by the rule."""
        found = None
        for inputs in sorted(self.inputs, reverse=True):
            if not self.ahead(first, second, inputs):
                break
            found = inputs
        return found


def series(folder: str | Path, prefix: str = "basket-") -> Series:
    """Every advice under folder whose name starts with prefix, by inputs."""
    runs = [advice(p) for p in sorted(Path(folder).glob(f"{prefix}*")) if (p / ADVICE).exists()]
    return Series(tuple(sorted(runs, key=lambda a: a.inputs)))
