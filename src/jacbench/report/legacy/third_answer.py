"""The second question's third answer (chapter 5): its CPU timings of solution 2 and of a
hand-written derivative, beside ours."""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats, queries
from jacbench.report.legacy.wide import _ok

# The second question's third answer, timed on its CPU (IPython's %timeit, mean of 7 runs; its
# X is not shown, the question's has n = 10^5): solution 2 (X.repeat and one backward with the
# identity) and a hand-written derivative (torch.stack of 2X, 3X^2, 4X^3).
REPORTED_SOLUTION_2_S = 11.7e-3
REPORTED_CLOSED_FORM_S = 539e-6
SOLUTION_2 = "batched-backward"
CLOSED_FORM = ("numpy", "analytic")
REPORTED_FACTOR = REPORTED_SOLUTION_2_S / REPORTED_CLOSED_FORM_S


def _rows(df: pd.DataFrame, n: int) -> tuple[pd.Series | None, pd.Series | None]:
    """Our solution-2 row and our hand-written derivative's row at n (None where missing)."""
    sol2 = queries.one(queries.wide(df, framework="torch", target="strategy"),
                       strategy=SOLUTION_2, inputs=n)  # fmt: skip
    closed = queries.one(queries.wide(df, framework=CLOSED_FORM[0], target="strategy"),
                         strategy=CLOSED_FORM[1], inputs=n)  # fmt: skip
    return sol2, closed


def measured_factor(df: pd.DataFrame, n: int) -> float | None:
    """How many times faster the hand-written derivative ran than solution 2 here at n (None
    unless both ran correctly)."""
    sol2, closed = _rows(df, n)
    if not (_ok(sol2) and _ok(closed)):
        return None
    return float(sol2["warm_median_s"] / closed["warm_median_s"])


def third_answer(df: pd.DataFrame, n: int) -> pd.DataFrame:
    """The third answer's two timings beside ours at n: solution 2 (PyTorch's batched-backward),
    the hand-written derivative (numpy's closed form here) and how many times faster the second
    is, as reported and as measured (formats.outcome where a row is missing or failed)."""
    sol2, closed = _rows(df, n)
    return pd.DataFrame({
        "": ["solution 2 (X.repeat, one backward)", "hand-written derivative",
             "hand-written, times faster"],
        "reported (its CPU)": [formats.time(REPORTED_SOLUTION_2_S),
                               formats.time(REPORTED_CLOSED_FORM_S),
                               formats.times(REPORTED_FACTOR)],
        f"measured here (n = {n:,})": [formats.outcome(sol2), formats.outcome(closed),
                                       formats.times(measured_factor(df, n))],
    })  # fmt: skip


def third_answer_verdict(factor: float | None) -> str:
    """Whether the hand-written derivative is faster here too (factor: measured_factor), and by
    how much against the answer's factor; about as fast where the two print the same."""
    if factor is None:
        return "Solution 2 and the closed form were not both measured here at that n."
    measured, reported = formats.times(factor), formats.times(REPORTED_FACTOR)
    if measured == formats.times(1.0):
        return (
            f"Here the hand-written derivative is about as fast as solution 2 ({measured} "
            f"against the answer's {reported})."
        )
    if factor > 1:
        return (
            f"The hand-written derivative is faster here too: {measured} against the "
            f"answer's {reported} (a closed form in numpy here, torch operations there)."
        )
    return (
        f"Here the hand-written derivative is not faster ({measured} against the answer's "
        f"{reported})."
    )
