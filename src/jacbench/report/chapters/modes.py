"""Forward and reverse mode (chapter 2): the measured ratio of the two against the count of
passes."""

from __future__ import annotations

from jacbench.report import formats


def against_expected(measured, expected) -> str:
    """A measured ratio as a multiple of the expected one: '0.41× N/2'-style text without the
    unit, e.g. '0.41×'; NOT_MEASURED where either is missing."""
    if formats.missing(measured) or formats.missing(expected) or expected <= 0:
        return formats.NOT_MEASURED
    return formats.times(measured / expected, digits=2)
