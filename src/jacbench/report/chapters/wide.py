"""Chapter 5, the second question: wide Jacobians, Hessians, per-sample Jacobians, Greeks
and the tall-to-wide crossover.
"""

from __future__ import annotations

from jacbench.constants import AD_FRAMEWORKS
from jacbench.report import figures
from jacbench.report.chapters.common import NOT_MEASURED, _kind, _short, _wide
from jacbench.report.figures import FRAMEWORK_NAMES
from jacbench.report.publish import Section, markdown_table
from jacbench.report.results import Results, fmt_bytes, fmt_time, outcome, peak_over_inputs
from jacbench.strategies import registry

JACOBIAN_ORDER = {
    "torch": ["grad-loop", "grad-loop-create-graph", "batched-backward", "functional-loop",
              "functional-vectorized", "jacrev", "jacfwd"],
    "tensorflow": ["tape-jacobian-pfor", "tape-jacobian-loop", "batch-jacobian"],
    "jax": ["jacrev", "jacfwd"],
    "numpy": ["analytic"],
}  # fmt: skip


def _error(row: dict) -> str:
    return f"{row['max_rel_error']:.1e}" if row.get("max_rel_error") is not None else "–"


def _cells(row: dict, reference: dict | None = None) -> list[str]:
    """Outcome, cold time, peak beyond inputs, time against the reference, error."""
    ok = row["status"] == "ok"
    ratio = "–"
    if ok and reference and reference["status"] == "ok" and reference["warm_median_s"]:
        ratio = f"{row['warm_median_s'] / reference['warm_median_s']:.1f}×"
    return [
        outcome(row),
        fmt_time(row["cold_s"]) if ok else "–",
        fmt_bytes(peak_over_inputs(row)) if ok else fmt_bytes(row["predicted_peak"]) + " (model)",
        ratio,
        _error(row) if ok else "–",
    ]


def wide(res: Results, crossover_rows: list[dict], question_inputs: int = 100_000) -> Section:
    """The second question: wide Jacobians, Hessians, per-sample Jacobians, Greeks, crossover."""
    from jacbench.measure import crossover
    from jacbench.problems import moments

    sec = Section()
    n = question_inputs
    sec.value("w_n", f"{n:,}")
    dense_one = moments.dense_hessian_bytes(n, "float32", outputs=1)
    sec.value("w_dense_bytes", f"{dense_one / 1e9:,.0f} GB")
    sec.value("w_dense_bytes_all", f"{3 * dense_one / 1e9:,.0f} GB")

    # First-order: every strategy at the question's n, against the closed form's time.
    analytic = next(iter(_wide(res, framework="numpy", strategy="analytic", inputs=n)), None)
    sec.value("w_analytic", outcome(analytic) if analytic else NOT_MEASURED)
    table = []
    for fw, names in JACOBIAN_ORDER.items():
        for name in names:
            for r in _wide(res, framework=fw, strategy=name, inputs=n):
                mode = registry.get(fw, name).mode
                table.append([FRAMEWORK_NAMES[fw], f"`{name}`", mode, *_cells(r, analytic)])
    sec.tables["jacobian"] = (
        markdown_table(
            [
                "framework",
                "strategy",
                "mode",
                "warm",
                "cold",
                "peak beyond inputs",
                "time / closed form",
                "max rel. error",
            ],
            table,
        )  # fmt: skip
        if table
        else f"*The moments problem at n = {n:,} is {NOT_MEASURED}.*\n"
    )
    for fw in AD_FRAMEWORKS:
        key = fw if fw != "tensorflow" else "tf"
        ok = [
            r for r in _wide(res, framework=fw, inputs=n, status="ok") if r["target"] == "strategy"
        ]
        fastest = min(ok, key=lambda r: r["warm_median_s"]) if ok else None
        sec.value(f"w_best_{key}", fastest["strategy"] if fastest else NOT_MEASURED)
        sec.value(f"w_best_{key}_time", outcome(fastest) if fastest else NOT_MEASURED)
    fwd = next(iter(_wide(res, framework="torch", strategy="jacfwd", inputs=n)), None)
    sec.value("w_jacfwd_question", outcome(fwd) if fwd else NOT_MEASURED)
    fwd_ok = _wide(res, framework="torch", strategy="jacfwd", status="ok")
    sec.value("w_jacfwd_largest", f"{fwd_ok[-1]['inputs']:,}" if fwd_ok else NOT_MEASURED)
    sec.value("w_jacfwd_largest_time", outcome(fwd_ok[-1]) if fwd_ok else NOT_MEASURED)

    # create_graph=True on a first-order Jacobian: the same loop with and without it.
    plain = {
        r["inputs"]: r for r in _wide(res, framework="torch", strategy="grad-loop", status="ok")
    }
    graph = {
        r["inputs"]: r
        for r in _wide(res, framework="torch", strategy="grad-loop-create-graph", status="ok")
    }
    common = sorted(set(plain) & set(graph))
    if common:
        m = common[-1]
        p, g = plain[m], graph[m]
        sec.value("w_cg_n", f"{m:,}")
        sec.value("w_cg_plain", fmt_time(p["warm_median_s"]))
        sec.value("w_cg_graph", fmt_time(g["warm_median_s"]))
        sec.value("w_cg_time_ratio", f"{g['warm_median_s'] / p['warm_median_s']:.2f}")
        sec.value("w_cg_plain_peak", fmt_bytes(peak_over_inputs(p)))
        sec.value("w_cg_graph_peak", fmt_bytes(peak_over_inputs(g)))
    else:
        for k in ("w_cg_n", "w_cg_plain", "w_cg_graph", "w_cg_time_ratio", "w_cg_plain_peak",
                  "w_cg_graph_peak"):  # fmt: skip
            sec.value(k, NOT_MEASURED)

    # Per-sample Jacobians of a batch of rows.
    batch_rows = []
    for r in _wide(res, problem="moments-batch"):
        ref = next(
            iter(_wide(res, problem="moments-batch", framework="numpy", strategy="analytic",
                       inputs=r["inputs"], batch=r["batch"])),
            None,
        )  # fmt: skip
        batch_rows.append([f"{r['batch']} × {r['inputs']:,}", FRAMEWORK_NAMES[r["framework"]],
                           f"`{r['strategy']}`", *_cells(r, ref)])  # fmt: skip
    batch_rows.sort(key=lambda c: [int(x.replace(",", "")) for x in c[0].split(" × ")])
    sec.tables["batch"] = (
        markdown_table(
            [
                "B × n",
                "framework",
                "strategy",
                "warm",
                "cold",
                "peak beyond inputs",
                "time / closed form",
                "max rel. error",
            ],
            batch_rows,
        )  # fmt: skip
        if batch_rows
        else f"*Per-sample Jacobians are {NOT_MEASURED}.*\n"
    )

    # Hessians: dense where they fit, products at the question's n.
    second_rows = [r for r in _wide(res) if r["target"] == "second"]
    dense_ok = [r for r in second_rows if _kind(r) == "dense" and r["status"] == "ok"]
    sizes = sorted({r["inputs"] for r in dense_ok})
    dense_n = sizes[-1] if sizes else None
    sec.value("w_dense_n", f"{dense_n:,}" if dense_n else NOT_MEASURED)
    hess = []
    for r in second_rows:
        if r["inputs"] in (n, dense_n):
            warm, cold, peak, _, error = _cells(r)
            name = f"`{_short(r)}`"
            hess.append([f"{r['inputs']:,}", FRAMEWORK_NAMES[r["framework"]], name, _kind(r),
                         warm, cold, peak, error])  # fmt: skip
    hess.sort(key=lambda c: (int(c[0].replace(",", "")), c[3], c[1]))
    sec.tables["hessian"] = (
        markdown_table(
            [
                "n",
                "framework",
                "method",
                "kind",
                "warm",
                "cold",
                "peak beyond inputs",
                "max rel. error",
            ],
            hess,
        )  # fmt: skip
        if hess
        else f"*Hessians are {NOT_MEASURED}.*\n"
    )
    skipped = [r for r in second_rows if r["inputs"] == n and r["status"] == "skipped-predicted"]
    sec.value(
        "w_dense_skipped",
        f"{len(skipped)} dense methods" if skipped else "no dense method (none was tried)",
    )
    hvps = [
        r for r in second_rows if r["inputs"] == n and _kind(r) == "hvp" and r["status"] == "ok"
    ]
    best_hvp = min(hvps, key=lambda r: r["warm_median_s"]) if hvps else None
    sec.value(
        "w_hvp_best",
        f"{best_hvp['framework']}/{_short(best_hvp)}" if best_hvp else NOT_MEASURED,
    )
    sec.value("w_hvp_best_time", outcome(best_hvp) if best_hvp else NOT_MEASURED)
    sec.value(
        "w_hvp_best_peak", fmt_bytes(peak_over_inputs(best_hvp)) if best_hvp else NOT_MEASURED
    )

    # Per-path second-order Greeks of the GBM simulation, against the closed form.
    greeks = [
        r for r in res.select_wide(problem="gbm", allocator="glibc") if r["target"] == "second"
    ]
    g_rows = [[FRAMEWORK_NAMES[r["framework"]], r["dtype"], f"{r['paths']:,}", outcome(r),
               _error(r)] for r in greeks]  # fmt: skip
    sec.tables["greeks"] = (
        markdown_table(["framework", "dtype", "paths N", "warm", "max rel. error"], g_rows)
        if g_rows
        else f"*Second-order Greeks are {NOT_MEASURED}.*\n"
    )
    for dtype, key in (("float32", "f32"), ("float64", "f64")):
        errs = [r["max_rel_error"] for r in greeks if r["dtype"] == dtype and r["status"] == "ok"]
        sec.value(f"w_greeks_{key}", f"{max(errs):.1e}" if errs else NOT_MEASURED)

    # The tall-to-wide crossover.
    aspects = {}
    for fw in AD_FRAMEWORKS:
        rows = [r for r in crossover_rows if r["framework"] == fw]
        aspects[fw] = crossover.crossover(rows) if rows else None
        key = fw if fw != "tensorflow" else "tf"
        sec.value(
            f"w_cross_{key}",
            _aspect(aspects[fw]) if rows else NOT_MEASURED,
        )
    totals = {r["outputs"] * r["inputs"] for r in crossover_rows}
    sec.value("w_cross_total", f"{totals.pop():,}" if len(totals) == 1 else NOT_MEASURED)
    if crossover_rows:
        sec.figures["crossover"] = figures.crossover(crossover_rows, aspects)
    sec.figures["jacobian-time"] = figures.wide_scaling(
        lambda fw: [r for r in _wide(res, framework=fw) if r["target"] == "strategy"],
        "the 3 × n Jacobian",
        reference=_wide(res, framework="numpy", strategy="analytic"),
    )
    sec.figures["hessian-time"] = figures.wide_scaling(
        lambda fw: [r for r in _wide(res, framework=fw) if r["target"] == "second"],
        "Hessians and Hessian-vector products",
    )  # fmt: skip
    return sec


def _aspect(a: float | None) -> str:
    if a is None:
        return "no shape (forward mode stays as fast or faster)"
    return f"m / n = {a:g}" if a >= 1 else f"m / n = 1/{1 / a:g}"
