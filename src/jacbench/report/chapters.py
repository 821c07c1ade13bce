"""The computations behind each chapter: values to glue, tables and figures, from results.

Each function takes loaded results and the notebook's parameters and returns a Section; the
notebook only calls it and publishes. Values are formatted text; where a profile did not
measure something, the value says so instead of being left empty.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from jacbench.measure import model
from jacbench.problems import gbm
from jacbench.report import figures
from jacbench.report.figures import FRAMEWORK_NAMES
from jacbench.report.publish import Section, markdown_table
from jacbench.report.results import (
    Results,
    fmt_bytes,
    fmt_time,
    loglog_slope,
    outcome,
    peak_bytes,
    peak_over_inputs,
)
from jacbench.strategies import registry

NOT_MEASURED = "not measured in this profile"


def _ok_strategies(res: Results, framework: str, paths: int, **where) -> list[dict]:
    return [
        r
        for r in res.select(framework=framework, paths=paths, status="ok", **where)
        if r["target"] == "strategy"
    ]


def _base(**kw) -> dict:
    return {"dtype": "float32", "allocator": "glibc", **kw}


def best(res: Results, framework: str, paths: int, exclude=("question",)) -> dict | None:
    """The fastest correct strategy of a framework at N (warm median time)."""
    rows = [
        r for r in _ok_strategies(res, framework, paths, **_base()) if r["strategy"] not in exclude
    ]
    return min(rows, key=lambda r: r["warm_median_s"]) if rows else None


def _ratio(res: Results, row: dict | None) -> str:
    if row is None:
        return "–"
    q = res.ratio_to_simulation(row)
    return f"{q:.1f}×" if q is not None else "–"


def largest_common(res: Results, framework: str, strategies: list[str]) -> int | None:
    """The largest N at which every named strategy of a framework ran correctly."""
    sizes = None
    for s in strategies:
        ns = {
            r["paths"] for r in res.select(framework=framework, strategy=s, status="ok", **_base())
        }
        sizes = ns if sizes is None else sizes & ns
    return max(sizes) if sizes else None


# --- chapter 1 ---------------------------------------------------------------------------------


def question(res: Results, question_paths: int, focus_paths: int) -> Section:
    sec = Section()
    sec.value("n_question", f"{question_paths:,}")
    sec.value("n_focus", f"{focus_paths:,}")
    for fw, short in (("torch", "torch"), ("tensorflow", "tf")):
        big = res.one(framework=fw, strategy="question", paths=question_paths, **_base())
        small = res.one(
            framework=fw, strategy="question", paths=focus_paths, status="ok", **_base()
        )
        sec.value(f"{short}_question_big", outcome(big) if big else NOT_MEASURED)
        sec.value(
            f"{short}_question_big_peak",
            fmt_bytes(big["watched_peak_rss"] or big["predicted_peak"]) if big else NOT_MEASURED,
        )
        sec.value(
            f"{short}_question_small_time",
            fmt_time(small["warm_median_s"]) if small else NOT_MEASURED,
        )
        sec.value(
            f"{short}_question_small_peak", fmt_bytes(peak_bytes(small)) if small else NOT_MEASURED
        )
    tf_big = res.one(framework="tensorflow", strategy="question", paths=question_paths, **_base())
    pred = (
        tf_big["predicted_peak"]
        if tf_big
        else model.predict("tensorflow", "question", question_paths, 52, "float32")
    )
    sec.value("tf_question_predicted", fmt_bytes(pred))

    rows = []
    for fw in ("torch", "tensorflow", "jax", "numpy"):
        q = res.one(framework=fw, strategy="question", paths=question_paths, **_base())
        b = best(res, fw, question_paths)
        key = fw if fw != "tensorflow" else "tf"
        sec.value(f"best_{key}", f"{b['strategy']}" if b else NOT_MEASURED)
        sec.value(f"best_{key}_time", fmt_time(b["warm_median_s"]) if b else NOT_MEASURED)
        sec.value(f"best_{key}_peak", fmt_bytes(peak_bytes(b)) if b else NOT_MEASURED)
        rows.append(
            [
                FRAMEWORK_NAMES[fw],
                outcome(q)
                if q
                else (
                    "closed form, no program" if fw == "numpy" else "(no program in the question)"
                ),
                f"`{b['strategy']}`" if b else "–",
                fmt_time(b["warm_median_s"]) if b else "–",
                fmt_bytes(peak_bytes(b)) if b else "–",
                _ratio(res, b),
            ]
        )
    sec.tables["headline"] = markdown_table(
        [
            "framework",
            f"the question's program, N = {question_paths:,}",
            "fastest strategy",
            "warm time",
            "peak memory",
            "time / one simulation",
        ],
        rows,
    )
    return sec


# --- chapter 2 ---------------------------------------------------------------------------------


def _rel(x: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(x - ref) / np.abs(ref)))


def modes(res: Results, focus_paths: int, teach_paths: int = 4) -> Section:
    from jacbench.teaching import dual, tape
    from jacbench.teaching.gbm_step import closed_form, step

    sec = Section()
    z = np.random.default_rng(1234).standard_normal(teach_paths)
    spot, vol, dt, drift = 100.0, 0.2, 1 / 52, 0.03
    s, d_spot, d_vol = closed_form(spot, vol, z, dt, drift)

    def f(exp):
        return lambda a, b: step(a, b, z, dt, drift, exp)

    _, t_vol = dual.jvp(f(dual.exp), (spot, vol), (0.0, 1.0))
    _, (g_spot, g_vol), tp = tape.vjp(
        f(tape.exp), (np.full(teach_paths, spot), np.full(teach_paths, vol)), np.ones(teach_paths)
    )
    sec.value("teach_paths", str(teach_paths))
    sec.value("dual_error", f"{np.max(np.abs(t_vol - d_vol) / np.abs(d_vol)):.1e}")
    sec.value(
        "tape_error",
        f"{max(_rel(g_vol, d_vol), _rel(g_spot, d_spot)):.1e}",
    )
    sec.value("tape_entries", str(len(tp.entries)))
    sec.value("tape_bytes", f"{tp.stored_bytes():,}")
    sec.value("tape_bytes_per_path", f"{tp.stored_bytes() / teach_paths:.0f}")
    sec.tables["tape"] = markdown_table(
        ["#", "operation", "shape of its output", "local derivatives kept (bytes)"],
        [
            [
                str(i + 1),
                op,
                str(np.shape(out.value)),
                f"{sum(np.asarray(loc).nbytes for _, loc in parents):,}",
            ]
            for i, (op, out, parents) in enumerate(tp.entries)
        ],
    )
    sec.tables["step"] = markdown_table(
        [
            "path",
            "Z",
            "S after one step",
            "dS/dS0 (dual)",
            "dS/dσ (dual)",
            "dS/dσ (tape)",
            "dS/dσ (closed form)",
        ],
        [
            [
                str(i + 1),
                f"{z[i]:+.4f}",
                f"{s[i]:.4f}",
                f"{d_spot[i]:.6f}",
                f"{t_vol[i]:.6f}",
                f"{g_vol[i]:.6f}",
                f"{d_vol[i]:.6f}",
            ]
            for i in range(teach_paths)
        ],
    )

    pairs = {
        "torch": ("jacfwd", "jacrev"),
        "tensorflow": ("forward-accumulator", "tape-jacobian-pfor"),
        "jax": ("jacfwd", "jacrev"),
    }
    rows = []
    for fw, (fwd, rev) in pairs.items():
        a = res.one(framework=fw, strategy=fwd, paths=focus_paths, status="ok", **_base())
        b = res.one(framework=fw, strategy=rev, paths=focus_paths, status="ok", **_base())
        ratio = b["warm_median_s"] / a["warm_median_s"] if a and b else None
        key = fw if fw != "tensorflow" else "tf"
        sec.value(f"rev_over_fwd_{key}", f"{ratio:.0f}" if ratio else NOT_MEASURED)
        rows.append(
            [
                FRAMEWORK_NAMES[fw],
                f"`{fwd}`: {fmt_time(a['warm_median_s']) if a else '–'}",
                f"`{rev}`: {fmt_time(b['warm_median_s']) if b else '–'}",
                f"{ratio:.0f}×" if ratio else "–",
                " / ".join(fmt_bytes(peak_over_inputs(r)) if r else "–" for r in (a, b)),
            ]
        )
    sec.tables["fwd-rev"] = markdown_table(
        [
            "framework",
            "forward: 2 JVPs",
            f"reverse: {focus_paths:,} VJPs, vectorized",
            "reverse / forward time",
            "memory beyond inputs (fwd / rev)",
        ],
        rows,
    )
    return sec


# --- chapter 3 ---------------------------------------------------------------------------------

REVERSE_FAMILY = {
    "torch": [
        "question",
        "functional-loop",
        "grad-loop",
        "functional-vectorized",
        "batched-backward",
        "jacrev",
        "jacrev-chunked",
        "pathwise",
    ],
    "tensorflow": [
        "question",
        "tape-jacobian-loop",
        "tape-jacobian-pfor",
        "tape-jacobian-pfor-chunked",
        "pathwise",
    ],
    "jax": ["vjp-loop", "jacrev", "jacrev-chunked", "pathwise"],
}


def vectorized(res: Results, question_paths: int, focus_paths: int) -> Section:
    sec = Section()
    for fw, names in REVERSE_FAMILY.items():
        sec.figures[f"memory-{fw}"] = figures.scaling(
            res, fw, metric="memory", strategies=names
        ).figure
    keys = [(fw, n) for fw, names in REVERSE_FAMILY.items() for n in names]
    sec.figures["model"] = figures.memory_vs_model(res, keys)
    sec.figures["tradeoff"] = figures.tradeoff(res, focus_paths)

    pfor = registry.get("tensorflow", "tape-jacobian-pfor")
    a = (52 + 1) * question_paths * 4
    sec.value(
        "pfor_predicted_question",
        fmt_bytes(model.predict("tensorflow", "tape-jacobian-pfor", question_paths, 52, "float32")),
    )
    sec.value("cotangent_batch_bytes", fmt_bytes(question_paths * a))
    sec.value("pfor_batch_coefficient", f"{pfor.memory.batch:g}")
    sec.value("chunk_size", f"{256}")
    rows_pfor = res.select(
        framework="tensorflow", strategy="tape-jacobian-pfor", status="ok", **_base()
    )
    slope = loglog_slope([r["paths"] for r in rows_pfor], [peak_over_inputs(r) for r in rows_pfor])
    sec.value("pfor_memory_slope", f"{slope:.1f}" if slope is not None else NOT_MEASURED)
    loop = res.select(framework="tensorflow", strategy="tape-jacobian-loop", status="ok", **_base())
    sec.value("tf_loop_largest", fmt_bytes(peak_over_inputs(loop[-1])) if loop else NOT_MEASURED)
    sec.value("tf_loop_largest_n", f"{loop[-1]['paths']:,}" if loop else NOT_MEASURED)

    rows = []
    for fw, names in REVERSE_FAMILY.items():
        for n in names:
            r = res.one(framework=fw, strategy=n, paths=focus_paths, **_base())
            if r is None:
                continue
            s = registry.get(fw, n)
            rows.append(
                [
                    FRAMEWORK_NAMES[fw],
                    f"`{n}`",
                    s.batching,
                    outcome(r),
                    fmt_bytes(peak_over_inputs(r)) if r["status"] == "ok" else "–",
                    fmt_bytes(s.memory.working(focus_paths, 52, "float32")),
                ]
            )
    sec.tables["reverse"] = markdown_table(
        [
            "framework",
            "strategy",
            "batching",
            "warm time",
            "peak beyond inputs",
            "model: working memory",
        ],
        rows,
    )
    return sec


# --- chapter 4 ---------------------------------------------------------------------------------


def gbm_comparison(res: Results, question_paths: int, focus_paths: int) -> Section:
    sec = Section()
    # The question's programs at every size measured.
    rows = []
    for r in res.select(strategy="question", **_base()):
        rows.append(
            [
                FRAMEWORK_NAMES[r["framework"]],
                f"{r['paths']:,}",
                outcome(r),
                fmt_bytes(peak_bytes(r)) if r["status"] == "ok" else r["message"],
            ]
        )
    sec.tables["question-runs"] = markdown_table(
        ["program", "N", "outcome", "peak memory or reason"], rows
    )

    # The TensorFlow program's missing cumulative sum, shown with the numpy reference.
    case = gbm.make_case(gbm.GBMParams(paths=100_000, dtype="float64"))
    p = case.params
    log_right = np.log(gbm.terminal_closed_form(case) / p.spot)
    log_tf = np.log(gbm.terminal_without_cumsum(case) / p.spot)
    sec.value("std_log_gbm", f"{log_right.std():.4f}")
    sec.value("std_log_tf", f"{log_tf.std():.4f}")
    sec.value("std_ratio", f"{log_right.std() / log_tf.std():.1f}")
    sec.value("sqrt_steps", f"{np.sqrt(p.steps):.1f}")

    # Scaling of time and memory.
    sec.figures["time"] = figures.scaling_grid(
        res, metric="time", frameworks=["torch", "tensorflow", "jax", "numpy"]
    )
    sec.figures["memory"] = figures.scaling_grid(
        res, metric="memory", frameworks=["torch", "tensorflow", "jax", "numpy"]
    )
    sec.figures["cold-warm"] = figures.cold_warm(res, focus_paths)

    # Slopes of the efficient strategies, and cost relative to the simulation at the largest N.
    ratio_rows = []
    for fw in ("torch", "tensorflow", "jax", "numpy"):
        for s in registry.by_framework(fw):
            rows_s = res.select(framework=fw, strategy=s.name, status="ok", **_base())
            if not rows_s:
                continue
            top = rows_s[-1]
            sim = res.simulation(fw, s.execution, top["paths"], dtype="float32", allocator="glibc")
            t_ratio = res.ratio_to_simulation(top)
            m_ratio = (
                (peak_over_inputs(top) / peak_over_inputs(sim))
                if sim and peak_over_inputs(sim)
                else None
            )
            slope = loglog_slope(
                [r["paths"] for r in rows_s if r["paths"] >= 1000],
                [r["warm_median_s"] for r in rows_s if r["paths"] >= 1000],
            )
            ratio_rows.append(
                [
                    FRAMEWORK_NAMES[fw],
                    f"`{s.name}`",
                    s.mode,
                    f"{top['paths']:,}",
                    fmt_time(top["warm_median_s"]),
                    f"{t_ratio:.1f}×" if t_ratio else "–",
                    fmt_bytes(peak_over_inputs(top)),
                    f"{m_ratio:.1f}×" if m_ratio else "–",
                    f"{slope:.2f}" if slope is not None else "–",
                    f"{top['max_rel_error']:.1e}",
                ]
            )
    sec.tables["ratios"] = markdown_table(
        [
            "framework",
            "strategy",
            "mode",
            "largest N run",
            "warm time",
            "time / simulation",
            "peak beyond inputs",
            "memory / simulation",
            "time slope in N",
            "max rel. error",
        ],
        ratio_rows,
    )

    # Efficient strategies at the largest N: the answer in numbers.
    for fw, names in (
        ("torch", ["pathwise", "jvp", "compiled-pathwise"]),
        ("tensorflow", ["pathwise", "forward-accumulator"]),
        ("jax", ["jacfwd", "pathwise"]),
    ):
        key = fw if fw != "tensorflow" else "tf"
        n = largest_common(res, fw, names[:1])
        r = res.one(framework=fw, strategy=names[0], paths=n, status="ok", **_base()) if n else None
        sec.value(f"eff_{key}_name", names[0])
        sec.value(f"eff_{key}_n", f"{n:,}" if n else NOT_MEASURED)
        sec.value(f"eff_{key}_ratio", _ratio(res, r) if r else NOT_MEASURED)
    q = res.one(framework="torch", strategy="question", paths=focus_paths, status="ok", **_base())
    b = best(res, "torch", focus_paths)
    sec.value(
        "torch_speedup_focus",
        f"{q['warm_median_s'] / b['warm_median_s']:.0f}" if q and b else NOT_MEASURED,
    )
    tq = res.one(
        framework="tensorflow", strategy="question", paths=focus_paths, status="ok", **_base()
    )
    tp = res.one(
        framework="tensorflow", strategy="pathwise", paths=focus_paths, status="ok", **_base()
    )
    sec.value(
        "tf_memory_ratio_focus",
        f"{peak_over_inputs(tq) / peak_over_inputs(tp):.0f}"
        if tq and tp and peak_over_inputs(tp)
        else NOT_MEASURED,
    )

    # Accuracy at the focus size.
    acc = []
    for r in res.select(paths=focus_paths, status="ok", **_base()):
        if r["target"] == "strategy":
            acc.append(
                [FRAMEWORK_NAMES[r["framework"]], f"`{r['strategy']}`", f"{r['max_rel_error']:.1e}"]
            )
    sec.tables["accuracy"] = markdown_table(
        ["framework", "strategy", "max relative error, float32"], acc
    )
    errs = [
        r["max_rel_error"]
        for r in res.select(paths=focus_paths, status="ok", **_base())
        if r["target"] == "strategy"
    ]
    sec.value("max_error_focus", f"{max(errs):.1e}" if errs else NOT_MEASURED)

    # The allocator as a factor.
    loops = [("torch", "question"), ("torch", "functional-loop"), ("torch", "jvp")]
    alloc_rows = res.select(framework="torch", allocator=("glibc-mmap", "jemalloc"))
    if alloc_rows:
        n_alloc = max(r["paths"] for r in alloc_rows)
        sec.figures["allocator"] = figures.allocator_effect(res, loops, n_alloc)
        arows = []
        for fw, name in loops:
            for alloc in ("glibc", "glibc-mmap", "jemalloc"):
                r = res.one(
                    framework=fw, strategy=name, paths=n_alloc, allocator=alloc, dtype="float32"
                )
                if r:
                    arows.append(
                        [
                            f"`{name}`",
                            alloc,
                            outcome(r),
                            fmt_bytes(peak_over_inputs(r)) if r["status"] == "ok" else "–",
                        ]
                    )
        sec.tables["allocator"] = markdown_table(
            ["strategy", "allocator", "warm time", "peak beyond inputs"], arows
        )
        g, m, j = (
            res.one(framework="torch", strategy="functional-loop", paths=n_alloc,
                    allocator=alloc, status="ok")
            for alloc in ("glibc", "glibc-mmap", "jemalloc")
        )  # fmt: skip
        sec.value("alloc_jemalloc_peak", fmt_bytes(peak_over_inputs(j)) if j else NOT_MEASURED)
        sec.value(
            "alloc_jemalloc_time_ratio",
            f"{j['warm_median_s'] / g['warm_median_s']:.2f}" if g and j else NOT_MEASURED,
        )
        sec.value("alloc_n", f"{n_alloc:,}")
        sec.value("alloc_glibc_peak", fmt_bytes(peak_over_inputs(g)) if g else NOT_MEASURED)
        sec.value("alloc_mmap_peak", fmt_bytes(peak_over_inputs(m)) if m else NOT_MEASURED)
        sec.value(
            "alloc_time_ratio",
            f"{m['warm_median_s'] / g['warm_median_s']:.1f}" if g and m else NOT_MEASURED,
        )
    else:
        sec.tables["allocator"] = (
            f"*The allocator factor is {NOT_MEASURED}: run the standard profile.*\n"
        )
        for k in ("alloc_n", "alloc_glibc_peak", "alloc_mmap_peak", "alloc_time_ratio",
                  "alloc_jemalloc_peak", "alloc_jemalloc_time_ratio"):  # fmt: skip
            sec.value(k, NOT_MEASURED)
    return sec


# --- chapter 5 ---------------------------------------------------------------------------------

JACOBIAN_ORDER = {
    "torch": ["grad-loop", "grad-loop-create-graph", "batched-backward", "functional-loop",
              "functional-vectorized", "jacrev", "jacfwd"],
    "tensorflow": ["tape-jacobian-pfor", "tape-jacobian-loop", "batch-jacobian"],
    "jax": ["jacrev", "jacfwd"],
    "numpy": ["analytic"],
}  # fmt: skip


# Shown for what they cost, never recommended: the question's own programs and the first-order
# loop that records a graph for second derivatives it never takes.
NOT_A_PICK = ("question", "grad-loop-create-graph")


def _wide(res: Results, problem: str = "moments", **where) -> list[dict]:
    return res.select_wide(problem=problem, **_base(**where))


def _kind(row: dict) -> str:
    from jacbench.second import registry as second

    if row["target"] == "second":
        return second.get(row["framework"], row["strategy"]).kind
    return registry.get(row["framework"], row["strategy"]).mode + " mode"


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
    from jacbench import crossover
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
    for fw in ("torch", "tensorflow", "jax"):
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
            name = f"`{_short(r['strategy'])}`"
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
        f"{best_hvp['framework']}/{_short(best_hvp['strategy'])}" if best_hvp else NOT_MEASURED,
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
    for fw in ("torch", "tensorflow", "jax"):
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
        res,
        lambda fw: [r for r in _wide(res, framework=fw) if r["target"] == "strategy"],
        "the 3 × n Jacobian",
        reference=_wide(res, framework="numpy", strategy="analytic"),
    )
    sec.figures["hessian-time"] = figures.wide_scaling(
        res, lambda fw: [r for r in _wide(res, framework=fw) if r["target"] == "second"],
        "Hessians and Hessian-vector products",
    )  # fmt: skip
    return sec


def _aspect(a: float | None) -> str:
    if a is None:
        return "no shape (forward mode stays as fast or faster)"
    return f"m / n = {a:g}" if a >= 1 else f"m / n = 1/{1 / a:g}"


# --- chapter 6 ---------------------------------------------------------------------------------


def _describe(res: Results, row: dict | None) -> str:
    if row is None:
        return "–"
    t = fmt_time(row["warm_median_s"])
    return f"`{row['strategy']}` ({t}, {_ratio(res, row)} a simulation)"


def recommend(res: Results, budgets_gib: tuple[float, ...] = (1.0, 8.0)) -> Section:
    sec = Section()
    rows = []
    defaults = {"torch": "functional-loop", "tensorflow": "tape-jacobian-pfor", "jax": "jacrev"}
    dense_defaults = {"torch": "second:functional-hessian", "tensorflow": "second:nested-tapes",
                      "jax": "second:hessian"}  # fmt: skip
    for fw in ("torch", "tensorflow", "jax"):
        key = fw if fw != "tensorflow" else "tf"
        sizes = sorted(
            {
                r["paths"]
                for r in res.select(framework=fw, status="ok", **_base())
                if r["target"] == "strategy"
            }
        )
        if sizes:
            n = sizes[-1]
            candidates = [
                r for r in _ok_strategies(res, fw, n, **_base()) if r["strategy"] != "question"
            ]
            fastest = best(res, fw, n)
            d = res.select(framework=fw, strategy=defaults[fw], **_base())
            rows.append(
                [FRAMEWORK_NAMES[fw], "tall (N × 2)", f"N = {n:,}", _describe(res, fastest)]
                + _within(candidates, budgets_gib)
                + [f"`{defaults[fw]}`: {outcome(d[-1])} at N = {d[-1]['paths']:,}" if d else "–"]
            )
            sec.value(f"pick_{key}", fastest["strategy"] if fastest else NOT_MEASURED)
        else:
            sec.value(f"pick_{key}", NOT_MEASURED)
        wide = [
            r
            for r in _wide(res, framework=fw)
            if r["target"] == "strategy" and r["strategy"] not in NOT_A_PICK
        ]
        # The diagonal by one product is exact for separable functions only: not a general pick.
        hess = [
            r
            for r in _wide(res, framework=fw)
            if r["target"] == "second" and _kind(r) in ("dense", "hvp")
        ]
        for label, group, default in (
            ("wide (3 × n)", wide, defaults[fw]),
            ("Hessian (n × n per output): dense or products Hv", hess, dense_defaults[fw]),
        ):
            ok = [r for r in group if r["status"] == "ok"]
            if not ok:
                continue
            n = max(r["inputs"] for r in ok)
            there = [r for r in ok if r["inputs"] == n]
            fastest = min(there, key=lambda r: r["warm_median_s"])
            d = [r for r in group if r["strategy"] == default]
            rows.append(
                [FRAMEWORK_NAMES[fw], label, f"n = {n:,}", _name_time(fastest)]
                + _within(there, budgets_gib)
                + [_default_cell(d, n)]
            )
            what = "wide" if label.startswith("wide") else "hessian"
            sec.value(f"pick_{what}_{key}", _short(fastest["strategy"]))
    for fw in ("torch", "tensorflow", "jax"):
        key = fw if fw != "tensorflow" else "tf"
        for what in ("wide", "hessian"):
            sec.values.setdefault(f"pick_{what}_{key}", NOT_MEASURED)
    sec.tables["decision"] = markdown_table(
        ["framework", "Jacobian shape", "largest size measured", "fastest there"]
        + [f"fastest within {b:g} GiB" for b in budgets_gib]
        + ["the framework's default"],
        rows,
    )
    return sec


def _short(name: str) -> str:
    return name.removeprefix("second:")


def _name_time(row: dict) -> str:
    return f"`{_short(row['strategy'])}` ({fmt_time(row['warm_median_s'])})"


def _within(rows: list[dict], budgets_gib: tuple[float, ...]) -> list[str]:
    """Per memory budget, the fastest row whose absolute peak fits in it."""
    cells = []
    for budget in budgets_gib:
        fits = [r for r in rows if peak_bytes(r) <= budget * 2**30]
        pick = min(fits, key=lambda r: r["warm_median_s"]) if fits else None
        cells.append(
            f"`{_short(pick['strategy'])}` ({fmt_bytes(peak_bytes(pick))})"
            if pick
            else "none measured"
        )
    return cells


def _default_cell(rows: list[dict], n: int) -> str:
    """The default's outcome at n, or at the largest n it was tried."""
    if not rows:
        return "–"
    at = [r for r in rows if r["inputs"] == n] or [max(rows, key=lambda r: r["inputs"])]
    r = at[-1]
    size = f"n = {r['inputs']:,}" if r["problem"] != "gbm" else f"N = {r['paths']:,}"
    return f"`{_short(r['strategy'])}`: {outcome(r)} at {size}"


# --- chapter 7 ---------------------------------------------------------------------------------


def reproduce(res: Results, parameters_file: str | Path) -> Section:
    sec = Section()
    meta = res.meta
    env_rows = [
        [k, f"`{meta.get(k, '–')}`"]
        for k in (
            "python",
            "numpy",
            "torch",
            "tensorflow",
            "jax",
            "jaxlib",
            "cpu",
            "cores",
            "ram_bytes",
            "jemalloc",
            "git_commit",
            "date",
            "environment_key",
        )
    ]
    sec.tables["environment"] = markdown_table(["field", "value"], env_rows)
    counts: dict[str, int] = {}
    every = res.rows + res.wide
    for r in every:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    sec.tables["results"] = markdown_table(
        ["results file", "rows", "statuses"],
        [
            [
                f"`{res.path.name}`",
                str(len(every)),
                ", ".join(f"{v} {k}" for k, v in sorted(counts.items())),
            ]
        ],
    )
    params = json.loads(Path(parameters_file).read_text())
    sec.tables["parameters"] = markdown_table(
        ["notebook", "parameters"],
        [
            [f"`notebooks/{nb}.ipynb`", ", ".join(f"`{k}={v!r}`" for k, v in p.items())]
            for nb, p in params.items()
        ],
    )
    sec.value("n_rows", str(len(every)))
    sec.value("profile_cases", str(meta.get("cases", len(every))))
    return sec
