"""Claims: a sentence that compares, ranks or judges stands right below a check of it.

A notebook calls ``use(df)`` once with the rows it reads, then ``hold(fact, "what the sentence
says")`` in the cell above each such sentence. On the reference dataset (the rows the text was
written about) a claim that does not hold stops the build: ``ClaimFailed`` names it, and the
book's build reports it as the failing cell's one line. On any other dataset (a reader's own
sweep) the sentence may well not hold, and the page shows a warning where it stands instead.

``hold`` returns nothing and displays nothing when the claim holds.
"""

from __future__ import annotations

import html
import os

import pandas as pd

from jacbench.report import dataset

# JACBENCH_CLAIMS=warn shows a warning even on the reference dataset (to read a page whose claim
# an edit broke); =strict stops on any dataset.
ENV = "JACBENCH_CLAIMS"
_state = {"strict": False, "checked": []}


class ClaimFailed(AssertionError):
    """A sentence's claim does not hold on the reference dataset."""


def use(df: pd.DataFrame) -> bool:
    """Check the claims that follow against these rows: strictly where they are the reference
    dataset. Returns whether the checks are strict."""
    mode = os.environ.get(ENV, "")
    strict = mode == "strict" or (mode != "warn" and dataset.is_reference(df))
    _state.update(strict=strict, checked=[])
    return strict


def use_reference(reference: bool) -> bool:
    """As use(), for a page that reads other data than the results (advice.json): strict where
    that data is the reference's. Returns whether the checks are strict."""
    mode = os.environ.get(ENV, "")
    strict = mode == "strict" or (mode != "warn" and reference)
    _state.update(strict=strict, checked=[])
    return strict


def checked() -> list[tuple[str, bool]]:
    """Every claim checked since use(), with whether it held."""
    return list(_state["checked"])


def hold(condition, claim: str) -> None:
    """Check one claim (see the module)."""
    held = bool(condition)
    _state["checked"].append((claim, held))
    if held:
        return
    if _state["strict"]:
        raise ClaimFailed(claim)
    from IPython.display import HTML, display

    display(HTML(warning(claim)))


def warning(claim: str) -> str:
    """The warning a page shows where a claim does not hold on its data."""
    return (
        '<div class="admonition warning claim-failed"><p class="admonition-title">'
        "Not true of this dataset</p><p>The sentence below was written about the reference "
        f"dataset, and does not hold on these results: {html.escape(claim)}.</p></div>"
    )
