"""Chapter 2, forward and reverse mode: the teaching dual numbers and tape on one GBM step,
and reverse against forward time in each framework.
"""

from __future__ import annotations

import numpy as np

from jacbench.report.chapters.common import NOT_MEASURED, _base
from jacbench.report.figures import FRAMEWORK_NAMES
from jacbench.report.publish import Section, markdown_table
from jacbench.report.results import Results, fmt_bytes, fmt_time, peak_over_inputs


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
