"""Chapter 3, vectorized reverse mode: memory of the reverse-mode strategies against the model."""

from __future__ import annotations

from jacbench.report import figures
from jacbench.report.chapters.common import NOT_MEASURED, _base, frame
from jacbench.report.figures import FRAMEWORK_NAMES
from jacbench.report.publish import Section, markdown_table
from jacbench.report.results import Results, fmt_bytes, loglog_slope, outcome, peak_over_inputs
from jacbench.strategies import registry

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
            frame(res), fw, metric="memory", strategies=names
        ).figure
    keys = [(fw, n) for fw, names in REVERSE_FAMILY.items() for n in names]
    sec.figures["model"] = figures.memory_vs_model(frame(res), keys)
    sec.figures["tradeoff"] = figures.tradeoff(frame(res), focus_paths)

    pfor = registry.get("tensorflow", "tape-jacobian-pfor")
    a = (52 + 1) * question_paths * 4
    sec.value(
        "pfor_predicted_question",
        fmt_bytes(
            registry.get("tensorflow", "tape-jacobian-pfor").memory.peak(
                "tensorflow", question_paths, 52, "float32"
            )
        ),
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
