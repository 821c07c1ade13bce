"""What to use (chapter 6): the one-argument fix to the question's call, finite differences
against automatic differentiation, each framework's pick per Jacobian shape (fastest, within a
memory budget, its own default call) per regime (the question's size, the largest in memory,
beyond it), named only where the data rank them, and what the answer code's builders cost. The dense
Hessians' readings are in chapters.dense_hessians."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.measure.targets import SecondOrderTarget
from jacbench.report import formats, queries
from jacbench.report.chapters import accuracy, occasions, question, reproduced
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
    return f"At N = {n:,} the question's program {fate(big)}; the one-argument fix {fix}"


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
    """Finite differences' time over the numpy simulation's, beside the cheapest AD strategy's
    ratio at the same N: 'cost 7.44× [6.77–9.04] the numpy simulation's time at N = 1,000,000,
    against JAX's blocked-jvp (1.12× [1.10–1.20]) for the cheapest ... there.'"""
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
            f"({formats.ratio_with_spread(r)})"
        )
    )
    return (
        f"cost {formats.ratio_with_spread(fd)} the numpy simulation's time at N = {n:,}, "
        f"against {cheapest} for the cheapest automatic-differentiation strategy there."
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


# --- float32 or float64 ----------------------------------------------------------------------


def float64_costs(df: pd.DataFrame) -> pd.DataFrame:
    """Every AD strategy measured correctly in float64 at some N beside its float32 row at the
    same N (allocator glibc): its two warm medians and float64's over float32's."""
    f64 = queries.gbm(df, framework=AD_FRAMEWORKS, dtype="float64", status="ok")
    rows = []
    for _, r in f64.iterrows():
        f32 = queries.one(queries.gbm(df, framework=r["framework"], status="ok"),
                          strategy=r["strategy"], paths=r["paths"])  # fmt: skip
        if f32 is None:
            continue
        rows.append({"framework": r["framework"], "strategy": r["strategy"],
                     "paths": int(r["paths"]), "float32_s": float(f32["warm_median_s"]),
                     "float64_s": float(r["warm_median_s"])})  # fmt: skip
    out = pd.DataFrame(rows, columns=["framework", "strategy", "paths", "float32_s", "float64_s"])
    out["over"] = out["float64_s"] / out["float32_s"]
    order = out["framework"].map(AD_FRAMEWORKS.index)
    return out.iloc[order.argsort(kind="stable")].reset_index(drop=True)


def float64_sentence(costs: pd.DataFrame) -> str:
    """What float64 costs per framework, as the range of float64/float32 over its strategies."""
    if costs.empty:
        return "float64 was not measured beside float32 in this build."
    parts = []
    for fw, rows in costs.groupby("framework", sort=False):
        lo, hi = rows.loc[rows["over"].idxmin()], rows.loc[rows["over"].idxmax()]
        span = (
            f"{formats.times(lo['over'])} ({lo['strategy']})"
            if lo.name == hi.name
            else f"{formats.times(lo['over'])} ({lo['strategy']}) to "
            f"{formats.times(hi['over'])} ({hi['strategy']})"
        )
        parts.append(f"{FRAMEWORK_NAMES[fw]} {span}")
    n = sorted(set(costs["paths"]))
    at = f"N = {n[0]:,}" if len(n) == 1 else "the N measured"
    return f"At {at}, float64 takes " + "; ".join(parts) + " the float32 time."


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


def fitted(row: pd.Series | None) -> str:
    """'pathwise (600.4 MiB)': the pick within a budget and its peak; 'none measured'."""
    return f"{row['name']} ({formats.size(row['peak'])})" if row is not None else "none measured"


def outcome_at(row: pd.Series | None, shape: str) -> str:
    """'functional-loop: 380.2 ms at N = 1,000'; '–' where there is no row."""
    if row is None:
        return "–"
    return f"{row['name']}: {formats.outcome(row)} at {SIZE[shape]} = {int(row['size']):,}"


def against_question(df: pd.DataFrame, framework: str, shape: str) -> str:
    """For the tall Jacobian, the fastest strategy at the question's N against the question's
    own program (JAX's against the PyTorch one), in time and memory beyond the inputs; where the
    program did not finish, what stopped it ('pathwise: it failed at the 16.0 GiB cap'); '–'."""
    if shape != TALL:
        return "–"
    n = reproduced.QUESTION_N
    best = queries.best(df, framework, n)
    vs = question.against_brief(best, question.reference(df, framework, n))
    return f"{queries.short_name(best)}: {vs}" if best is not None else vs


def decision_columns(budgets_gib) -> list[str]:
    """The decision table's columns, one per memory budget among them."""
    return (
        ["framework", "Jacobian shape", "where", "fastest there"]
        + [f"fastest within {b:g} GiB" for b in budgets_gib]
        + ["the framework's default"]
        + [f"fastest against the question's program at N = {reproduced.QUESTION_N:,}"]
    )


def decision_table(
    df: pd.DataFrame, cands: pd.DataFrame, budgets_gib, margin_by: dict[str, float] | None = None
) -> pd.DataFrame:
    """Per framework, shape and regime (regimes): the pick there (group_phrase of pick_group
    with the framework's margin), the fastest within each budget, the framework's own call
    and, for the tall Jacobian at the question's N, the fastest against the question's
    program."""
    margin_by = margin_by or {}
    table = []
    for fw in AD_FRAMEWORKS:
        margin = margin_by.get(fw, 1.0)
        for shape in SHAPES:
            rows = shape_rows(cands, fw, shape)
            for regime, n, group in regime_picks(cands, fw, shape, margin):
                there = at_size(rows, n)
                question_size = shape == TALL and n == reproduced.QUESTION_N
                table.append(
                    [FRAMEWORK_NAMES[fw], shape, f"{regime}, {SIZE[shape]} = {n:,}",
                     group_phrase(group, margin)]
                    + [fitted(within(there, b)) for b in budgets_gib]
                    + [outcome_at(default_at(rows, default_name(fw, shape), n), shape)]
                    + [against_question(df, fw, shape) if question_size else "–"]
                )  # fmt: skip
    return pd.DataFrame(table, columns=decision_columns(budgets_gib))


# --- Picks per regime -------------------------------------------------------------------------

# The second question's n (the wide Jacobian's size it asked about).
QUESTION_INPUTS = 100_000
# The regimes a pick is made in: the question's size, the largest size with the arrays in
# memory (the tall Jacobian's unblocked strategies), and beyond it (only blocked ones ran).
QUESTION_SIZE, IN_MEMORY, BEYOND, LARGEST = (
    "the question's size",
    "largest in memory",
    "beyond memory",
    "largest measured",
)
# At most this many names in one pick; the rest are counted.
MOST_NAMED = 3


def margins(first: pd.DataFrame, second: pd.DataFrame | None) -> dict[str, float]:
    """How many times faster one strategy's warm median must be than another's for the book to
    rank them, per framework: the largest factor by which one of that framework's side-by-side
    ratios moved between the two occasions (occasions.moved at every N of the second; any
    framework's largest for one with none there); 1 for every framework with one occasion."""
    if second is None or second.empty:
        return dict.fromkeys(AD_FRAMEWORKS, 1.0)
    tables = [occasions.moved(first, second, int(n)) for n in sorted(set(second["paths"].dropna()))]
    moved = pd.concat([t for t in tables if len(t)]) if any(len(t) for t in tables) else None
    if moved is None:
        return dict.fromkeys(AD_FRAMEWORKS, 1.0)
    factor = moved["moved"].map(lambda m: max(m, 1 / m))
    overall = float(factor.max())
    by = factor.groupby(moved["framework"]).max()
    return {fw: float(by.get(fw, overall)) for fw in AD_FRAMEWORKS}


def clearly_faster(a: pd.Series, b: pd.Series, margin: float = 1.0) -> bool:
    """Whether a's warm calls beat b's by more than their noise: not both under a millisecond
    (overhead_bound), b's fastest warm call slower than a's median, and b's median more than
    margin times a's."""
    if _overhead(a) and _overhead(b):
        return False
    fastest = b["warm_min_s"] if not formats.missing(b["warm_min_s"]) else b["warm_median_s"]
    median = a["warm_median_s"]
    return bool(fastest > median and b["warm_median_s"] > margin * median)


def _overhead(row: pd.Series) -> bool:
    value = row.get("overhead_bound")
    return False if formats.missing(value) else bool(value)


def pick_group(rows: pd.DataFrame, margin: float = 1.0) -> list[pd.Series]:
    """The fastest correct row and every other that it does not clearly beat (clearly_faster),
    in order of warm median: one row where the pick is clear, more where it is not; []."""
    ok = rows[(rows["status"] == "ok").fillna(False).astype(bool)]
    ok = ok.sort_values("warm_median_s", kind="stable")
    if ok.empty:
        return []
    first = ok.iloc[0]
    return [first] + [r for _, r in ok.iloc[1:].iterrows() if not clearly_faster(first, r, margin)]


def regimes(rows: pd.DataFrame, shape: str) -> list[tuple[str, int]]:
    """The (regime, size) pairs at which a framework's candidates of a shape are picked, in
    order of size, each size once: for the tall Jacobian the question's N (where anything ran
    there), the largest N where an unblocked strategy ran and, beyond it, the largest N where
    anything ran (the blocked ones); for the wide Jacobian the question's n and the largest n;
    for Hessians the largest n."""
    ok = rows[(rows["status"] == "ok").fillna(False).astype(bool)]
    if ok.empty:
        return []
    top = int(ok["size"].max())
    found = []
    if shape == TALL:
        if (ok["size"] == reproduced.QUESTION_N).any():
            found.append((QUESTION_SIZE, reproduced.QUESTION_N))
        blocked = ok["strategy"].map(lambda s: s.startswith(registry.BLOCKED))
        unblocked = ok[~blocked.astype(bool)]
        if len(unblocked):
            found.append((IN_MEMORY, int(unblocked["size"].max())))
        found.append((BEYOND, top))
    elif shape == WIDE:
        if (ok["size"] == QUESTION_INPUTS).any():
            found.append((QUESTION_SIZE, QUESTION_INPUTS))
        found.append((LARGEST, top))
    else:
        found.append((LARGEST, top))
    out, seen = [], set()
    for regime, n in found:
        if n not in seen:
            seen.add(n)
            out.append((regime, n))
    return out


def _named(row: pd.Series) -> str:
    return f"{row['name']} ({formats.time(row['warm_median_s'])})"


def group_phrase(group: list[pd.Series], margin: float = 1.0) -> str:
    """'compiled-pathwise (1.2 ms)' for a clear pick; where it is not clear, the names within
    reach of the fastest and why they are not ranked: 'pathwise-function (14.11 s) or
    blocked-pathwise-function (14.19 s): within 1.01×, less than the 1.65× ratios moved between
    occasions'; '–' for none."""
    if not group:
        return "–"
    if len(group) == 1:
        return _named(group[0])
    first, last = group[0], group[-1]
    shown = [_named(r) for r in group[:MOST_NAMED]]
    more = len(group) - MOST_NAMED
    names = (
        ", ".join(shown[:-1]) + f" or {shown[-1]}"
        if more <= 0
        else (", ".join(shown) + f" and {more} more")
    )
    spread = last["warm_median_s"] / first["warm_median_s"]
    if all(_overhead(r) for r in group):
        why = "all under a millisecond, where per-call overhead decides"
    elif margin > 1 and spread <= margin:
        why = (
            f"within {formats.times(spread, 2)}, less than the {formats.times(margin, 2)} "
            "this framework's ratios moved between occasions"
        )
    else:
        why = f"within {formats.times(spread, 2)}, their warm calls overlapping"
    return f"{names}: {why}"


def regime_picks(
    cands: pd.DataFrame, framework: str, shape: str, margin: float = 1.0
) -> list[tuple[str, int, list[pd.Series]]]:
    """(regime, size, pick_group there) for each of regimes."""
    rows = shape_rows(cands, framework, shape)
    return [(regime, n, pick_group(at_size(rows, n), margin)) for regime, n in regimes(rows, shape)]


def picks_sentence(cands: pd.DataFrame, shape: str, margin_by: dict[str, float]) -> str:
    """The picks of one shape, regime by regime, every framework in each: 'At the question's
    size (N = 10,000): PyTorch compiled-pathwise (1.2 ms); TensorFlow ... .'"""
    by_regime: dict[tuple[str, int], list[str]] = {}
    for fw in AD_FRAMEWORKS:
        for regime, n, group in regime_picks(cands, fw, shape, margin_by.get(fw, 1.0)):
            said = group_phrase(group, margin_by.get(fw, 1.0))
            by_regime.setdefault((regime, n), []).append(f"{FRAMEWORK_NAMES[fw]}, {said}")
    if not by_regime:
        what = {TALL: "tall Jacobian", WIDE: "wide Jacobian", HESSIAN: "Hessian"}[shape]
        return f"No {what} candidate ran correctly in this build."
    parts = []
    order = (QUESTION_SIZE, IN_MEMORY, BEYOND, LARGEST)
    for (regime, n), said in sorted(
        by_regime.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])
    ):
        parts.append(
            f"{regime[0].upper()}{regime[1:]} ({SIZE[shape]} = {n:,}): " + "; ".join(said) + "."
        )
    return " ".join(parts)


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
