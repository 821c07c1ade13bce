"""Wide Jacobians and Hessians (chapter 5): every strategy at the question's n, the loop of
gradients against its vectorized forms, create_graph, the Hessians, the per-path Greeks and the
tall-to-wide crossover (its functions in chapters.tall_wide, reached here), read from the
results."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.problems import moments
from jacbench.report import formats, queries
from jacbench.report.chapters import wide_growth
from jacbench.report.chapters.picks import clearly_faster
from jacbench.report.chapters.tall_wide import (  # noqa: F401 (the chapter reads them here)
    aspect,
    aspect_range,
    aspects,
    crossover_aspect,
    crossover_rows,
    crossover_sides,
    regime_measured,
    shapes_total,
    sides,
    slower_against_floor,
    square_times,
)
from jacbench.strategies import registry

# The question's solutions as the prose names them: solution 1, a loop of torch.autograd.grad
# (as asked, with create_graph=True; without it, the wide answer), and solution 2, X.repeat and
# one backward pass with the identity as cotangents.
LOOP = "grad-loop"
LOOP_CREATE_GRAPH = "grad-loop-create-graph"
SOLUTION_2 = "batched-backward"
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
        # Two significant figures below one: '0.046×', not '0.0×'.
        "time / closed form": f"{over:.2g}×"
        if over is not None and over < 1
        else formats.times(over),
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
    """Each AD framework's fastest correct strategy at n that a recommendation may pick (warm
    median; of equals, the first by name; not the loop that records a graph it never uses),
    None where none ran."""
    rows = queries.candidates(queries.wide(df, inputs=n, target="strategy"))
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
    which each ran correctly, against their arithmetic, linear in n: 'they grow as n^0.88 to
    n^1.70 from n = 1,000,000 to 10,000,000; where ... ' (the range of their log-log slopes
    there, read by wide_growth.against_arithmetic); says so where none ran at two sizes."""
    reverse = {(s.framework, s.name) for fw in AD_FRAMEWORKS
               for s in registry.by_framework(fw, MOMENTS) if s.mode == "reverse"}  # fmt: skip
    rows = queries.wide(df, target="strategy", status="ok")
    rows = rows[[k in reverse for k in zip(rows["framework"], rows["strategy"], strict=True)]]
    slopes = wide_growth.span_slopes(rows, last_only=True)
    if slopes.empty:
        return "each ran at one n only in this build, so their growth is not fitted"
    lo, hi = slopes["slope"].min(), slopes["slope"].max()
    growth = (f"they grow as n^{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}"
              else f"they grow as n^{lo:.2f} to n^{hi:.2f}")  # fmt: skip
    spans = set(zip(slopes["lo"], slopes["hi"], strict=True))
    if len(spans) == 1:
        ((a, b),) = spans
        growth += f" from n = {a:,} to {b:,}"
    else:
        growth += " between the two largest n each ran"
    reading = wide_growth.against_arithmetic(slopes, 1)
    return f"{growth}; {reading}" if reading else growth


def create_graph_costs(
    df: pd.DataFrame, framework: str = "torch", margin: float = 1.0
) -> pd.DataFrame:
    """The loop of gradients with create_graph=True over the same loop without it, at every n
    both ran correctly: warm times, peaks beyond the inputs, the two ratios and whether it is
    slower or faster by more than the noise (picks.clearly_faster with the margin)."""
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
                "slower": clearly_faster(p, g, margin),
                "faster": clearly_faster(g, p, margin),
            }
        )
    columns = ["inputs", "plain_s", "graph_s", "plain_peak", "graph_peak", "slower", "faster"]
    out = pd.DataFrame(rows, columns=columns)
    out[columns[1:5]] = out[columns[1:5]].astype(float)
    out[columns[5:]] = out[columns[5:]].astype(bool)
    out["time_ratio"] = out["graph_s"] / out["plain_s"]
    out["memory_ratio"] = out["graph_peak"] / out["plain_peak"]
    return out


# A cost within this factor of the plain loop's, in time and in memory, is "almost nothing".
ALMOST_NOTHING = 1.15


def create_graph_sentence(costs: pd.DataFrame, n: int, margin: float = 1.0) -> str:
    """What create_graph=True costs the loop of gradients at the question's n (or the nearest n
    both ran) and at the other sizes: time only where it is slower by more than the noise
    (create_graph_costs, with the margin named here), memory where its peak is more than
    ALMOST_NOTHING times the plain loop's."""
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

    slower = costs["slower"]
    dearer = costs["memory_ratio"] > ALMOST_NOTHING
    said = f"At n = {int(at['inputs']):,} the loop with it takes {cost(at)}: "
    if at["slower"]:
        said += f"slower by more than the noise of the measurement ({formats.times(margin, 2)})"
    elif at["faster"]:
        said += ("faster, which recording more cannot explain: the difference is noise between "
                 "the two loops' separately timed processes")  # fmt: skip
    else:
        said += f"the time differs by less than the noise ({formats.times(margin, 2)})"
    said += (", and what it costs there is memory." if at["memory_ratio"] > ALMOST_NOTHING
             else ", and its memory is within a factor of "
             f"{formats.times(ALMOST_NOTHING, 2)} there.")  # fmt: skip
    others = costs[costs["inputs"] != at["inputs"]]
    if len(others):
        lo, hi = int(others["inputs"].min()), int(others["inputs"].max())
        sizes = f"n = {lo:,}" if lo == hi else f"n = {lo:,} to {hi:,}"

        def at_sizes(mask, what: str) -> str:
            picked = others[mask.loc[others.index]]["inputs"]
            if picked.empty:
                return f"never {what}"
            return f"{what} at n = " + formats.listing([f"{int(m):,}" for m in picked])

        memory = f"takes more than {formats.times(ALMOST_NOTHING, 2)} its memory"
        said += (f" Over the other sizes measured ({sizes}) it takes "
                 f"{formats.span(others['time_ratio'], lambda x: formats.times(x, 2))} the plain "
                 f"loop's time; it is {at_sizes(slower, 'slower by more than the noise')}, and "
                 f"{at_sizes(dearer, memory)}.")  # fmt: skip
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


def _gradients(x: float) -> str:
    return f"{x:.2g}" if x < 10 else f"{x:,.0f}"


def hvp_in_gradients(df: pd.DataFrame, n: int) -> dict[str, float]:
    """Per AD framework, its fastest Hessian-vector products at n counted in gradients: the warm
    time of the three products (one per output) over that of the framework's fastest correct
    reverse-mode Jacobian there (three gradients, one per output); frameworks without both are
    left out."""
    second = queries.second_order(df, MOMENTS)
    jacobians = queries.candidates(queries.wide(df, inputs=n, target="strategy"))
    keys = zip(jacobians["framework"], jacobians["strategy"], strict=True)
    reverse = [registry.get(fw, name).mode == "reverse" for fw, name in keys]
    jacobians = jacobians[reverse] if len(jacobians) else jacobians
    found = {}
    for fw in AD_FRAMEWORKS:
        hvp = queries.fastest(queries.where(second, inputs=n, kind="hvp", framework=fw))
        jac = queries.fastest(queries.where(jacobians, framework=fw))
        if _ok(hvp) and _ok(jac):
            found[fw] = float(hvp["warm_median_s"] / jac["warm_median_s"])
    return found


def hvp_cost(df: pd.DataFrame, n: int) -> str:
    """'the time of 8.7 gradients in PyTorch, 55 in TensorFlow and 0.39 in JAX' per product at n
    (hvp_in_gradients), with each one's range over every n measured; NOT_MEASURED where no
    framework has both."""
    at = hvp_in_gradients(df, n)
    if not at:
        return formats.NOT_MEASURED
    named = [f"{_gradients(g)}{' gradients' if i == 0 else ''} in {FRAMEWORK_NAMES[fw]}"
             for i, (fw, g) in enumerate(at.items())]  # fmt: skip
    said = f"the time of {formats.listing(named)}"
    sizes = sorted(set(queries.second_order(df, MOMENTS, kind="hvp", status="ok")["inputs"]))
    every = [hvp_in_gradients(df, int(m)) for m in sizes]
    ranges = [f"{formats.span([e[fw] for e in every if fw in e], _gradients)} in "
              f"{FRAMEWORK_NAMES[fw]}" for fw in at]  # fmt: skip
    if len(sizes) > 1:
        said += f" (over n = {int(sizes[0]):,} to {int(sizes[-1]):,}: {formats.listing(ranges)})"
    return said


# --- In short -----------------------------------------------------------------------------------


def in_short(
    n: int,
    best: dict[str, tuple[str, float] | None],
    dense_bytes: str,
    hvp: tuple[str, float] | None,
    counted: tuple[int, int, int, int] | None,
) -> str:
    """The chapter's answer: each framework's fastest AD strategy at the question's n (best:
    {framework: (name, warm seconds)} or None), a dense Hessian's size there (dense_bytes, as
    dense_hessian_size writes it), the fastest Hessian-vector product ((name, seconds) or None)
    and the crossover's sides counted over every framework (sides' four counts, or None)."""
    found = [f"{formats.time(t)} in {FRAMEWORK_NAMES[fw]} ({name})"
             for fw, found in best.items() if found for name, t in [found]]  # fmt: skip
    said = "Three outputs and many inputs make a wide Jacobian, the shape reverse mode is for"
    if found:
        said += f": at the question's n = {n:,} the fastest takes {formats.listing(found)}."
    else:
        said += f"; no strategy ran correctly at the question's n = {n:,}."
    said += f" A dense Hessian would hold {dense_bytes} there"
    if hvp:
        said += f"; a Hessian-vector product never forms it ({hvp[0]}: {formats.time(hvp[1])})."
    else:
        said += "."
    if counted is not None:
        wide, wide_n, tall, tall_n = counted
        if wide == wide_n and tall == tall_n:
            said += (f" Across shapes of one size, counted in each framework, reverse mode won "
                     f"all {wide_n} wide ones and forward mode all {tall_n} tall ones: pick the "
                     "smaller side.")  # fmt: skip
        else:
            said += (f" Across shapes of one size, counted in each framework, reverse mode won "
                     f"{wide} of {wide_n} wide ones "
                     f"and forward mode {tall} of {tall_n} tall ones, so the smaller side is a "
                     "rule of thumb that per-call overhead moves.")  # fmt: skip
    return said
