"""The second question's Jacobian against the machine's limit (strategies.limits): each
framework's repeated-call pick at the question's n beside an empty compiled call with the same
arguments and one read of X with the 3 x n outputs written."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS
from jacbench.report.chapters.limit.facts import dispatch, reads
from jacbench.report.picks import QUESTION, WIDE, Picks


@dataclass(frozen=True)
class Floor:
    """A framework's fastest wide Jacobian at n for repeated calls, beside its framework's empty
    compiled call and numpy's read of the inputs (seconds)."""

    framework: str
    pick: str
    warm_s: float
    dispatch_s: float | None
    read_s: float | None

    @property
    def over_dispatch(self) -> float | None:
        return None if not self.dispatch_s else self.warm_s / self.dispatch_s


def floors(df: pd.DataFrame, book: Picks, n: int) -> tuple[Floor, ...]:
    """Each AD framework's repeated-call pick of the wide Jacobian at n (its first, the fastest)
    against the floor of a call there."""
    read = reads(df, "moments").get(n)
    empty = dispatch(df, "moments", n)
    found = []
    for fw in AD_FRAMEWORKS:
        pick = book.get(WIDE, fw, QUESTION)
        if pick is None or pick.size != n:
            continue
        first = pick.entry(pick.repeated[0])
        found.append(Floor(fw, first.name, first.warm_s, empty.get(fw), read))
    return tuple(found)
