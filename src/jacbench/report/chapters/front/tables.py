"""The front page's tables: what each snippet's strategies cost at its question's size."""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats
from jacbench.report.chapters.front.facts import Answer
from jacbench.report.chapters.question.facts import Program
from jacbench.report.chapters.question.tables import outcome
from jacbench.report.picks import Entry


def _row(what: str, e: Entry | None) -> dict[str, str]:
    return {
        "": what,
        "first call": formats.time(e.cold_s) if e else formats.NOT_MEASURED,
        "later calls": formats.time(e.warm_s) if e else "–",
        "memory beyond the inputs": formats.size(e.beyond_inputs) if e else "–",
    }


def _program_row(what: str, p: Program | None) -> dict[str, str]:
    """The question's own program: its first and later calls and what it held beyond its
    inputs, or what stopped it (the whole process's peak is the question chapter's, not this
    column's)."""
    if p is None or not p.finished:
        return {"": what, "first call": outcome(p), "later calls": "–",
                "memory beyond the inputs": "–"}  # fmt: skip
    return {
        "": what,
        "first call": formats.time(p.first_s),
        "later calls": formats.time(p.warm_s) if p.warm_s is not None else "–",
        "memory beyond the inputs": formats.size(p.beyond_inputs),
    }


def price(a: Answer | None, question: tuple[str, Program | None] | None = None) -> pd.DataFrame:
    """The snippet's forms at its question's size, each by the name the snippet gives it, and
    the question's own program where given (what, program)."""
    if a is None:
        return pd.DataFrame([_row(formats.NOT_MEASURED, None)])
    s = a.snippet
    rows = [_row(s.names[0], a.first)]
    if s.compiled:
        rows.append(_row(s.names[1], a.compiled))
    if s.hessian:
        rows.append(_row(f"{s.names[2]}, three products", a.hessian))
    if question:
        rows.append(_program_row(*question))
    return pd.DataFrame(rows)
