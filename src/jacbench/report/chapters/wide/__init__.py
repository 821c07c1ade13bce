"""Chapter 6, wide Jacobians and Hessians: the second question's 3 x n Jacobian, its Hessians,
the GBM's per-path second derivatives and the tall-to-wide crossover, as facts."""

from jacbench.report.chapters.wide.crossover import Crossover, Shape, concurrency, crossover, rows
from jacbench.report.chapters.wide.facts import Case, Facts, facts
from jacbench.report.chapters.wide.second import Greeks, Hessians, greeks, hessians

__all__ = [
    "Case",
    "Crossover",
    "Facts",
    "Greeks",
    "Hessians",
    "Shape",
    "concurrency",
    "crossover",
    "facts",
    "greeks",
    "hessians",
    "rows",
]
