"""The loop of gradients against its vectorized forms (chapter 5): which is faster by more than
the noise of the measurement, form by form, and what that says about vectorizing a handful of
reverse sweeps."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.report.formats import NOT_MEASURED
from jacbench.report.legacy.picks import clearly_faster
from jacbench.report.legacy.wide import LOOP, _ok, vectorized_forms
from jacbench.strategies import registry

LOOP_FASTER = "loop"
FORM_FASTER = "vectorized"
WITHIN_NOISE = "within noise"
# Both calls under data.OVERHEAD_S: per-call overhead decides, and the book does not rank them.
UNRANKED = "unranked"
UNRANKED_SAID = "every call is under a millisecond, where this report does not rank them"
# A win by less than this factor beyond the margin is said to be just past it.
THIN = 1.05
# How a compiled form is compiled, in a sentence, by its registry execution.
ENGINES = {"function": "tf.function", "jit": "jit", "inductor": "torch.compile", "xla": "XLA"}


def loop_of(framework: str) -> str | None:
    """A framework's loop of gradients: grad-loop in PyTorch, the loop its default call
    vectorizes elsewhere (tape-jacobian-loop in TensorFlow); None where there is none."""
    return LOOP if framework == "torch" else (registry.default(framework).vectorizes or None)


def outcomes(df: pd.DataFrame, n: int, framework: str = "torch", margin: float = 1.0) -> dict:
    """{vectorized form: LOOP_FASTER, FORM_FASTER, WITHIN_NOISE or UNRANKED} at n, for every
    form that ran correctly beside a correct loop of gradients (loop_of; UNRANKED where both are
    overhead-bound, else picks.clearly_faster with the framework's margin decides); {} where the
    loop did not run."""
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
        if _quick(loop) and _quick(form):
            found[name] = UNRANKED
        elif clearly_faster(loop, form, margin):
            found[name] = LOOP_FASTER
        elif clearly_faster(form, loop, margin):
            found[name] = FORM_FASTER
        else:
            found[name] = WITHIN_NOISE
    return found


def _quick(row: pd.Series) -> bool:
    value = row.get("overhead_bound")
    return not formats.missing(value) and bool(value)


_WORDS = ((LOOP_FASTER, "faster than"), (WITHIN_NOISE, "about as fast as"),
          (FORM_FASTER, "slower than"), (UNRANKED, "not ranked against"))  # fmt: skip


def thin_wins(df: pd.DataFrame, n: int, framework: str, margin: float) -> dict[str, float]:
    """{form: the slower median over the faster} at n for each form that beat the loop, or lost
    to it, by less than THIN times the margin: a ranking just past the margin."""
    rows = queries.wide(df, framework=framework, target="strategy", inputs=n, status="ok")
    loop = queries.one(rows, strategy=loop_of(framework))
    thin = {}
    for name, kind in outcomes(df, n, framework, margin).items():
        if kind in (LOOP_FASTER, FORM_FASTER):
            a, b = loop["warm_median_s"], queries.one(rows, strategy=name)["warm_median_s"]
            if max(a, b) / min(a, b) < THIN * margin:
                thin[name] = float(max(a, b) / min(a, b))
    return thin


def loop_verdict(found: dict, thin: dict | None = None, margin: float = 1.0) -> str:
    """The loop against its vectorized forms in words: 'faster than vectorizing them', 'slower
    than ...', 'about as fast as ... (within the noise of the measurement)', 'not ranked against
    vectorizing them (every call is under a millisecond)' where every form agrees, else each
    kind with its forms named ('faster than batched-backward, slower than jacrev'); a form in
    thin (thin_wins) is said to be just past the margin, in the clause that names it;
    NOT_MEASURED where none was compared."""
    if not found:
        return NOT_MEASURED
    kinds = set(found.values())
    if len(kinds) == 1:
        kind = kinds.pop()
        words = dict(_WORDS)[kind]
        noise = {WITHIN_NOISE: " (within the noise of the measurement)",
                 UNRANKED: " (every call is under a millisecond)"}.get(kind, "")  # fmt: skip
        return f"{words} vectorizing them{noise}{_thin(thin, margin)}"
    parts = []
    for kind, words in _WORDS:
        names = [name for name, k in found.items() if k == kind]
        if names:
            quick = " (both under a millisecond)" if kind == UNRANKED else ""
            # A thin ranking is said in the clause that makes it, not after the last one.
            here = {name: r for name, r in (thin or {}).items() if name in names}
            thin_said = _thin(here, margin, named=len(names) > 1)
            parts.append(f"{words} {' and '.join(names)}{quick}{thin_said}")
    return ", ".join(parts)


def _thin(thin: dict | None, margin: float, named: bool = True) -> str:
    """' (jacrev by 1.10×, just past the margin of 1.094×)'; without the name where its clause
    names one form only; '' for no thin ranking."""
    if not thin:
        return ""
    by = formats.listing(
        [f"{name + ' ' if named else ''}by {formats.times(r, 2)}" for name, r in thin.items()]
    )
    return f" ({by}, just past the margin of {formats.times(margin, 3)})"


def vectorizing_reason(found: dict) -> str:
    """What vectorizing three reverse sweeps saves, as the data found it: the per-call overhead
    of the loop, which is little where no form clearly beat the loop, worth more than what
    vectorizing adds where every form did, and worth it for some forms only otherwise."""
    said = "it saves the loop's per-call overhead"
    kinds = set(found.values())
    if kinds == {UNRANKED}:
        return f"{said}; here {UNRANKED_SAID}."
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
    if set(found.values()) == {UNRANKED}:
        return f"With a handful of outputs, at n = {n:,} {UNRANKED_SAID}."
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


def elsewhere(by_n: dict, n: int, thin_by_n: dict | None = None, margin: float = 1.0) -> str:
    """The loop's verdict at the other n measured, sizes of one verdict together, the verdict at
    n first: 'At n = 1,000,000 the loop is also faster than vectorizing them; at n = 1,000 and
    10,000 every call is under a millisecond, ...'; thin_by_n ({n: thin_wins}) marks rankings
    just past the margin; '' where there is no other n."""
    thin_by_n = thin_by_n or {}
    here = loop_verdict(by_n.get(n, {}), thin_by_n.get(n), margin)
    groups: dict[str, list[int]] = {}
    for size, found in by_n.items():
        if size != n:
            groups.setdefault(loop_verdict(found, thin_by_n.get(size), margin), []).append(size)
    said, named = [], False
    for verdict, sizes in sorted(groups.items(), key=lambda g: g[0] != here):
        if set(by_n[sizes[0]].values()) == {UNRANKED}:
            said.append(f"at {_at(sizes)} {UNRANKED_SAID}")
            continue
        subject = "it" if named else "the loop"
        named = True
        said.append(f"at {_at(sizes)} {subject} is{' also' if verdict == here else ''} {verdict}")
    if not said:
        return "The loop was compared with them at no other n."
    said = "; ".join(said)
    return f"{said[0].upper()}{said[1:]}."


def loop_over_form(df: pd.DataFrame, n: int, framework: str, form: str | None) -> str:
    """The framework's loop of gradients' warm time over a form's, at n and over every n both
    ran: '11.8× as long as tape-jacobian-function at n = 100,000 (4.2× to 23.9× over n = 1,000
    to 10,000,000)'; NOT_MEASURED where they did not both run at n or there is no form."""
    rows = queries.wide(df, framework=framework, target="strategy", status="ok")
    loops = rows[rows["strategy"] == loop_of(framework)].set_index("inputs")["warm_median_s"]
    forms = rows[rows["strategy"] == form].set_index("inputs")["warm_median_s"]
    ratios = (loops / forms).dropna()
    if n not in ratios.index:
        return NOT_MEASURED
    said = f"{formats.times(ratios[n])} as long as {form} at n = {n:,}"
    if len(ratios) > 1:
        said += (f" ({formats.span(ratios, formats.times)} over n = {int(ratios.index.min()):,} "
                 f"to {int(ratios.index.max()):,})")  # fmt: skip
    return said


def _record(framework: str, name: str):
    return registry.get(framework, name)


def _engine(framework: str, names: list[str]) -> str:
    return ENGINES.get(_record(framework, names[0]).execution, "compiled")


def _sayings(framework: str, by_n: dict) -> list[str]:
    """rule_advice's clauses for one framework, in groups: the sizes where every call is under a
    millisecond; where no vectorized form beat the loop and where some did; and, where only a
    compiled form beat an eager loop, that the eager forms never did and whether a compiled loop
    was measured."""
    every = list(by_n)
    unranked = [n for n, found in by_n.items() if set(found.values()) == {UNRANKED}]
    ranked = {n: found for n, found in by_n.items() if n not in unranked}
    eager_loop = not _record(framework, loop_of(framework)).compiled
    enough, eager, compiled = [], {}, {}
    for n, found in ranked.items():
        beat = [name for name, k in found.items() if k == FORM_FASTER]
        if not beat:
            enough.append(n)
        own = [name for name in beat if eager_loop and _record(framework, name).compiled]
        if own:
            compiled.setdefault(tuple(own), []).append(n)
        if [name for name in beat if name not in own]:
            eager.setdefault(tuple(name for name in beat if name not in own), []).append(n)
    first = ([f"every call is under a millisecond at {_at(unranked, every)}, where this report "
              "does not rank them"] if unranked else [])  # fmt: skip
    second = [f"no vectorized form beat the loop at {_at(enough, every)}"] if enough else []
    second += [f"{formats.listing(list(names))} beat it at {_at(sizes, every)}"
               for names, sizes in eager.items()]  # fmt: skip
    third = []
    for names, sizes in compiled.items():
        second.append(f"{'' if eager else 'only '}the compiled {formats.listing(list(names))} "
                      f"({_engine(framework, list(names))}) beat the eager loop at "
                      f"{_at(sizes, every)}")  # fmt: skip
    if compiled:
        engine = _engine(framework, list(next(iter(compiled))))
        if not eager:
            third.append("the eager vectorized forms never did")
        loops = [s for s in registry.by_framework(framework, "moments")
                 if s.batching == "loop" and s.compiled]  # fmt: skip
        if not loops:
            third.append(f"no loop inside {engine} is among the strategies")
    return [", and ".join(group) for group in (first, second, third) if group]


def rule_advice(by_framework: dict) -> str:
    """Whether a loop of gradients is enough, framework by framework ({framework: outcomes_by_n}),
    a sentence each: the n at which every call is under a millisecond (not ranked), those at
    which no vectorized form beat the loop, those at which some did, with the forms, a compiled
    form kept apart from the eager ones; says which frameworks had no loop measured."""
    said, unmeasured = [], []
    for fw, by_n in by_framework.items():
        if not by_n:
            unmeasured.append(FRAMEWORK_NAMES[fw])
            continue
        said.append(f"In {FRAMEWORK_NAMES[fw]} {'; '.join(_sayings(fw, by_n))}.")
    if unmeasured:
        said.append(f"No loop of gradients was measured in {formats.listing(unmeasured)}.")
    return " ".join(said)


def noise_rule(margins: dict[str, float]) -> str:
    """When this chapter calls one call faster than another by more than the noise of the
    measurement (picks.clearly_faster): its median shorter by more than the framework's margin
    (named where one is not 1), the other's fastest call slower than that median, and not both
    under a millisecond."""
    named = [f"{FRAMEWORK_NAMES[fw]} {formats.times(m, 3)}" for fw, m in margins.items()]
    shorter = ("its median is shorter by more than the framework's margin "
               f"({', '.join(named)})" if any(m > 1 for m in margins.values())
               else "its median is shorter")  # fmt: skip
    return (
        f"{shorter}, and the other's fastest call is slower than that median; two calls "
        "both under a millisecond are not ranked"
    )
