"""The limit chapter's figure: each framework's fastest Jacobian of each form of the simulation
against N, beside one read of the normals (numpy's, and the framework's own)."""

from __future__ import annotations

from matplotlib.lines import Line2D

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report.chapters.limit.facts import Facts
from jacbench.report.figures.panels import compact, grid
from jacbench.report.figures.reads import READ_LABEL, READ_STYLE
from jacbench.report.figures.style import log_axes, style

# The two forms' lines: the whole-array form (the question's) and the loop over the steps.
FORM_STYLE = {
    "array": {"color": "#CC79A7", "lw": 2.0, "marker": "o", "label": "fastest, whole-array form"},
    "steps": {
        "color": "#0072B2",
        "lw": 2.2,
        "marker": "s",
        "label": "fastest, loop over the steps",
    },
}
OWN_READ = {"color": "#707070", "lw": 1.2, "ls": ":", "label": "the framework's own read"}


def forms(f: Facts, frameworks=AD_FRAMEWORKS):
    """Warm time against N, one panel per framework: the fastest Jacobian of each form at each
    N, numpy's read of the normals (the limit) and the framework's own compiled read."""
    style()
    fig, axes = grid(len(frameworks), extra_height=0.9)
    for ax, fw in zip(axes, frameworks, strict=False):
        # The whole array at the N where the loop ran too: at 3,000 paths only chapter 3's
        # vectorized strategies did, and their fastest is no form's fastest.
        loop = {b.n for b in f.best if (b.framework, b.form) == (fw, "steps")}
        for form, how in FORM_STYLE.items():
            best = sorted(
                (
                    b
                    for b in f.best
                    if (b.framework, b.form) == (fw, form) and (form == "steps" or b.n in loop)
                ),
                key=lambda b: b.n,
            )
            if best:
                ax.plot(
                    [b.n for b in best],
                    [b.warm_s for b in best],
                    ms=4,
                    **{k: v for k, v in how.items() if k != "label"},
                )
        own = sorted((n, s) for (w, n), s in f.own_reads.items() if w == fw)
        if own:
            ax.plot(*zip(*own, strict=True), **{k: v for k, v in OWN_READ.items() if k != "label"})
        if f.reads:
            ax.plot(*zip(*sorted(f.reads.items()), strict=True), **READ_STYLE)
        ax.set_title(f"{FRAMEWORK_NAMES[fw]}: warm time (s)", loc="left")
        ax.set_xlabel("paths N")
        log_axes(ax)
        ax.xaxis.set_major_formatter(compact)  # 100, 1k, 1M: 1,000,000 and 10,000,000 touch
    handles = [
        Line2D([], [], ms=4, **{k: v for k, v in how.items() if k != "label"})
        for how in FORM_STYLE.values()
    ]
    handles.append(Line2D([], [], **{k: v for k, v in READ_STYLE.items() if k != "zorder"}))
    handles.append(Line2D([], [], **{k: v for k, v in OWN_READ.items() if k != "label"}))
    labels = [how["label"] for how in FORM_STYLE.values()] + [READ_LABEL, OWN_READ["label"]]
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    return fig
