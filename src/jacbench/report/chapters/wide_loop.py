"""The loop of gradients against its vectorized forms (chapter 5): which is faster by more than
the noise of the measurement, form by form, and what that says about vectorizing a handful of
reverse sweeps."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.report.chapters.picks import clearly_faster
from jacbench.report.chapters.wide import LOOP, _ok, vectorized_forms
from jacbench.report.formats import NOT_MEASURED
from jacbench.strategies import registry

LOOP_FASTER = "loop"
FORM_FASTER = "vectorized"
WITHIN_NOISE = "within noise"


def loop_of(framework: str) -> str | None:
    """A framework's loop of gradients: grad-loop in PyTorch, the loop its default call
    vectorizes elsewhere (tape-jacobian-loop in TensorFlow); None where there is none."""
    return LOOP if framework == "torch" else (registry.default(framework).vectorizes or None)


def outcomes(df: pd.DataFrame, n: int, framework: str = "torch", margin: float = 1.0) -> dict:
    """{vectorized form: LOOP_FASTER, FORM_FASTER or WITHIN_NOISE} at n, for every form that ran
    correctly beside a correct loop of gradients (loop_of; picks.clearly_faster with the
    framework's margin decides); {} where the loop did not run."""
    rows = queries.wide(df, framework=framework, target="strategy")
    rows = rows[rows["inputs"] == n]
    loop = queries.one(rows, strategy=loop_of(framework))
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


def outcomes_by_n(df: pd.DataFrame, framework: str = "torch", margin: float = 1.0) -> dict:
    """{n: outcomes at n} at every n where the framework's loop of gradients was compared with a
    vectorized form, smallest n first."""
    rows = queries.wide(df, framework=framework, target="strategy", strategy=loop_of(framework))
    found = {int(n): outcomes(df, int(n), framework, margin) for n in sorted(set(rows["inputs"]))}
    return {n: f for n, f in found.items() if f}


def _at(sizes: list[int], measured: list[int] | None = None) -> str:
    """'n = 1,000 and 10,000'; 'every n measured (n = 1,000 to 10,000,000)' where sizes are all
    of more than two measured."""
    if measured is not None and len(sizes) > 2 and sorted(sizes) == sorted(measured):
        return f"every n measured (n = {min(sizes):,} to {max(sizes):,})"
    return "n = " + formats.listing([f"{n:,}" for n in sizes])


def elsewhere(by_n: dict, n: int) -> str:
    """The loop's verdict at the other n measured, sizes of one verdict together, the verdict at
    n first: 'At n = 1,000,000 the loop is also faster than vectorizing them; at n = 1,000 and
    10,000 it is about as fast as ...'; '' where there is no other n."""
    here = loop_verdict(by_n.get(n, {}))
    groups: dict[str, list[int]] = {}
    for size, found in by_n.items():
        if size != n:
            groups.setdefault(loop_verdict(found), []).append(size)
    ordered = sorted(groups.items(), key=lambda g: g[0] != here)
    said = [f"at {_at(sizes)} {'the loop' if i == 0 else 'it'} is"
            f"{' also' if verdict == here else ''} {verdict}"
            for i, (verdict, sizes) in enumerate(ordered)]  # fmt: skip
    if not said:
        return "The loop was compared with them at no other n."
    said = "; ".join(said)
    return f"{said[0].upper()}{said[1:]}."


def loop_over_form(df: pd.DataFrame, n: int, framework: str, form: str | None) -> str:
    """The framework's loop of gradients' warm time over a form's, at n and over every n both
    ran: '11.8× its time at n = 100,000 (4.2× to 23.9× over n = 1,000 to 10,000,000)'; NOT_MEASURED
    where they did not both run at n or there is no form."""
    rows = queries.wide(df, framework=framework, target="strategy", status="ok")
    loops = rows[rows["strategy"] == loop_of(framework)].set_index("inputs")["warm_median_s"]
    forms = rows[rows["strategy"] == form].set_index("inputs")["warm_median_s"]
    ratios = (loops / forms).dropna()
    if n not in ratios.index:
        return NOT_MEASURED
    said = f"{formats.times(ratios[n])} its time at n = {n:,}"
    if len(ratios) > 1:
        said += (f" ({formats.span(ratios, formats.times)} over n = {int(ratios.index.min()):,} "
                 f"to {int(ratios.index.max()):,})")  # fmt: skip
    return said


def rule_advice(by_framework: dict) -> str:
    """Whether a loop of gradients is enough, framework by framework ({framework: outcomes_by_n}):
    the n at which no vectorized form beat it by more than the noise, and those at which some
    did, with the forms; says which frameworks had no loop measured."""
    said, unmeasured = [], []
    for fw, by_n in by_framework.items():
        if not by_n:
            unmeasured.append(FRAMEWORK_NAMES[fw])
            continue
        enough = [n for n, found in by_n.items() if FORM_FASTER not in found.values()]
        beaten = {n: [f for f, k in found.items() if k == FORM_FASTER]
                  for n, found in by_n.items() if n not in enough}  # fmt: skip
        parts = [f"in {FRAMEWORK_NAMES[fw]}"]
        if enough:
            parts.append(f"no vectorized form beat it by more than the noise at "
                         f"{_at(enough, list(by_n))}")  # fmt: skip
        forms: dict[str, list[int]] = {}
        for n, names in beaten.items():
            forms.setdefault(formats.listing(names), []).append(n)
        for names, sizes in forms.items():
            parts.append(f"{names} beat it at {_at(sizes, list(by_n))}")
        said.append(f"{parts[0]} {', and '.join(parts[1:])}")
    if unmeasured:
        said.append(f"no loop of gradients was measured in {formats.listing(unmeasured)}")
    return "; ".join(said)
