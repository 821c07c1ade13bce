"""The wide chapter's figures: moments Jacobians and Hessians against n, and the tall-to-wide
crossover."""

from __future__ import annotations

import numpy as np

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.measure.targets import parse
from jacbench.report.figures.style import (
    FAILED_MARKERS,
    FAILED_WORDS,
    FRAMEWORK_COLOURS,
    WIDTH,
    failure_legend,
    log_axes,
    plt,
    strategy_colours,
    style,
)


def wide_scaling(
    rows_of, title: str, frameworks=AD_FRAMEWORKS, reference: list[dict] | None = None
):
    """Warm time against n, one panel per framework, for the rows ``rows_of(framework)``
    returns (all sizes of one kind of method); failures drawn at the timeout or, when skipped
    on the model's prediction, at the top of the panel. ``reference`` rows (the closed form)
    are a dotted black line in every panel."""
    style()
    # 2.3 inches a panel: three stacked fit a laptop's screen (about 780 px).
    fig, axes = plt.subplots(
        len(frameworks), 1, figsize=(WIDTH, 2.3 * len(frameworks)), sharex=True
    )
    for ax, fw in zip(np.atleast_1d(axes), frameworks, strict=True):
        rows = rows_of(fw)
        names = sorted({r["strategy"] for r in rows})
        colours = strategy_colours(names)
        failed_seen = set()
        top = max((r["warm_median_s"] for r in rows if r["status"] == "ok"), default=1.0)
        for name in names:
            series = [r for r in rows if r["strategy"] == name]
            ok = [r for r in series if r["status"] == "ok"]
            short = parse(fw, name).name
            if ok:
                ax.plot(
                    [r["inputs"] for r in ok],
                    [r["warm_median_s"] for r in ok],
                    marker="o",
                    ms=4,
                    color=colours[name],
                    label=short,
                )
            for r in series:
                if r["status"] == "ok":
                    continue
                word = FAILED_WORDS.get(r["status"], r["status"])
                first = (name, word) not in failed_seen and not ok
                ax.scatter(
                    [r["inputs"]],
                    [r["timeout"] if r["status"] == "timeout" else top],
                    marker=FAILED_MARKERS.get(r["status"], "D"),
                    s=60,
                    zorder=5,
                    color=colours[name],
                    edgecolors="black",
                    linewidths=0.6,
                    label=f"{short}: {word}" if first else None,
                )
                failed_seen.add((name, word))
        ax.set_title(f"{FRAMEWORK_NAMES[fw]}: {title}")
        if not rows:
            ax.text(0.5, 0.5, "not measured in this profile", ha="center", transform=ax.transAxes)
            continue
        ref = [r for r in reference or [] if r["status"] == "ok"]
        if ref:
            ax.plot(
                [r["inputs"] for r in ref],
                [r["warm_median_s"] for r in ref],
                ":",
                color="black",
                marker=".",
                label="closed form (numpy)",
            )
        log_axes(ax)
        ax.set_ylabel("warm median time (s)")
        failure_legend(ax, failed_seen, outside=True)
    np.atleast_1d(axes)[-1].set_xlabel("inputs n")
    return fig


def crossover(rows: list[dict], aspects: dict[str, float | None], tied: set[tuple] | None = None):
    """Forward over reverse Jacobian time against the aspect m / n (tall on the left): above
    1, reverse mode is faster; the dashed line marks each framework's crossover, and the
    shapes in tied ((framework, m, n): the two modes not ranked) are drawn hollow."""
    style()
    tied = tied or set()
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8))
    for fw in sorted({r["framework"] for r in rows}):
        t: dict[tuple[int, int], dict[str, float]] = {}
        for r in rows:
            if r["framework"] == fw and r["status"] == "ok":
                t.setdefault((r["outputs"], r["inputs"]), {})[r["mode"]] = r["warm_median_s"]
        shapes = sorted((s for s in t if len(t[s]) == 2), key=lambda s: -s[0] / s[1])
        xs = [m / n for m, n in shapes]
        ys = [t[s]["forward"] / t[s]["reverse"] for s in shapes]
        colour = FRAMEWORK_COLOURS[fw]
        ax.plot(xs, ys, marker="o", ms=4, color=colour, label=FRAMEWORK_NAMES[fw])
        hollow = [(m / n, y) for (m, n), y in zip(shapes, ys, strict=True) if (fw, m, n) in tied]
        if hollow:
            x, y = zip(*hollow, strict=True)
            ax.scatter(x, y, s=36, zorder=5, facecolors="white", edgecolors=colour, lw=1.2)
        if aspects.get(fw) is not None:
            ax.axvline(aspects[fw], color=colour, ls="--", lw=0.8)
    ax.axhline(1.0, color="black", lw=0.8)
    log_axes(ax)
    ax.invert_xaxis()
    ax.set_xlabel("aspect m / n (outputs / inputs), tall on the left, wide on the right")
    ax.set_ylabel("forward time / reverse time")
    ax.set_title("tanh(W x): forward against reverse mode as the Jacobian turns wide")
    ax.legend(frameon=False, loc="upper left")
    return fig
