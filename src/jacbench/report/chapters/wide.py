"""Wide Jacobians and Hessians (chapter 5): every strategy at the question's n, the loop of
gradients against its vectorized forms, create_graph, the Hessians, the per-path Greeks and the
tall-to-wide crossover, read from the results."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.measure import crossover as tall_to_wide
from jacbench.problems import moments
from jacbench.report import formats, queries
from jacbench.strategies import registry

# The question's solutions as the prose names them: solution 1, a loop of torch.autograd.grad
# (as asked, with create_graph=True; without it, the wide answer), and solution 2, X.repeat and
# one backward pass with the identity as cotangents.
LOOP = "grad-loop"
LOOP_CREATE_GRAPH = "grad-loop-create-graph"
SOLUTION_2 = "batched-backward"
# Up to m * n = 2^14 a vectorized call's arithmetic (forward m n^2, reverse m^2 n multiply-adds
# with the identity basis) stays below a few million multiply-adds: overhead decides.
OVERHEAD_TOTAL = 2**14
MOMENTS = "moments"


# --- one row's numbers, as the chapter's tables and sentences show them ---------------------


def _ok(row: pd.Series | None) -> bool:
    return row is not None and row["status"] == "ok"


def measured(row: pd.Series, reference: pd.Series | None = None) -> dict:
    """A case's columns in this chapter's tables: warm, cold, peak beyond the inputs (the memory
    model's prediction where it did not run), time over the reference's, error."""
    ok = row["status"] == "ok"
    over = row["warm_median_s"] / reference["warm_median_s"] if ok and _ok(reference) else None
    return {
        "warm": formats.outcome(row),
        "cold": formats.time(row["cold_s"]) if ok else "–",
        "peak beyond inputs": formats.size(row["peak_over_inputs"])
        if ok
        else f"{formats.size(row['predicted_peak'])} (model)",
        "time / closed form": formats.times(over),
        "max rel. error": formats.error(row["max_rel_error"]) if ok else "–",
    }


def cold(row: pd.Series | None) -> str:
    """A case's cold call, '154.6 ms'; NOT_MEASURED where it did not run."""
    return formats.time(row["cold_s"]) if _ok(row) else formats.NOT_MEASURED


def peak(row: pd.Series | None) -> str:
    """A case's peak memory beyond its inputs, '18.4 MiB'; NOT_MEASURED where it did not run."""
    return formats.size(row["peak_over_inputs"]) if _ok(row) else formats.NOT_MEASURED


def warm_ratio(slow: pd.Series | None, fast: pd.Series | None) -> str:
    """The first row's warm time over the second's, '3.4×'; NOT_MEASURED where either row is
    missing or did not finish."""
    if not (_ok(slow) and _ok(fast)):
        return formats.NOT_MEASURED
    if formats.missing(slow["warm_median_s"]) or formats.missing(fast["warm_median_s"]):
        return formats.NOT_MEASURED
    return formats.times(slow["warm_median_s"] / fast["warm_median_s"])


def dense_hessian_size(n: int, outputs: int = 1) -> str:
    """The float32 dense Hessians of that many outputs at n inputs, in decimal GB: '40 GB'."""
    return f"{moments.dense_hessian_bytes(n, 'float32', outputs=outputs) / 1e9:,.0f} GB"


# --- the Jacobian at the question's n -------------------------------------------------------


def listed() -> list[tuple[str, str]]:
    """Every (framework, strategy) of the moments problem, in the registry's order: PyTorch,
    TensorFlow, JAX, then numpy's closed form."""
    return [(s.framework, s.name) for fw in FRAMEWORKS for s in registry.by_framework(fw, MOMENTS)]


def strategies_at(df: pd.DataFrame, n: int) -> pd.DataFrame:
    """The rows of every listed strategy at n in the listed order, each with its AD mode."""
    rows = queries.wide(df, inputs=n, target="strategy")
    place = {key: i for i, key in enumerate(listed())}
    keys = zip(rows["framework"], rows["strategy"], strict=True)
    rows = rows.assign(place=[place.get(k) for k in keys]).dropna(subset=["place"])
    rows = rows.sort_values("place", kind="stable").drop(columns="place")
    keys = zip(rows["framework"], rows["strategy"], strict=True)
    return rows.assign(mode=[registry.get(fw, name).mode for fw, name in keys])


def fastest_by_framework(df: pd.DataFrame, n: int) -> dict[str, pd.Series | None]:
    """Each AD framework's fastest correct strategy at n (warm median; of equals, the first by
    name), None where none ran."""
    rows = queries.wide(df, inputs=n, target="strategy")
    return {fw: queries.fastest(queries.where(rows, framework=fw)) for fw in AD_FRAMEWORKS}


def vectorized_forms(framework: str = "torch") -> list[str]:
    """The framework's vectorized reverse-mode strategies of the moments problem, in the
    registry's order: functional-vectorized, batched-backward and jacrev in PyTorch."""
    return [
        s.name
        for s in registry.by_framework(framework, MOMENTS)
        if s.mode == "reverse" and s.batching == "vectorized"
    ]


def over_loop(df: pd.DataFrame, n: int, framework: str = "torch", loop: str = LOOP) -> list[float]:
    """Each vectorized form's warm time over the loop of gradients' at n, for the forms that ran;
    empty where the loop did not."""
    rows = queries.wide(df, inputs=n, framework=framework, target="strategy")
    base = queries.one(rows, strategy=loop)
    if not _ok(base):
        return []
    vectorized = [queries.one(rows, strategy=name) for name in vectorized_forms(framework)]
    return [r["warm_median_s"] / base["warm_median_s"] for r in vectorized if _ok(r)]


def ratio_range(ratios: list[float]) -> str:
    """The smallest and largest ratio, '1.3× to 3.6×'; NOT_MEASURED where there is none."""
    if not ratios:
        return formats.NOT_MEASURED
    return f"{formats.times(min(ratios))} to {formats.times(max(ratios))}"


class DefaultCall(NamedTuple):
    """A framework's default Jacobian call at n, the loop it vectorizes and its compiled
    variant (each None where the row is missing)."""

    default: pd.Series | None
    loop: pd.Series | None
    compiled: pd.Series | None


def default_call(df: pd.DataFrame, n: int, framework: str = "tensorflow") -> DefaultCall:
    """The rows of the framework's default call (registry.default), the loop it vectorizes and
    its compiled variant at n: tape-jacobian-pfor, -loop and -function in TensorFlow."""
    record = registry.default(framework)
    compiled = [s.name for s in registry.by_framework(framework, MOMENTS)
                if s.compiled and s.variant_of == record.name]  # fmt: skip
    rows = queries.wide(df, inputs=n, framework=framework, target="strategy")

    def row(name: str | None) -> pd.Series | None:
        return queries.one(rows, strategy=name) if name else None

    return DefaultCall(row(record.name), row(record.vectorizes), row(next(iter(compiled), None)))


def compiled_phrase(compiled: pd.Series | None, eager: pd.Series | None) -> str:
    """The compiled variant against the eager call: '2.6 ms warm after 154.6 ms cold, 35.8×
    faster than the eager default'; NOT_MEASURED where either did not run."""
    speedup = warm_ratio(eager, compiled)
    if speedup == formats.NOT_MEASURED:
        return formats.NOT_MEASURED
    return (
        f"{formats.outcome(compiled)} warm after {formats.time(compiled['cold_s'])} cold, "
        f"{speedup} faster than the eager default"
    )


def reverse_growth(df: pd.DataFrame) -> str:
    """How the reverse-mode strategies of the wide Jacobian grow between the two largest n at
    which each ran correctly: 'they grow as n^1.68 to n^1.81 from n = 1,000,000 to 10,000,000'
    (the range of their log-log slopes there); says so where none ran at two sizes."""
    slopes, spans = [], set()
    for fw in AD_FRAMEWORKS:
        for s in registry.by_framework(fw, MOMENTS):
            if s.mode != "reverse":
                continue
            ok = queries.wide(df, framework=fw, strategy=s.name, target="strategy", status="ok")
            sizes = sorted(set(ok["inputs"].dropna()))
            if len(sizes) < 2:
                continue
            a, b = sizes[-2], sizes[-1]
            ta = queries.one(ok, inputs=a)["warm_median_s"]
            tb = queries.one(ok, inputs=b)["warm_median_s"]
            slopes.append(float(np.log(tb / ta) / np.log(b / a)))
            spans.add((int(a), int(b)))
    if not slopes:
        return "each ran at one n only in this build, so their growth is not fitted"
    lo, hi = min(slopes), max(slopes)
    growth = (f"they grow as n^{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}"
              else f"they grow as n^{lo:.2f} to n^{hi:.2f}")  # fmt: skip
    if len(spans) == 1:
        ((a, b),) = spans
        return f"{growth} from n = {a:,} to {b:,}"
    return f"{growth} between the two largest n each ran"


def create_graph_costs(df: pd.DataFrame, framework: str = "torch") -> pd.DataFrame:
    """The loop of gradients with create_graph=True over the same loop without it, at every n
    both ran correctly: warm times, peaks beyond the inputs and the two ratios."""
    plain = queries.wide(df, framework=framework, strategy=LOOP, status="ok")
    graph = queries.wide(df, framework=framework, strategy=LOOP_CREATE_GRAPH, status="ok")
    rows = []
    for m in sorted(set(plain["inputs"]) & set(graph["inputs"])):
        p, g = queries.one(plain, inputs=m), queries.one(graph, inputs=m)
        rows.append(
            {
                "inputs": int(m),
                "plain_s": p["warm_median_s"],
                "graph_s": g["warm_median_s"],
                "plain_peak": p["peak_over_inputs"],
                "graph_peak": g["peak_over_inputs"],
            }
        )
    out = pd.DataFrame(rows, columns=["inputs", "plain_s", "graph_s", "plain_peak", "graph_peak"])
    out[out.columns[1:]] = out[out.columns[1:]].astype(float)
    out["time_ratio"] = out["graph_s"] / out["plain_s"]
    out["memory_ratio"] = out["graph_peak"] / out["plain_peak"]
    return out


# A cost within this factor of the plain loop's, in time and in memory, is "almost nothing".
ALMOST_NOTHING = 1.15


def create_graph_sentence(costs: pd.DataFrame, n: int) -> str:
    """What create_graph=True costs the loop of gradients at the question's n (or the nearest n
    both ran), and at the other sizes: 'almost nothing' only where both ratios are within
    ALMOST_NOTHING."""
    if costs.empty:
        return "The loop with create_graph=True was not measured beside the plain loop."
    at = costs.iloc[(costs["inputs"] - n).abs().argsort(kind="stable")].iloc[0]

    def cost(r) -> str:
        return (
            f"{formats.time(r['graph_s'])} against {formats.time(r['plain_s'])} "
            f"({formats.times(r['time_ratio'], 2)}), peak beyond the inputs "
            f"{formats.size(r['graph_peak'])} against {formats.size(r['plain_peak'])} "
            f"({formats.times(r['memory_ratio'], 2)})"
        )

    def cheap(r) -> bool:
        return r["time_ratio"] <= ALMOST_NOTHING and r["memory_ratio"] <= ALMOST_NOTHING

    said = f"At n = {int(at['inputs']):,} the loop with it takes {cost(at)}"
    if cheap(at) and at["time_ratio"] < 1 / ALMOST_NOTHING:
        said += (": it ran faster, which recording more cannot explain: the difference is noise "
                 "between the two loops' separately timed processes, and it costs nothing "
                 "measurable there.")  # fmt: skip
    else:
        said += ": there it costs almost nothing." if cheap(at) else ": unneeded, and not free."
    others = costs[costs["inputs"] != at["inputs"]]
    k = others["time_ratio"]
    if len(others) == 1:
        said += (
            f" At n = {int(others['inputs'].iloc[0]):,} it takes "
            f"{formats.times(k.iloc[0], 2)} the plain loop's time."
        )
    elif len(others):
        said += (
            f" Over the other sizes measured (n = {int(others['inputs'].min()):,} to "
            f"{int(others['inputs'].max()):,}) it takes {formats.times(k.min(), 2)} to "
            f"{formats.times(k.max(), 2)} the plain loop's time."
        )
    return said


# --- Hessians and the per-path Greeks -------------------------------------------------------


def largest_dense_n(second: pd.DataFrame) -> int | None:
    """The largest n at which a dense Hessian ran correctly, or None."""
    ok = queries.where(second, kind="dense", status="ok")
    return int(ok["inputs"].max()) if len(ok) else None


def skipped_dense(second: pd.DataFrame, n: int) -> str:
    """How many second-order cases at n were skipped on the memory model's prediction: '4 dense
    methods', or 'no dense method (none was tried)'."""
    skipped = queries.where(second, inputs=n, status="skipped-predicted")
    return f"{len(skipped)} dense methods" if len(skipped) else "no dense method (none was tried)"


def fastest_hvp(second: pd.DataFrame, n: int) -> pd.Series | None:
    """The fastest correct Hessian-vector product at n, or None."""
    return queries.fastest(queries.where(second, inputs=n, kind="hvp"))


# --- the tall-to-wide crossover -------------------------------------------------------------


def crossover_rows(path: str | Path) -> list[dict]:
    """The crossover rows of the largest total m * n in a crossover file; [] where there is no
    file."""
    path = Path(path)
    return tall_to_wide.largest_total(tall_to_wide.read(path)) if path.exists() else []


def _of(rows: list[dict], framework: str | None) -> list[dict]:
    return [r for r in rows if framework is None or r["framework"] == framework]


def aspects(shapes: list[dict]) -> dict[str, float | None]:
    """Per AD framework, the aspect m / n from which reverse mode beats forward mode at every
    wider shape (measure.crossover.crossover); None where there is none or no row."""
    return {fw: tall_to_wide.crossover(_of(shapes, fw)) for fw in AD_FRAMEWORKS}


def aspect(a: float | None) -> str:
    """An aspect as text: 'm / n = 4', 'm / n = 1/16', or 'no shape (forward mode stays as fast
    or faster)' for None."""
    if a is None:
        return "no shape (forward mode stays as fast or faster)"
    return f"m / n = {a:g}" if a >= 1 else f"m / n = 1/{1 / a:g}"


def crossover_aspect(shapes: list[dict], framework: str) -> str:
    """Where reverse mode starts to win for good in a framework, 'm / n = 1/4'; NOT_MEASURED
    where the framework has no crossover row."""
    rows = _of(shapes, framework)
    return aspect(tall_to_wide.crossover(rows)) if rows else formats.NOT_MEASURED


def crossover_sides(rows: list[dict], framework: str | None = None) -> str:
    """On which side of m = n each mode wins, counted over the shapes (of a framework, where
    given) where both modes ran: 'reverse mode is faster at 4 of the 4 wide shapes (m < n),
    forward mode at 3 of the 4 tall ones (m > n)'; NOT_MEASURED where no shape has both."""
    by_shape: dict[tuple[int, int], dict[str, float]] = {}
    for r in _of(rows, framework):
        if r.get("status", "ok") == "ok":
            by_shape.setdefault((r["outputs"], r["inputs"]), {})[r["mode"]] = r["warm_median_s"]
    both = {s: t for s, t in by_shape.items() if "forward" in t and "reverse" in t}
    if not both:
        return formats.NOT_MEASURED
    wide = [t["reverse"] < t["forward"] for (m, n), t in both.items() if m < n]
    tall = [t["forward"] < t["reverse"] for (m, n), t in both.items() if m > n]
    return (
        f"reverse mode is faster at {sum(wide)} of the {len(wide)} wide shapes (m < n), "
        f"forward mode at {sum(tall)} of the {len(tall)} tall ones (m > n)"
    )


def shapes_total(shapes: list[dict]) -> int | None:
    """The total m * n every crossover shape holds; None where there is no shape or several
    totals."""
    totals = {r["outputs"] * r["inputs"] for r in shapes}
    return totals.pop() if len(totals) == 1 else None


def aspect_range(shapes: list[dict]) -> str:
    """The aspects measured, tall to wide: 'from m / n = 64 to m / n = 1/64'; NOT_MEASURED
    where no shape ran."""
    measured_aspects = sorted({r["outputs"] / r["inputs"] for r in shapes if r["status"] == "ok"})
    if not measured_aspects:
        return formats.NOT_MEASURED
    return f"from {aspect(measured_aspects[-1])} to {aspect(measured_aspects[0])}"


def square_times(shapes: list[dict]) -> str:
    """The square shape's time in its faster mode, per framework: '691 µs in PyTorch, 605 µs in
    JAX'; NOT_MEASURED where no square shape ran."""
    square: dict[str, float] = {}
    for r in shapes:
        if r["status"] == "ok" and r["outputs"] == r["inputs"]:
            fw = r["framework"]
            square[fw] = min(square.get(fw, float("inf")), r["warm_median_s"])
    times = [f"{formats.time(square[fw])} in {FRAMEWORK_NAMES[fw]}"
             for fw in AD_FRAMEWORKS if fw in square]  # fmt: skip
    return ", ".join(times) or formats.NOT_MEASURED


def regime(total: int | None) -> str:
    """Whether per-call overhead or arithmetic decides at a total m * n: 'small: ...' up to
    OVERHEAD_TOTAL, 'large enough that ...' above; NOT_MEASURED for None."""
    if total is None:
        return formats.NOT_MEASURED
    if total <= OVERHEAD_TOTAL:
        return (
            "small: at this size per-call overhead, not arithmetic, decides which mode is "
            "faster, so the crossover below says little about the rule"
        )
    return "large enough that the arithmetic of the slower mode dominates its per-call overhead"
