"""Chapter 1, the question: its programs at the question's N and the headline table."""

from __future__ import annotations

from jacbench.constants import FRAMEWORKS
from jacbench.report.chapters.common import NOT_MEASURED, _base, _ratio, best
from jacbench.report.figures import FRAMEWORK_NAMES
from jacbench.report.publish import Section, markdown_table
from jacbench.report.results import Results, fmt_bytes, fmt_time, outcome, peak_bytes
from jacbench.strategies import registry


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
        else registry.get("tensorflow", "question").memory.peak(
            "tensorflow", question_paths, 52, "float32"
        )
    )
    sec.value("tf_question_predicted", fmt_bytes(pred))

    rows = []
    for fw in FRAMEWORKS:
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
