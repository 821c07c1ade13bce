"""The tall-to-wide crossover in chapter 6: tanh(W x) with m * n fixed, forward against reverse
mode at every shape, ranked by the book's noise rule (report.margins)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jacbench.measure import crossover as tall_to_wide
from jacbench.report import dataset
from jacbench.report import margins as noise

FORWARD, REVERSE = "forward", "reverse"


def rows(ds: dataset.Dataset) -> list[dict]:
    """The crossover rows of the largest total m * n in a dataset's crossover; [] where it has
    none."""
    return tall_to_wide.largest_total(dataset.crossover(ds))


@dataclass(frozen=True)
class Shape:
    """Both modes at one shape m x n of one framework, compared by the book's rule."""

    framework: str
    outputs: int  # m
    inputs: int  # n
    forward_s: float
    reverse_s: float
    comparison: noise.Comparison

    @property
    def aspect(self) -> float:
        return self.outputs / self.inputs

    @property
    def smaller_side(self) -> str | None:
        """The mode with fewer passes: reverse on a wide shape, forward on a tall one; None on
        a square."""
        if self.outputs == self.inputs:
            return None
        return REVERSE if self.outputs < self.inputs else FORWARD

    @property
    def winner(self) -> str | None:
        """The faster mode where ranked, else None."""
        return self.comparison.winner()

    @property
    def ratio(self) -> float:
        """Forward time over reverse time: above 1, reverse mode is faster."""
        return self.forward_s / self.reverse_s


@dataclass(frozen=True)
class Crossover:
    """Every shape measured in both modes, tall to wide, framework by framework."""

    total: int | None  # m * n, the same for every shape
    shapes: tuple[Shape, ...]
    threads: int | None = None  # each worker's threads, the same for every row (else None)

    @property
    def ranked(self) -> tuple[Shape, ...]:
        return tuple(s for s in self.shapes if s.winner is not None)

    @property
    def smaller_side_wins(self) -> bool:
        """Whether every ranked shape is won by the mode of its smaller side (and one is)."""
        return bool(self.ranked) and all(s.winner == s.smaller_side for s in self.ranked)

    @property
    def square_unranked(self) -> bool:
        """Whether the square shape is ranked in no framework, both modes under 1 ms."""
        square = [s for s in self.shapes if s.smaller_side is None]
        return bool(square) and all(s.comparison.overhead for s in square)

    @property
    def ties_under_a_millisecond(self) -> bool:
        """Whether every shape left unranked is one where both modes take under 1 ms."""
        return all(s.comparison.overhead for s in self.shapes if s.winner is None)

    def tied(self) -> set[tuple[str, int, int]]:
        """The (framework, m, n) of the shapes left unranked, for the figure."""
        return {(s.framework, s.outputs, s.inputs) for s in self.shapes if s.winner is None}


def crossover(found: list[dict], margins: noise.Margins) -> Crossover:
    """The crossover's facts from its rows (rows()), ranked with the dataset's margins."""
    by_shape: dict[tuple[str, int, int], dict[str, dict]] = {}
    for r in found:
        if r.get("status") == "ok":
            key = (r["framework"], int(r["outputs"]), int(r["inputs"]))
            by_shape.setdefault(key, {})[r["mode"]] = r
    shapes = []
    for (fw, m, n), modes in by_shape.items():
        if FORWARD in modes and REVERSE in modes:
            f, b = pd.Series(modes[FORWARD]), pd.Series(modes[REVERSE])
            c = noise.compare(f, b, margins)
            shapes.append(Shape(fw, m, n, float(f["warm_median_s"]), float(b["warm_median_s"]), c))
    shapes.sort(key=lambda s: (s.framework, -s.aspect))
    totals = {r["outputs"] * r["inputs"] for r in found}
    threads = {int(r["threads"]) for r in found if r.get("threads") is not None}
    return Crossover(
        int(totals.pop()) if len(totals) == 1 else None,
        tuple(shapes),
        threads.pop() if len(threads) == 1 else None,
    )


def concurrency(ds: dataset.Dataset) -> tuple[int | None, int | None]:
    """(how many crossover workers ran at a time, the machine's cores), from the metadata of a
    dataset's crossover (None where it does not say)."""
    found = ds.crossover_metadata
    jobs, cores = found.get("jobs"), found.get("cores")
    return (int(jobs) if jobs else None), (int(cores) if cores else None)
