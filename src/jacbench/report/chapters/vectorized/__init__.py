"""Chapter 3, vectorized Jacobians: what vectorized reverse mode holds and how it grows, the
terminal-only forms, and each loop of VJPs against the strategy that vectorizes it."""

from jacbench.report.chapters.vectorized import tables
from jacbench.report.chapters.vectorized.facts import (
    Facts,
    Held,
    LoopPair,
    Run,
    Terminal,
    facts,
    held,
    reverse_strategies,
)

__all__ = [
    "Facts",
    "Held",
    "LoopPair",
    "Run",
    "Terminal",
    "facts",
    "held",
    "reverse_strategies",
    "tables",
]
