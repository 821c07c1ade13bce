"""Every figure of the book, in one style (``style``): readable at page width, units on axes, log
scales where data spans decades, and failed cases drawn as marked points at the cap, never
dropped. The GBM scaling panels and strategy families are in ``panels``, the other GBM figures
in ``gbm``, the wide chapter's in ``wide``; a notebook reaches them all here."""

from jacbench.report.figures.captions import caption_conditions, profile_of
from jacbench.report.figures.gbm import (
    allocator_effect,
    blocked,
    cold_warm,
    memory_vs_model,
    tradeoff,
)
from jacbench.report.figures.panels import (
    FAMILIES,
    RECOMMENDED,
    family,
    scaling,
    scaling_grid,
    strong,
)
from jacbench.report.figures.style import FRAMEWORK_COLOURS, WIDTH, log_axes, style
from jacbench.report.figures.wide import crossover, wide_scaling

__all__ = [
    "FAMILIES",
    "FRAMEWORK_COLOURS",
    "RECOMMENDED",
    "WIDTH",
    "allocator_effect",
    "blocked",
    "caption_conditions",
    "cold_warm",
    "crossover",
    "family",
    "log_axes",
    "memory_vs_model",
    "profile_of",
    "scaling",
    "scaling_grid",
    "strong",
    "style",
    "tradeoff",
    "wide_scaling",
]
