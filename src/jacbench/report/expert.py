"""What a specialist reads into the results: comparisons the chapters state in words.

Each function takes the DataFrame that ``data.load`` returns and leaves it unchanged; where a
case was not measured it returns None, an empty frame or the NOT_MEASURED wording rather than fail.
"""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats, queries

# --- loop against vectorized reverse mode (chapter 3) -------------------------------------

# The PyTorch loops' memory model (one tape) was fitted, and is checked by the test suite,
# under glibc-mmap: glibc's default allocator keeps their freed per-row buffers resident by an
# amount that jumps with N. Every other strategy's model was fitted under glibc's default.
MODEL_FITTED_UNDER_MMAP = frozenset(
    {("torch", "question"), ("torch", "functional-loop"), ("torch", "grad-loop")}
)


def _absent(x) -> bool:
    return x is None or bool(pd.isna(x))


def model_allocator(framework: str, strategy: str) -> str:
    """The allocator a strategy's memory-model coefficients were fitted under."""
    return "glibc-mmap" if (framework, strategy) in MODEL_FITTED_UNDER_MMAP else "glibc"


def loop_against_vectorized(df: pd.DataFrame, pairs: list[tuple[str, str, str]]) -> pd.DataFrame:
    """One row per (framework, loop, vectorized) pair and N at which both ran correctly: their
    warm times and peaks beyond the inputs, and the vectorized over the loop for each."""
    rows = []
    for fw, loop, vec in pairs:
        a = queries.gbm(df, framework=fw, strategy=loop, status="ok").set_index("paths")
        b = queries.gbm(df, framework=fw, strategy=vec, status="ok").set_index("paths")
        for n in sorted(set(a.index) & set(b.index)):
            ra, rb = a.loc[n], b.loc[n]
            ra = ra.iloc[0] if isinstance(ra, pd.DataFrame) else ra
            rb = rb.iloc[0] if isinstance(rb, pd.DataFrame) else rb
            rows.append({
                "framework": fw, "loop": loop, "vectorized": vec, "paths": int(n),
                "loop_s": float(ra["warm_median_s"]), "vectorized_s": float(rb["warm_median_s"]),
                "loop_peak": ra["peak_over_inputs"], "vectorized_peak": rb["peak_over_inputs"],
            })  # fmt: skip
    out = pd.DataFrame(rows, columns=["framework", "loop", "vectorized", "paths", "loop_s",
                                      "vectorized_s", "loop_peak", "vectorized_peak"])  # fmt: skip
    out["time_ratio"] = out["vectorized_s"] / out["loop_s"]
    out["memory_ratio"] = out["vectorized_peak"] / out["loop_peak"]
    return out


def which_is_faster(name_a: str, time_a, name_b: str, time_b) -> str:
    """'grad-loop, 3.4× faster than jacrev (253 ms against 856 ms)': the faster of two warm
    times named first; NOT_MEASURED where either is missing."""
    if _absent(time_a) or _absent(time_b) or min(time_a, time_b) <= 0:
        return formats.NOT_MEASURED
    if time_b < time_a:
        name_a, time_a, name_b, time_b = name_b, time_b, name_a, time_a
    return (
        f"{name_a}, {formats.times(time_b / time_a)} faster than {name_b} "
        f"({formats.time(time_a)} against {formats.time(time_b)})"
    )


def against_expected(measured, expected) -> str:
    """A measured ratio as a multiple of the expected one: '0.41× N/2'-style text without the
    unit, e.g. '0.41×'; NOT_MEASURED where either is missing."""
    if _absent(measured) or _absent(expected) or expected <= 0:
        return formats.NOT_MEASURED
    return formats.times(measured / expected, digits=2)


# --- the wide chapter: warm ratios, the tall-to-wide crossover's two sides (chapter 5) ---------


def warm_ratio(slow: pd.Series | None, fast: pd.Series | None) -> str:
    """The first row's warm time over the second's, '3.4×'; NOT_MEASURED where either row is
    missing or did not finish."""
    if slow is None or fast is None or slow["status"] != "ok" or fast["status"] != "ok":
        return formats.NOT_MEASURED
    if _absent(slow["warm_median_s"]) or _absent(fast["warm_median_s"]):
        return formats.NOT_MEASURED
    return formats.times(slow["warm_median_s"] / fast["warm_median_s"])


def crossover_sides(rows: list[dict]) -> str:
    """On which side of m = n each mode wins, counted over the shapes where both modes ran:
    'reverse mode is faster at 4 of the 4 wide shapes (m < n), forward mode at 3 of the 4 tall
    ones (m > n)'; NOT_MEASURED where no shape has both."""
    by_shape: dict[tuple[int, int], dict[str, float]] = {}
    for r in rows:
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
