"""The loop of gradients against its vectorized forms (chapter 5): which is faster by more than
the noise of the measurement, form by form, and what that says about vectorizing a handful of
reverse sweeps."""

from __future__ import annotations

import pandas as pd

from jacbench.report import queries
from jacbench.report.chapters.picks import clearly_faster
from jacbench.report.chapters.wide import LOOP, _ok, vectorized_forms
from jacbench.report.formats import NOT_MEASURED

LOOP_FASTER = "loop"
FORM_FASTER = "vectorized"
WITHIN_NOISE = "within noise"


def outcomes(df: pd.DataFrame, n: int, framework: str = "torch", margin: float = 1.0) -> dict:
    """{vectorized form: LOOP_FASTER, FORM_FASTER or WITHIN_NOISE} at n, for every form that ran
    correctly beside a correct loop of gradients (picks.clearly_faster with the framework's
    margin decides); {} where the loop did not run."""
    rows = queries.wide(df, framework=framework, target="strategy")
    rows = rows[rows["inputs"] == n]
    loop = queries.one(rows, strategy=LOOP)
    if not _ok(loop):
        return {}
    found = {}
    for name in vectorized_forms(framework):
        form = queries.one(rows, strategy=name)
        if not _ok(form):
            continue
        if clearly_faster(loop, form, margin):
            found[name] = LOOP_FASTER
        elif clearly_faster(form, loop, margin):
            found[name] = FORM_FASTER
        else:
            found[name] = WITHIN_NOISE
    return found


_WORDS = ((LOOP_FASTER, "faster than"), (WITHIN_NOISE, "about as fast as"),
          (FORM_FASTER, "slower than"))  # fmt: skip


def loop_verdict(found: dict) -> str:
    """The loop against its vectorized forms in words: 'faster than vectorizing them', 'slower
    than ...', 'about as fast as ... (within the noise of the measurement)' where every form
    agrees, else each kind with its forms named ('faster than batched-backward and jacrev,
    about as fast as functional-vectorized'); NOT_MEASURED where none was compared."""
    if not found:
        return NOT_MEASURED
    kinds = set(found.values())
    if len(kinds) == 1:
        words = dict(_WORDS)[kinds.pop()]
        noise = " (within the noise of the measurement)" if words.startswith("about") else ""
        return f"{words} vectorizing them{noise}"
    parts = []
    for kind, words in _WORDS:
        names = [name for name, k in found.items() if k == kind]
        if names:
            parts.append(f"{words} {' and '.join(names)}")
    return ", ".join(parts)


def vectorizing_reason(found: dict) -> str:
    """What vectorizing three reverse sweeps saves, as the data found it: the per-call overhead
    of the loop, which is little where no form clearly beat the loop, worth more than what
    vectorizing adds where every form did, and worth it for some forms only otherwise."""
    said = "it saves the loop's per-call overhead"
    kinds = set(found.values())
    if FORM_FASTER not in kinds:
        return f"{said}, and with three calls there is little of it to save."
    if kinds == {FORM_FASTER}:
        return f"{said}, and here that saving is worth more than what vectorizing adds."
    return f"{said}, which here pays for what some forms add and not for what the others add."


def loop_advice(found: dict, n: int) -> str:
    """The recommendation's words on the wide Jacobian's loop, from outcomes at the question's
    n: a plain loop of gradients will do where no vectorized form clearly beat it, otherwise
    the forms that did."""
    if not found:
        return (f"Whether a plain loop of gradients does as well as vectorizing it was not "
                f"measured at n = {n:,} in this build.")  # fmt: skip
    faster = [name for name, k in found.items() if k == FORM_FASTER]
    if not faster:
        return (f"With a handful of outputs a plain loop of gradients will do: no vectorized "
                f"form beat it by more than the noise at n = {n:,}.")  # fmt: skip
    return (f"Even with a handful of outputs, vectorizing the loop of gradients paid at "
            f"n = {n:,}: {' and '.join(faster)} beat the loop by more than the noise.")  # fmt: skip
