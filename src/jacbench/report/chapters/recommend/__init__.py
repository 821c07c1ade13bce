"""Chapter 7, what to use: the book's picks by shape, size and framework, under a memory
budget, and where the rule bends (finite differences, float64, dense Hessians)."""

from jacbench.report.chapters.recommend.facts import (
    FIX,
    REGIMES,
    Budgeted,
    Facts,
    compiled,
    drawn,
    facts,
    follows_rule,
)

__all__ = ["FIX", "REGIMES", "Budgeted", "Facts", "compiled", "drawn", "facts", "follows_rule"]
