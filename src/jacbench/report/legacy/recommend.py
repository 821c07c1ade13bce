"""What to use (chapter 6): the one-argument fix to the question's call, finite differences
against automatic differentiation, each framework's pick per Jacobian shape (fastest, within a
memory budget, its own default call) per regime (the question's size, the largest unblocked,
the largest where only blocked forms ran), named only where the data rank them, and what the
answer code's builders cost. The dense Hessians' readings are in chapters.dense_hessians."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, ALLOCATORS, FRAMEWORK_NAMES
from jacbench.measure.targets import SecondOrderTarget
from jacbench.report import formats, queries
from jacbench.report.legacy import accuracy, question, reproduced
from jacbench.second import registry as second
from jacbench.strategies import registry

# The question's PyTorch program and the same call with one argument more, as the prose names
# them ("Measured as `functional-forward`").
QUESTION = "question"
FIX = "functional-forward"

# The three shapes of the decision table, and the size that grows in each (N paths for the tall
# GBM Jacobian, n inputs for the moments problem).
TALL = "tall (N × 2)"
WIDE = "wide (3 × n)"
HESSIAN = "Hessian (n × n per output): dense or products Hv"
SIZE = {TALL: "N", WIDE: "n", HESSIAN: "n"}
SHAPES = (TALL, WIDE, HESSIAN)

# What the answer code prints a cost for: the registry's answer roles and the Hessian-vector
# products.
ANSWER_ROLES = (*registry.ANSWERS, "hvp")


# --- The one-argument fix ---------------------------------------------------------------------


def _question_and_fix(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = queries.gbm(df, framework="torch")
    return rows[rows["strategy"] == QUESTION], rows[rows["strategy"] == FIX]


def _ok_at(rows: pd.DataFrame, paths: int) -> pd.Series | None:
    return queries.one(rows, paths=paths, status="ok")


def _cost_of(row: pd.Series) -> str:
    return f"{formats.time(row['warm_median_s'])} and {formats.size(row['peak_over_inputs'])}"


def fix_compare(df: pd.DataFrame) -> str:
    """The fix against the question's call at the largest N where both ran: 'at N = 1,000 it
    takes 2.2 ms and 84.3 MiB beyond the inputs (...), against 194.1 ms and 131.1 MiB for the
    question's call: 90× faster.'"""
    n = queries.largest_common(df, "torch", [QUESTION, FIX])
    if n is None:
        return f"beside the question's call at the same N, it was {formats.NOT_MEASURED}."
    asked, fixed = _question_and_fix(df)
    a, f = _ok_at(asked, n), _ok_at(fixed, n)
    return (
        f"at N = {n:,} it takes {_cost_of(f)} beyond the inputs (the memory the call adds to "
        f"what the process held before it), against {_cost_of(a)} for the question's call: "
        f"{formats.times(a['warm_median_s'] / f['warm_median_s'], 0)} faster."
    )


def fix_times(df: pd.DataFrame) -> tuple[int | None, float | None, float | None]:
    """(N, the question's call's warm time, the fix's) at the largest N where both ran, as
    fix_compare compares them; (None, None, None) where they never both ran."""
    n = queries.largest_common(df, "torch", [QUESTION, FIX])
    if n is None:
        return None, None, None
    asked, fixed = _question_and_fix(df)
    return n, float(_ok_at(asked, n)["warm_median_s"]), float(_ok_at(fixed, n)["warm_median_s"])


def fate(row: pd.Series) -> str:
    """What became of the question's program: 'took 2.2 ms and 84.3 MiB', 'stopped at the
    memory cap (8.0 GiB) after 34.47 s', 'ran past its timeout (...)', 'was not started: ...'."""
    status = row["status"]
    if status == "ok":
        return f"took {_cost_of(row)}"
    if status == "memory-cap":
        return (
            f"stopped at the memory cap ({formats.size(row['mem_cap'])}) after "
            f"{formats.time(row['wall_s'])}"
        )
    if status == "timeout":
        return f"ran past its timeout ({formats.time(row['timeout'])})"
    if status == "skipped-predicted":
        return f"was not started: the memory model predicted {formats.size(row['predicted_peak'])}"
    return "failed with an error"


def fix_beyond(df: pd.DataFrame) -> str:
    """The question's program at the largest N it was tried beyond fix_compare's (a finished
    row first) and the fix there: 'At N = 10,000 the question's program stopped at the memory
    cap (8.0 GiB) after 34.47 s; the one-argument fix took 10.4 ms and 124.5 MiB.'"""
    asked, fixed = _question_and_fix(df)
    larger = asked[asked["paths"] > (queries.largest_common(df, "torch", [QUESTION, FIX]) or 0)]
    if larger.empty:
        return "The question's program was tried at no larger N in this build."
    n = int(larger["paths"].max())
    at = larger[larger["paths"] == n]
    big = _ok_at(at, n)
    big = at.iloc[0] if big is None else big
    there = _ok_at(fixed, n)
    fix = (
        f"took {_cost_of(there)}."
        if there is not None
        else f"was {formats.NOT_MEASURED} at that N."
    )
    others = _under_other_allocators(df, n)
    if not others:
        return f"At N = {n:,} the question's program {fate(big)}; the one-argument fix {fix}"
    if there is not None and not formats.missing(there["cold_s"]):
        # Beside the other allocators' first and warm calls, the fix's both.
        fix = (f"took {formats.time(there['cold_s'])} a first call and "
               f"{formats.time(there['warm_median_s'])} a warm one, holding "
               f"{formats.size(there['peak_over_inputs'])} beyond the inputs.")  # fmt: skip
    return (
        f"At N = {n:,} the question's program, under glibc's malloc with its default settings, "
        f"{fate(big)}; {others}. Under glibc, the one-argument fix {fix}"
    )


def _under_other_allocators(df: pd.DataFrame, paths: int) -> str:
    """What became of the question's PyTorch program at N under the allocators other than glibc
    (chapter 1 measures them): 'under glibc-mmap it took 54.08 s a first call and 1 min 6 s a
    warm one, under jemalloc 5.69 s and 5.05 s'; '' where it was run under none of them."""
    said = []
    for allocator in ALLOCATORS:
        row = reproduced.program(df, "torch", paths, allocator)
        if allocator == "glibc" or row is None:
            continue
        if row["status"] == "ok":
            first, warm = formats.duration(row["cold_s"]), formats.duration(row["warm_median_s"])
            if any("first call" in s for s in said):
                said.append(f"under {allocator} {first} and {warm}")
            else:
                said.append(f"under {allocator} it took {first} a first call and {warm} a warm one")
        else:
            said.append(f"under {allocator} it {fate(row)}")
    return ", ".join(said)


def fix_repeated(df: pd.DataFrame) -> str:
    """Whether the fix's memory grew over its repeated calls, at the largest N it ran: the peak
    during the warm calls against the first call's, with how many warm calls there were."""
    _, fixed = _question_and_fix(df)
    ok = fixed[fixed["status"] == "ok"]
    if ok.empty:
        return f"Its repeated calls were {formats.NOT_MEASURED} here."
    r = ok.iloc[-1]
    cold, warm, calls = r["cold_peak"], r["warm_peak"], r["warm_n"]
    if formats.missing(cold) or formats.missing(warm) or formats.missing(calls):
        return f"Its memory over repeated calls was {formats.NOT_MEASURED} here."
    grew = warm > 1.1 * cold
    how = (
        f"grew to {formats.size(warm)} from the first call's {formats.size(cold)}"
        if grew
        else f"stayed at {formats.size(warm)} (the first call: {formats.size(cold)})"
    )
    return (
        f"Here, on the CPU at N = {int(r['paths']):,}, the process's peak over "
        f"{int(calls)} warm calls {how}; a sweep makes far fewer calls than an optimiser's "
        "loop, so a slow leak could still hide from it."
    )


# --- Finite differences against automatic differentiation --------------------------------------


def _finite_difference(df: pd.DataFrame) -> pd.Series | None:
    """numpy's central differences at the largest N they ran correctly."""
    return queries.largest_ok(df, "numpy", "finite-difference")


def _ad_at(df: pd.DataFrame, paths: int) -> pd.DataFrame:
    """The AD frameworks' correct strategies at N, the question's programs left out."""
    return queries.candidates(queries.gbm(df, framework=AD_FRAMEWORKS, paths=paths, status="ok"))


def fd_cost(df: pd.DataFrame) -> str:
    """Finite differences' time over the numpy simulation's (side by side), then on one scale
    (each warm time over its framework's fastest simulation given the same normals) beside the
    cheapest AD strategy there (accuracy.cheapest_ad): 'cost 6.26× [5.86–6.84] the numpy
    simulation's time at N = 1,000,000; on one scale, ... 6.4×, against TensorFlow's
    forward-accumulator-xla (1.0×) for the cheapest automatic-differentiation strategy there.'"""
    fd = _finite_difference(df)
    if fd is None:
        return f"were {formats.NOT_MEASURED}."
    n = int(fd["paths"])
    r = accuracy.cheapest_ad(df, n)
    cheapest = (
        formats.NOT_MEASURED
        if r is None
        else (
            f"{FRAMEWORK_NAMES[r['framework']]}'s {queries.short_name(r)} "
            f"({formats.times(r['ratio_to_fastest_simulation'])})"
        )
    )
    return (
        f"cost {formats.ratio_with_spread(fd)} the numpy simulation's time at N = {n:,}; on one "
        f"scale, each warm time over its framework's fastest simulation given the same normals, "
        f"{formats.times(fd['ratio_to_fastest_simulation'])}, against {cheapest} for the "
        f"cheapest automatic-differentiation strategy there (a path-blocked one, which draws "
        f"its own normals, is not on that scale)."
    )


def monte_carlo_error(row: pd.Series) -> float:
    """The Monte-Carlo standard error of the paths' mean dS_T/dS0 = S_T/S0 relative to the mean,
    for geometric Brownian motion: sqrt(exp(vol^2 T) - 1) / sqrt(N)."""
    return float(np.sqrt(np.expm1(row["vol"] ** 2 * row["maturity"]) / int(row["paths"])))


def fd_accuracy(df: pd.DataFrame) -> str:
    """Finite differences' largest error against the AD strategies' and the Monte-Carlo error:
    'Their largest relative error per path, 2.4e-05, is above float32's rounding in the
    automatic-differentiation strategies (5.1e-07 at most) and below the Monte-Carlo ...'"""
    fd = _finite_difference(df)
    if fd is None:
        return f"Their error was {formats.NOT_MEASURED} either."
    mc = monte_carlo_error(fd)
    errors = _ad_at(df, int(fd["paths"]))["max_rel_error"].dropna()
    ad_error = formats.error(errors.max()) if len(errors) else formats.NOT_MEASURED
    side = "below" if fd["max_rel_error"] < mc else "above"
    return (
        f"Their largest relative error per path, {formats.error(fd['max_rel_error'])}, is above "
        f"float32's rounding in the automatic-differentiation strategies ({ad_error} at most) "
        f"and {side} the Monte-Carlo standard error of the simplest Greek at that N, the paths' "
        f"mean of dS_T/dS0: {mc:.1e} of its value."
    )


# --- The candidates ---------------------------------------------------------------------------


def candidates(df: pd.DataFrame) -> pd.DataFrame:
    """Every case of the three shapes of the AD frameworks, whatever became of it, with its
    shape, its growing size and its short name: Hessians as the matrix or by products Hv (the
    diagonal by one product is exact for separable functions only, so not a general pick)."""
    tall = queries.gbm(df).assign(shape=TALL, size=lambda d: d["paths"])
    wide = queries.wide(df, target="strategy").assign(shape=WIDE, size=lambda d: d["inputs"])
    hessian = queries.second_order(df, "moments", kind=("dense", "hvp"))
    hessian = hessian.assign(shape=HESSIAN, size=lambda d: d["inputs"])
    found = pd.concat([tall, wide, hessian])
    found = queries.candidates(found[found["framework"].isin(AD_FRAMEWORKS)])
    return found.assign(name=[queries.short_name(r) for _, r in found.iterrows()])


def default_name(framework: str, shape: str) -> str:
    """The framework's own call for a shape: its jacobian (tall, wide) or its hessian."""
    own = second.default(framework) if shape == HESSIAN else registry.default(framework)
    return own.name


# --- The decision rules -----------------------------------------------------------------------


def shape_rows(cands: pd.DataFrame, framework: str, shape: str) -> pd.DataFrame:
    """The candidates of one framework and shape."""
    return cands[(cands["framework"] == framework) & (cands["shape"] == shape)]


def at_size(rows: pd.DataFrame, n: int) -> pd.DataFrame:
    """The correct rows at one size."""
    return rows[(rows["status"] == "ok") & (rows["size"] == n)]


def within(rows: pd.DataFrame, budget_gib: float) -> pd.Series | None:
    """The fastest row whose absolute peak memory (cold or warm call) fits in the budget."""
    return queries.fastest(rows[rows["peak"] <= budget_gib * 2**30])


def default_at(rows: pd.DataFrame, name: str, n: int) -> pd.Series | None:
    """The framework's own function at size n or, where it was not run there, at the largest
    size it was tried (whatever became of it)."""
    tried = rows[rows["name"] == name].sort_values("size", kind="stable")
    at = tried[tried["size"] == n]
    return (at if len(at) else tried).iloc[-1] if len(tried) else None


def fitted(row: pd.Series | None, rows: pd.DataFrame | None = None) -> str:
    """'pathwise (600.4 MiB)': the pick within a budget and its peak; where none fits but some
    of rows (those the budget was applied to) ran correctly, 'none fits (smallest 1,070.4 MiB)'
    (in MiB, so that a peak just over a budget of whole GiB does not print as the budget);
    otherwise 'none measured'."""
    if row is not None:
        return f"{row['name']} ({formats.size(row['peak'])})"
    ran = None if rows is None else rows[(rows["status"] == "ok").fillna(False).astype(bool)]
    if ran is None or ran["peak"].dropna().empty:
        return "none measured"
    return f"none fits (smallest {ran['peak'].min() / 2**20:,.1f} MiB)"


def outcome_at(row: pd.Series | None, shape: str) -> str:
    """'functional-loop: 380.2 ms at N = 1,000'; '–' where there is no row."""
    if row is None:
        return "–"
    return f"{row['name']}: {formats.outcome(row)} at {SIZE[shape]} = {int(row['size']):,}"


def against_question(df: pd.DataFrame, framework: str, shape: str) -> str:
    """For the tall Jacobian, the fastest strategy at the question's N against the question's
    own program (JAX's against the PyTorch one), in time and memory beyond the inputs; where the
    program did not finish, what stopped it ('pathwise: the question's program failed at the
    16.0 GiB cap'); '–'."""
    if shape != TALL:
        return "–"
    n = reproduced.QUESTION_N
    best = queries.best(df, framework, n)
    vs = question.against_brief(best, question.reference(df, framework, n))
    return f"{queries.short_name(best)}: {vs}" if best is not None else vs


# --- What the answer code's builders cost -----------------------------------------------------


def cost(rows: pd.DataFrame, size: str) -> str:
    """'106.7 ms a call at N = 100,000, 3.05× [2.95–3.15] the simulation's time; peak memory
    600.4 MiB', from rows of one strategy sorted by size ('N' paths or 'n' inputs); where it
    never ran correctly, what stopped it at the largest size tried."""
    if rows.empty:
        return formats.NOT_MEASURED
    ok = rows[rows["status"] == "ok"]
    row = (ok if len(ok) else rows).iloc[-1]
    at = f"{size} = {int(row['paths' if size == 'N' else 'inputs']):,}"
    if row["status"] != "ok":
        return f"{formats.outcome(row)} at {at}"
    text = f"{formats.time(row['warm_median_s'])} a call at {at}"
    if queries.ratio(row) is not None:
        text += f", {formats.ratio_with_spread(row)} the simulation's time"
    return f"{text}; peak memory {formats.size(row['peak'])}"


def answer_rows(df: pd.DataFrame, framework: str, role: str) -> tuple[pd.DataFrame, str]:
    """The rows of the builder the answer code prints for a role of ANSWER_ROLES, by size, and
    the size's letter: the GBM's pathwise and forward ('N'), the wide Jacobian's and the
    Hessian-vector products' ('n')."""
    if role == "hvp":
        name = SecondOrderTarget(framework, second.answer(framework).name).text
        return queries.second_order(df, "moments", framework=framework, strategy=name), "n"
    name = registry.answer(framework, role).name
    if role == "wide":
        return queries.wide(df, target="strategy", framework=framework, strategy=name), "n"
    rows = queries.gbm(df, framework=framework)
    return rows[rows["strategy"] == name], "N"


def answer_cost(df: pd.DataFrame, framework: str, role: str) -> str:
    """What the answer code's builder for a role cost at the largest size where it ran (see
    cost)."""
    return cost(*answer_rows(df, framework, role))


def blocked_forms() -> str:
    """The registry's path-blocked GBM strategies, framework by framework: 'PyTorch's
    blocked-pathwise and blocked-jvp; TensorFlow's ...'."""
    said = []
    for fw in AD_FRAMEWORKS:
        names = [s.name for s in registry.STRATEGIES if s.framework == fw and s.blocked]
        if names:
            said.append(f"{FRAMEWORK_NAMES[fw]}'s {' and '.join(names)}")
    return "; ".join(said)


# --- In short -----------------------------------------------------------------------------------


def in_short(paths: int | None, question_s: float | None, fix_s: float | None) -> str:
    """The chapter's answer: the rule by shape, and the one-argument fix's warm time against the
    question's call at the largest N where both ran (paths; None where they never both ran)."""
    rule = (
        "For a tall Jacobian (many outputs, few inputs) use forward mode, or the pathwise "
        "gradient where each output has its own copy of the inputs; for a wide one, reverse mode; "
        "for second derivatives, Hessian-vector products rather than dense Hessians."
    )
    fix = 'The smallest fix to the question\'s call is one argument, strategy="forward-mode"'
    if paths is None or formats.missing(question_s) or formats.missing(fix_s):
        return f"{rule} {fix}; it was not measured beside the question's call in this profile."
    ratio = question_s / fix_s
    pace = (f"{formats.fold(ratio)} faster" if ratio >= 1
            else f"{formats.fold(1 / ratio)} slower")  # fmt: skip
    return (
        f"{rule} {fix}: at N = {paths:,} it takes {formats.time(fix_s)} against "
        f"{formats.time(question_s)} for the question's call, {pace}."
    )
