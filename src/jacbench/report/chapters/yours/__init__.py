"""Chapter 8, your function: what jacbench advise measured and picked, for the reference's two
models (a basket at growing numbers of assets, a Heston loop) or for a reader's own run."""

from jacbench.report.chapters.yours.facts import (
    REFERENCE,
    Advice,
    Series,
    advice,
    is_reference,
    series,
)

__all__ = ["REFERENCE", "Advice", "Series", "advice", "is_reference", "series"]
