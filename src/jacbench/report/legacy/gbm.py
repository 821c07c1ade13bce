"""The GBM comparison (chapter 4): what its prose and tables compute from the rows. The price of
compilation is in chapters.compilation, accuracy and the pathwise check in chapters.accuracy,
the path-blocked strategies in chapters.blocked."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.problems import gbm
from jacbench.report import formats, queries
from jacbench.report.legacy import scaling
from jacbench.strategies import registry

# The question's programs, as the registry names them (one per framework that has one).
QUESTION = "question"
# numpy's closed form: the one strategy that does not contain the simulation (it exponentiates
# S_T alone where the simulation exponentiates every step), so its ratio may be below 1.
CLOSED_FORM = ("numpy", "analytic")
# The question's program's memory slope is fitted from this N up.
SLOPE_FROM = 1000


def whose(framework: str, strategy: str) -> str:
    """A strategy with its framework's name: "PyTorch's compiled-pathwise"."""
    return f"{FRAMEWORK_NAMES[framework]}'s {strategy}"


def named(row: pd.Series | dict | None) -> str:
    """A row's strategy with its framework's name, "JAX's blocked-jvp"; '–' where there is none."""
    return "–" if row is None else whose(row["framework"], row["strategy"])


# --- the question's programs ------------------------------------------------------------------


def log_terminal_spread(paths: int = 100_000) -> dict[str, float]:
    """The standard deviation of log(S_T / S0) from the same float64 normals with W cumulated
    ("gbm") and without, as the question's TensorFlow program does ("tf"); their ratio
    ("ratio") and the square root of the number of steps that predicts it ("sqrt_steps")."""
    case = gbm.make_case(gbm.GBMParams(paths=paths, dtype="float64"))
    p = case.params
    spread_gbm = float(np.log(gbm.terminal_closed_form(case) / p.spot).std())
    spread_tf = float(np.log(gbm.terminal_without_cumsum(case) / p.spot).std())
    return {
        "gbm": spread_gbm,
        "tf": spread_tf,
        "ratio": spread_gbm / spread_tf,
        "sqrt_steps": float(np.sqrt(p.steps)),
    }


def loop_growth(df: pd.DataFrame) -> dict | None:
    """How the question's PyTorch program's peak beyond the inputs grows under glibc, over the
    N from SLOPE_FROM up at which it ran correctly: the least-squares log-log slope over them,
    and at the largest, how many path arrays ((M + 1) x N values) stay
    resident per backward pass (the peak over N path arrays). None with fewer than two N."""
    rows = queries.gbm(df, framework="torch", strategy=QUESTION, status="ok")
    rows = rows[rows["paths"] >= SLOPE_FROM]
    if len(rows) < 2:
        return None
    slope = queries.loglog_slope(rows["paths"], rows["peak_over_inputs"])
    top = rows.iloc[-1]
    n = int(top["paths"])
    array = gbm.GBMParams(paths=n, steps=int(top["steps"]), dtype=top["dtype"]).path_array_bytes
    return {"from": int(rows["paths"].iloc[0]), "to": n, "slope": slope,
            "per_pass": float(top["peak_over_inputs"]) / (n * array)}  # fmt: skip


def loop_growth_sentence(df: pd.DataFrame) -> str:
    """'between N = 1,000 and 3,000, the sizes measured there, its peak beyond the inputs grows
    as N^1.97, as if ...', from loop_growth; says where it cannot be fitted."""
    g = loop_growth(df)
    if g is None or g["slope"] is None:
        return ("the program did not run at two sizes from N = 1,000 up, so how its memory grows "
                "is not fitted here")  # fmt: skip
    slope = g["slope"]
    said = (
        f"between N = {formats.count(g['from'])} and {formats.count(g['to'])}, the sizes "
        f"measured there, its peak beyond the inputs grows as N^{slope:.2f}"
    )
    if slope >= 1.75:
        said += (f", as if each of the N backward passes left {g['per_pass']:.2f} of a path "
                 f"array behind (at N = {formats.count(g['to'])}), where the loop needs one tape "
                 "at a time")  # fmt: skip
    elif slope >= 1.25:
        said += ", faster than the one tape the loop needs (linear in N)"
    else:
        said += ", no faster than the one tape the loop needs"
    return said


# --- cost relative to one simulation ----------------------------------------------------------


def costs(df: pd.DataFrame) -> pd.DataFrame:
    """Each strategy's row at the largest N it ran correctly, in the registry's order (any
    other last), with its memory beyond the inputs over its simulation's ("memory_ratio"; NaN
    where the simulation is missing or held nothing) and the log-log slope of its warm time
    in N over the sizes where per-call overhead is small (scaling.time_slope: "slope", and the
    N it is fitted from, "slope_from"; NaN with fewer than two such sizes)."""
    strategies = [s for fw in FRAMEWORKS for s in registry.by_framework(fw)]
    order = {(s.framework, s.name): i for i, s in enumerate(strategies)}
    rows = []
    for (fw, name), runs in queries.gbm(df, status="ok").groupby(["framework", "strategy"]):
        top = runs.iloc[-1]  # the largest N it ran correctly (rows are sorted by N)
        sim = queries.simulation_of(df, top)  # the simulation in the same execution mode and N
        held = queries.value(sim, "peak_over_inputs")
        slope, start = scaling.time_slope(runs)
        rows.append(
            top.to_dict()
            | {
                "order": order.get((fw, name), len(order)),
                "memory_ratio": top["peak_over_inputs"] / held if held and held > 0 else None,
                "slope": slope,
                "slope_from": start,
            }
        )
    extra = ["memory_ratio", "slope", "slope_from"]
    out = pd.DataFrame(rows, columns=[*df.columns, "order", *extra])
    out[extra] = out[extra].astype(float)
    return out.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)


def costs_tables(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The chapter's two cost tables, each strategy at the largest N it ran (see costs): against
    its own simulation (time with spread, memory, slope) and on one baseline (the framework's
    fastest simulation given the same normals)."""
    rows = costs(df)
    names = {
        "framework": rows["framework"].map(FRAMEWORK_NAMES),
        "strategy": rows["strategy"],
        "largest N run": rows["paths"].map(formats.count),
    }
    memory = map(memory_cell, rows["peak_over_inputs"], rows["memory_ratio"])
    own = pd.DataFrame(
        names
        | {
            "time / simulation [spread]": [ratio_cell(r) for _, r in rows.iterrows()],
            "peak beyond inputs (/ simulation)": list(memory),
            "slope in N [from N]": list(map(scaling.slope_cell, rows["slope"], rows["slope_from"])),
        }
    )
    common = pd.DataFrame(
        names | {"time / fastest simulation": rows["ratio_to_fastest_simulation"].map(times_cell)}
    )
    return own, common


def ratio_cell(row: pd.Series) -> str:
    """'2.6× [2.3–2.8]', whole numbers from 10× up ('2310× [1996–2525]'); '–' unmeasured."""
    big = not formats.missing(row["ratio_median"]) and row["ratio_median"] >= 10
    return formats.ratio_with_spread(row, digits=0 if big else 1)


def times_cell(ratio: float | None) -> str:
    """'2.6×', whole numbers from 10× up ('2310×'); '–' unmeasured."""
    if formats.missing(ratio):
        return "–"
    return formats.times(ratio, digits=0 if ratio >= 10 else 1)


def memory_cell(peak: float, ratio: float | None) -> str:
    """'13.6 MiB (1.5×)': a peak beyond the inputs and its ratio to the simulation's (whole
    numbers from 10× up); the peak alone where there is no ratio."""
    if formats.missing(ratio):
        return formats.size(peak)
    return f"{formats.size(peak)} ({formats.times(ratio, digits=0 if ratio >= 10 else 1)})"


def timed_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """The correct strategy rows timed against their simulation, numpy's closed form left out
    (the one strategy that does not contain the simulation)."""
    ratios = queries.gbm(df, status="ok").dropna(subset=["ratio_median"])
    closed = (ratios["framework"] == CLOSED_FORM[0]) & (ratios["strategy"] == CLOSED_FORM[1])
    return ratios[~closed]


def below_one(df: pd.DataFrame) -> str | None:
    """How many ratios are below 1 for a computation that contains the simulation: 'in these
    results none is', 'in these results one is, at N = 100', 'in these results 2 are, all at
    N ≤ 1,000'; None where none was timed."""
    ratios = timed_ratios(df)
    if not len(ratios):
        return None
    low = ratios[ratios["ratio_median"] < 1]
    if not len(low):
        return "in these results none is"
    at = formats.count(low["paths"].max())
    if len(low) == 1:
        return f"in these results one is, at N = {at}"
    return f"in these results {len(low)} are, all at N ≤ {at}"


def compiled_pairs() -> list[tuple[str, str, str]]:
    """(framework, eager strategy, its compiled variant) for every compiled variant that has
    an eager twin (PyTorch's and TensorFlow's; JAX is jitted throughout), in the registry's
    order."""
    return [
        (fw, eager, comp)
        for fw in FRAMEWORKS
        for comp, eager in registry.compiled_variants(fw)
        if eager
    ]


def largest_timed_n(df: pd.DataFrame) -> int | None:
    """The largest N at which a ratio to the simulation was measured, or None (how far the
    compiled variants reach: compilation.compiled_reach)."""
    ratios = timed_ratios(df)
    return int(ratios["paths"].max()) if len(ratios) else None


def compiled_beside_eager(df: pd.DataFrame) -> list[dict]:
    """Each compiled variant beside its eager twin at the largest N both ran correctly: their
    ratios to their own simulations and the compiled warm time over the eager one. A variant
    that never ran correctly at a size where its twin did is left out."""
    out = []
    for fw, eager, comp in compiled_pairs():
        n = queries.largest_common(df, fw, [eager, comp])
        if n is None:
            continue
        found = queries.gbm(df, framework=fw, paths=n, status="ok")
        e, c = (queries.one(found, strategy=name) for name in (eager, comp))
        out.append(
            {
                "framework": fw,
                "compiled": comp,
                "eager": eager,
                "paths": n,
                "compiled_ratio": queries.ratio(c),
                "eager_ratio": queries.ratio(e),
                "warm_ratio": c["warm_median_s"] / e["warm_median_s"],
            }
        )
    return out


# --- why such a difference --------------------------------------------------------------------


def question_speedup(df: pd.DataFrame, framework: str, paths: int) -> float | None:
    """The question's program's warm time over the framework's fastest strategy's at N, or
    None where either did not run correctly."""
    found = question_against_fastest(df, framework, paths)
    return None if found is None else found["speedup"]


def question_against_fastest(df: pd.DataFrame, framework: str, paths: int) -> dict | None:
    """The question's program against the framework's fastest strategy at N, warm call for warm
    call ("speedup", the question's warm time over the fastest's, and its "name"); where the
    fastest is compiled, its first call ("cold_s") and the fastest eager strategy's speedup
    ("eager_name", "eager_speedup"; None where none ran). None where either did not run."""
    found = queries.gbm(df, framework=framework, paths=paths, status="ok")
    question = queries.one(found, strategy=QUESTION)
    best = queries.best(df, framework, paths)
    if question is None or best is None:
        return None
    warm = float(question["warm_median_s"])
    out = {"speedup": warm / float(best["warm_median_s"]), "name": best["strategy"],
           "cold_s": None, "eager_name": None, "eager_speedup": None}  # fmt: skip
    if registry.get(framework, best["strategy"]).compiled:
        eager = queries.candidates(found)
        eager = eager[[not registry.get(framework, n).compiled for n in eager["strategy"]]]
        fastest = queries.fastest(eager)
        out["cold_s"] = float(best["cold_s"])
        if fastest is not None:
            out["eager_name"] = fastest["strategy"]
            out["eager_speedup"] = warm / float(fastest["warm_median_s"])
    return out


def question_memory_over_pathwise(df: pd.DataFrame, framework: str, paths: int) -> float | None:
    """The question's program's memory beyond the inputs over the framework's pathwise
    gradient's (the answer's) at N, or None where either is missing or the latter held nothing."""
    found = queries.gbm(df, framework=framework, paths=paths, status="ok")
    question = queries.one(found, strategy=QUESTION)
    pathwise = queries.one(found, strategy=registry.answer(framework, "pathwise").name)
    if question is None or pathwise is None or not pathwise["peak_over_inputs"] > 0:
        return None
    return float(question["peak_over_inputs"] / pathwise["peak_over_inputs"])


# --- In short -----------------------------------------------------------------------------------


def in_short(
    paths: int, speedup: float | dict | None, memory_ratio: float | None, growth: str | None = None
) -> str:
    """The chapter's answer at the comparison size: the question's PyTorch program's time over
    PyTorch's fastest strategy's, warm call for warm call (a number, or question_against_fastest,
    which adds the fastest's name and, where it is compiled, its first call and the fastest eager
    strategy), and TensorFlow's program's memory beyond the inputs over its pathwise
    gradient's (question_memory_over_pathwise), None where either is missing; and how the
    loop's time was measured to grow (loop_growth), where it was."""
    found = speedup if isinstance(speedup, dict) else {"speedup": speedup}
    k = found["speedup"]
    name = f" ({found['name']})" if found.get("name") else ""
    if k is None:
        said = f"At N = {paths:,} the question's PyTorch program has no warm time to compare."
    elif k >= 1:
        said = (f"At N = {paths:,} the fastest PyTorch strategy{name} is {formats.fold(k)} "
                "faster than the question's program, warm call for warm call")  # fmt: skip
        if found.get("cold_s") is not None:
            said += f"; its first call, which compiles it, takes {formats.time(found['cold_s'])}"
            if found.get("eager_speedup") is not None:
                said += (f", and the fastest eager strategy ({found['eager_name']}) is "
                         f"{formats.fold(found['eager_speedup'])} faster")  # fmt: skip
        said += "."
    else:
        said = (f"At N = {paths:,} PyTorch's fastest strategy{name} is no faster than the "
                f"question's program ({k:.2f}× its time).")  # fmt: skip
    if memory_ratio is not None and memory_ratio >= 1:
        said += (f" TensorFlow's program needs {formats.fold(memory_ratio)} as much memory beyond "
                 "its inputs as its pathwise gradient.")  # fmt: skip
    elif memory_ratio is not None:
        said += (f" TensorFlow's program needs less memory beyond its inputs than its pathwise "
                 f"gradient ({memory_ratio:.2f}× as much).")  # fmt: skip
    return (
        f"{said} Both are reverse mode, N backward sweeps over the whole tape, N² work: one after "
        f"another (time{f' measured growing {growth}' if growth else ''}) or all at once "
        "(memory grows as N²). Forward mode and the pathwise "
        "gradient, which every framework has, make two passes or one; the figures and the costs "
        "table below measure each strategy against N."
    )


def ratio_range(df: pd.DataFrame, strategies: list[tuple[str, str]]) -> str:
    """The lowest and highest ratio to the simulation of these (framework, strategy) pairs over
    every N at which they were timed: 'between 1.4× and 3.8×'; where none was, that it was not
    measured."""
    rows = queries.gbm(df, status="ok").dropna(subset=["ratio_median"])
    chosen = [(fw, name) in strategies for fw, name in zip(rows["framework"], rows["strategy"],
                                                            strict=True)]  # fmt: skip
    ratios = rows[chosen]["ratio_median"]
    if ratios.empty:
        return "(no ratio measured)"
    return f"between {formats.times(ratios.min())} and {formats.times(ratios.max())}"


def loop_time_growth(
    df: pd.DataFrame, framework: str = "torch", name: str = "functional-loop"
) -> str:
    """How the warm time of a reverse-mode loop grew between the two largest N it ran at, under
    the allocator where it went furthest (the fastest there on a tie): 'as N^1.51 from
    N = 3,000 to 10,000 under jemalloc'; its N² work shows only once each sweep's fixed cost
    is small beside it. Empty where it ran at fewer than two N."""
    rows = queries.where(df, problem="gbm", framework=framework, strategy=name,
                         dtype="float32", status="ok").dropna(subset=["warm_median_s"])  # fmt: skip
    best = None
    for allocator, mine in rows.groupby("allocator"):
        mine = mine.sort_values("paths")
        rank = (mine["paths"].iloc[-1], -mine["warm_median_s"].iloc[-1])
        if len(mine) >= 2 and (best is None or rank > best[0]):
            best = (rank, allocator, mine)
    if best is None:
        return ""
    _, allocator, mine = best
    last = mine.tail(2)
    slope = queries.loglog_slope(last["paths"], last["warm_median_s"])
    n1, n2 = last["paths"]
    return (f"as N^{slope:.2f} from N = {formats.count(n1)} to {formats.count(n2)} "
            f"under {allocator}")  # fmt: skip


def largest_error_anywhere(df: pd.DataFrame) -> pd.Series | None:
    """The correct GBM strategy row with the largest relative error against the closed form at
    any N (float32 under glibc), or None where none has one."""
    rows = queries.gbm(df, status="ok").dropna(subset=["max_rel_error"])
    return None if rows.empty else rows.loc[rows["max_rel_error"].idxmax()]
