"""Chapter 4, the GBM comparison: every strategy's time and memory against the simulation,
accuracy, and the allocator as a factor.
"""

from __future__ import annotations

import numpy as np

from jacbench.constants import FRAMEWORKS
from jacbench.problems import gbm
from jacbench.report import figures
from jacbench.report.chapters.common import NOT_MEASURED, _base, _ratio, best, frame, largest_common
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
    ratio_text,
)
from jacbench.strategies import registry


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
        frame(res), metric="time", frameworks=list(FRAMEWORKS)
    )
    sec.figures["memory"] = figures.scaling_grid(
        frame(res), metric="memory", frameworks=list(FRAMEWORKS)
    )
    sec.figures["cold-warm"] = figures.cold_warm(frame(res), focus_paths)

    # Slopes of the efficient strategies, and cost relative to the simulation at the largest N.
    ratio_rows = []
    for fw in FRAMEWORKS:
        for s in registry.by_framework(fw):
            rows_s = res.select(framework=fw, strategy=s.name, status="ok", **_base())
            if not rows_s:
                continue
            top = rows_s[-1]
            sim = res.simulation(fw, s.execution, top["paths"], dtype="float32", allocator="glibc")
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
                    ratio_text(top, digits=1),
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
            "time / simulation [spread]",
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
        sec.figures["allocator"] = figures.allocator_effect(frame(res), loops, n_alloc)
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
