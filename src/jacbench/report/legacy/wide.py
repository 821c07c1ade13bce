"""Wide Jacobians and Hessians (chapter 5): every strategy at the question's n, the loop of
gradients against its vectorized forms, create_graph, the Hessians, the per-path Greeks and the
tall-to-wide crossover (its functions in chapters.tall_wide, reached here; create_graph's and a
Hessian-vector product's costs in chapters.wide_costs, growth in chapters.wide_growth), read
from the results."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.problems import moments
from jacbench.report import formats, queries
from jacbench.report.legacy.tall_wide import (  # noqa: F401 (the chapter reads them here)
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
        # Two significant figures below one: '0.046×', not '0.0×'; '1.0×', '0.20×'.
        "time / closed form": f"{over:#.2g}×"
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


# --- In short -----------------------------------------------------------------------------------


def in_short(
    n: int,
    best: dict[str, tuple[str, float] | None],
    dense_bytes: str,
    hvp: tuple[str, float] | None,
    counted: dict[str, tuple[int, int, int, int] | None] | None,
) -> str:
    """The chapter's answer: each framework's fastest AD strategy at the question's n (best:
    {framework: (name, warm seconds)} or None), a dense Hessian's size there (dense_bytes, as
    dense_hessian_size writes it), the fastest Hessian-vector product ((name, seconds) or None)
    and the crossover's sides counted in each framework ({framework: sides' four counts or
    None}, or None)."""
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
    counted = {fw: c for fw, c in (counted or {}).items() if c is not None}
    counts = list(counted.values())
    if counts:
        wide, wide_n, tall, tall_n = (sum(c[k] for c in counts) for k in range(4))
        one = counts[0]
        if all(c == one for c in counts) and one[0] == one[1] and one[2] == one[3]:
            each = (
                "in each framework"
                if len(counts) > 1
                else f"in {FRAMEWORK_NAMES[next(iter(counted))]}"
            )
            said += (f" Across shapes of one size, {each} reverse mode won all {one[1]} wide "
                     f"shapes and forward mode all {one[3]} tall ones: pick the smaller "
                     "side.")  # fmt: skip
        else:
            said += (f" Across shapes of one size, counted framework by framework, reverse mode "
                     f"won {wide} of {wide_n} wide shapes and forward mode {tall} of {tall_n} "
                     "tall ones, so the smaller side is a rule of thumb that per-call overhead "
                     "moves.")  # fmt: skip
    return said
