"""The front page's tables: what each snippet's strategies cost at its question's size."""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats
from jacbench.report.chapters.front.facts import Answer
from jacbench.report.picks import Entry


def _row(what: str, e: Entry | None) -> dict[str, str]:
    return {
        "": what,
        "first call": formats.time(e.cold_s) if e else formats.NOT_MEASURED,
        "later calls": formats.time(e.warm_s) if e else "–",
        "memory beyond the inputs": formats.size(e.beyond_inputs) if e else "–",
    }


def price(a: Answer | None, question: tuple[str, str] | None = None) -> pd.DataFrame:
    """The snippet's forms at its question's size, each by the name the snippet gives it, and
    the question's own program's outcome where given (what, outcome)."""
    if a is None:
        return pd.DataFrame([_row(formats.NOT_MEASURED, None)])
    s = a.snippet
    first, compiled, hessian = s.names
    rows = [_row(first, a.first)]
    if s.compiled:
        rows.append(_row(compiled, a.compiled))
    if s.hessian:
        rows.append(_row(f"{hessian}, three products", a.hessian))
    if question:
        rows.append(
            {
                "": question[0],
                "first call": question[1],
                "later calls": "–",
                "memory beyond the inputs": "–",
            }
        )
    return pd.DataFrame(rows)
