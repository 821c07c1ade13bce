"""The GBM chapter's scaling figures: time and memory against N, one panel per framework, the
panels side by side in pairs.

Every strategy belongs to one family, read from its registry record, and each family has one
colour in every panel of every chapter: loop, vectorized and chunked reverse mode, forward
mode, the pathwise gradient, compiled variants of eager strategies (torch.compile, tf.function,
XLA; JAX's strategies, jitted throughout, keep the family of their differentiation), and no AD
(the closed form, finite differences, the simulations). The families the book recommends and
the question's programs are drawn strong and labelled at their line ends; the rest thin and
muted. Warm time carries its spread (the fastest to the slowest warm call) as a band.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.measure.targets import parse
from jacbench.report.data import records
from jacbench.report.figures.labels import limit_text, place_labels
from jacbench.report.figures.reads import READ_LABEL, READ_STYLE, read_line, read_rows
from jacbench.report.figures.style import FAILED_MARKERS, FAILED_WORDS, log_axes, plt, style
from jacbench.report.queries import where, without_draws
from jacbench.strategies import registry

# One colour per family (Okabe-Ito, distinguishable with the common colour-vision deficiencies).
FAMILIES = {
    "pathwise": "#009E73",
    "forward": "#0072B2",
    "compiled": "#7A3E9D",
    "loop reverse": "#D55E00",
    "vectorized reverse": "#CC79A7",
    "chunked": "#E69F00",
    "no AD": "#707070",
}
RECOMMENDED = ("pathwise", "forward", "compiled")
# Inches and points: a figure whose text stays readable when a 390 px phone shrinks it to fit.
SCALING_WIDTH, PANEL_HEIGHT = 4.2, 3.0
TEXT_SIZE = 10.5


def family(framework: str, name: str) -> str:
    """The family of a GBM strategy or simulation baseline, read from its registry record."""
    target = parse(framework, name)
    if target.kind == "simulation":
        return "no AD"
    s = target.record
    if s.mode == "none":
        return "no AD"
    if s.compiled and s.engine != "jit":  # JAX has jit only: its family is its method
        return "compiled"
    if s.mode == "forward":
        return "forward"
    if s.batching == "single-pass":
        return "pathwise"
    return {"loop": "loop reverse", "vectorized": "vectorized reverse"}.get(s.batching, "chunked")


def strong(framework: str, name: str) -> bool:
    """Drawn strong: a recommended family's strategy (not a build experiment), or the question's
    own program."""
    if name == "question":
        return True
    target = parse(framework, name)
    experiment = target.kind == "strategy" and registry.get(framework, name).experiment
    return family(framework, name) in RECOMMENDED and not experiment


def _short(framework: str, name: str) -> str:
    target = parse(framework, name)
    return f"simulation ({target.name})" if target.kind == "simulation" else target.name


# --- the figures ---------------------------------------------------------------------------------


# Which of a strategy's rows at one N a figure draws when a profile measured it more than once
# (the question's program at N = 10,000 skipped on the model under 8 GiB and run under 16 GiB):
# a finished case first, then one that ran and was stopped, then one skipped on the model.
_RANK = {"ok": 0, "memory-cap": 1, "timeout": 1, "error": 2, "skipped-predicted": 3}


def _rows(
    df: pd.DataFrame, framework: str, dtype: str, allocator: str, form: str = "array"
) -> pd.DataFrame:
    """A framework's GBM rows of one form of the simulation (the whole-array form, the
    question's, unless another is named), one per strategy and N: the most informative where
    the profile measured a case under several caps."""
    rows = where(
        df,
        problem="gbm",
        target=("strategy", "simulation"),
        framework=framework,
        dtype=dtype,
        allocator=allocator,
        form=form,
    )
    rows = without_draws(rows)
    rank = rows["status"].map(_RANK).fillna(2)
    # The larger cap or timeout wins a tie: the case that had the more room to finish.
    order = rows.assign(_rank=rank, _cap=-rows["mem_cap"].fillna(0), _time=-rows["timeout"])
    order = order.sort_values(["strategy", "paths", "_rank", "_cap", "_time"])
    first = order.drop_duplicates(["strategy", "paths"], keep="first")
    return first.drop(columns=["_rank", "_cap", "_time"])


def _value(r: dict, metric: str) -> float:
    if metric == "time":
        return r["warm_median_s"]
    return r["peak"] / 2**20 if r.get("peak") is not None else np.nan


def _failed_at(r: dict, metric: str) -> float:
    return (r["timeout"] if metric == "time" else (r["mem_cap"] or 0) / 2**20) or np.nan


def _draw(ax, framework: str, name: str, rows: list[dict], metric: str, emphasis: bool):
    """One strategy's line, band and failure markers; returns its label's anchor or None."""
    colour = FAMILIES[family(framework, name)]
    bold = strong(framework, name) or not emphasis
    sim = parse(framework, name).kind == "simulation"
    ok = [r for r in rows if r["status"] == "ok"]
    xs = [r["paths"] for r in ok]
    ys = [_value(r, metric) for r in ok]
    lw, alpha, z = (2.2, 1.0, 4) if bold else (1.0, 0.55, 2)
    if sim:
        lw, alpha = 1.3, 0.9
    if ok:
        ax.plot(
            xs,
            ys,
            ":" if sim else "-",
            marker="" if sim else "o",
            ms=4 if bold else 3,
            lw=lw,
            color=colour,
            alpha=alpha,
            zorder=z,
            gid=f"{framework}/{name}",
        )
    if ok and metric == "time" and not sim:
        lo = [r["warm_min_s"] or y for r, y in zip(ok, ys, strict=True)]
        hi = [r["warm_max_s"] or y for r, y in zip(ok, ys, strict=True)]
        shade = 0.22 if bold else 0.10
        if len(ok) > 1:
            ax.fill_between(xs, lo, hi, color=colour, alpha=shade, lw=0, zorder=z - 1)
        ax.vlines(xs, lo, hi, color=colour, alpha=min(1.0, shade * 3), lw=lw * 0.6, zorder=z - 1)
    end = (xs[-1], ys[-1]) if ok else None
    for r in rows:
        if r["status"] == "ok":
            continue
        y = _failed_at(r, metric)
        ax.scatter(
            [r["paths"]],
            [y],
            marker=FAILED_MARKERS.get(r["status"], "D"),
            s=60 if bold else 30,
            color=colour,
            alpha=1.0 if bold else 0.6,
            edgecolors="black",
            linewidths=0.6,
            zorder=5,
        )
        if end is None or r["paths"] > end[0]:
            end = (r["paths"], y)
    if end is None:
        return None
    return (end[0], end[1], _short(framework, name), colour, bold)


@FuncFormatter
def compact(v: float, _=None) -> str:
    """N on a tick: 100, 3k, 10k, 1M."""
    for scale, unit in ((1e6, "M"), (1e3, "k")):
        if v >= scale:
            return f"{v / scale:g}{unit}"
    return f"{v:g}"


def _limits(values: list[float], pad: float = 0.08) -> tuple[float, float]:
    logs = np.log10([v for v in values if v and v > 0 and np.isfinite(v)] or [1.0])
    lo, hi = logs.min(), logs.max()
    span = max(hi - lo, 0.5)
    return 10 ** (lo - pad * span), 10 ** (hi + pad * span)


def _extent(rows: list[dict], metric: str) -> tuple[list[float], list[float]]:
    """Every x and y a panel draws: values, failures at their limit, warm min and max."""
    xs = [r["paths"] for r in rows]
    ys = [_value(r, metric) if r["status"] == "ok" else _failed_at(r, metric) for r in rows]
    if metric == "time":
        ys += [r[c] for r in rows for c in ("warm_min_s", "warm_max_s") if r[c]]
    else:  # the cap is always in view: it is what the memory figures are read against
        ys += [r["mem_cap"] / 2**20 for r in rows if r["mem_cap"]]
    return xs, ys


# The share of a panel's height a limit line's label needs under it: two lines of text, so that
# a label under one line and the label over the next line down both fit between them.
LIMIT_LABEL_ROOM = 0.12


def _panel(ax, df, framework, metric, strategies, dtype, allocator, emphasis, xlim, ylim):
    rows = records(_rows(df, framework, dtype, allocator))
    names = strategies or sorted({r["strategy"] for r in rows})
    # Muted lines first, so the strong ones are drawn over them.
    names = sorted(names, key=lambda n: strong(framework, n))
    anchors, failed = [], set()
    for name in names:
        series = [r for r in rows if r["strategy"] == name]
        failed |= {r["status"] for r in series if r["status"] != "ok"}
        anchor = _draw(ax, framework, name, series, metric, emphasis)
        if anchor:
            anchors.append(anchor)
    if metric == "time":
        read_line(ax, df, dtype, allocator)
    unit = "warm time (s)" if metric == "time" else "peak memory (MiB)"
    ax.set_title(
        f"{FRAMEWORK_NAMES.get(framework, framework)}: {unit}", loc="left", fontsize=TEXT_SIZE + 1.5
    )
    ax.tick_params(labelsize=TEXT_SIZE)
    if not anchors:
        ax.text(0.5, 0.5, "not measured in this profile", ha="center", transform=ax.transAxes)
        return failed, []
    xs, ys = _extent(rows + (read_rows(df, dtype, allocator) if metric == "time" else []), metric)
    ax.set_xlim(*(xlim or _limits(xs)))
    ax.set_ylim(*(ylim or _limits(ys)))
    log_axes(ax)
    ax.xaxis.set_major_formatter(compact)  # 1,000,000 and 100,000 would touch at this width
    ax.set_xlabel("paths N", fontsize=TEXT_SIZE)
    word = "timeout" if metric == "time" else "memory cap"
    lo, hi = ax.get_ylim()
    drawn = [r for r in rows if metric == "memory" or r["status"] != "ok"]
    limits = [
        x for x in sorted({_failed_at(r, metric) for r in drawn}) if np.isfinite(x) and lo < x < hi
    ]
    for k, limit in enumerate(limits):
        ax.axhline(limit, color="black", lw=0.7, ls=":", zorder=0)
        # Each line says its value where a panel has more than one (a 300 s and a 900 s
        # timeout), at the left, where the smallest N leave the top of a panel empty (the
        # failed cases' markers and their labels are at the right); under the line, or over
        # it where the next line down (or the panel's bottom) is too close for the label.
        text = f"{word} {limit_text(limit, metric)}" if len(limits) > 1 else word
        below = limits[k - 1] if k else lo
        under = np.log10(limit / below) >= LIMIT_LABEL_ROOM * np.log10(hi / lo)
        ax.annotate(
            text,
            (0.01, limit),
            xycoords=("axes fraction", "data"),
            fontsize=9,
            xytext=(0, -3 if under else 3),
            textcoords="offset points",
            va="top" if under else "bottom",
            ha="left",
        )
    # Placed by the caller once the figure's layout is final (the key below the panels and a
    # title shrink them, and the labels' spacing is computed from a panel's height).
    return failed, [a for a in anchors if a[4]] or anchors


def _legend(fig, key) -> None:
    """The families' and the markers' key, in two columns under the panels."""
    fig.legend(
        *key,
        loc="outside lower center",
        ncol=2,
        frameon=False,
        fontsize=TEXT_SIZE - 0.5,
        handlelength=1.6,
        columnspacing=1.2,
    )


def _key(failed: set, families: set, metric: str, emphasis: bool, read: bool = False):
    """The legend's handles and labels: families, line weights, the band, one read of the
    normals (where the panels drew it), failure markers."""
    handles = [Line2D([], [], color=FAMILIES[f], lw=2.2) for f in FAMILIES if f in families]
    labels = [f for f in FAMILIES if f in families]
    if emphasis:
        strong_line, weak_line = (
            {"color": "#444", "lw": 2.2},
            {"color": "#444", "lw": 1, "alpha": 0.55},
        )
        handles += [Line2D([], [], **strong_line), Line2D([], [], **weak_line)]
        labels += ["recommended, question", "the others"]
    if "no AD" in families:
        handles.append(Line2D([], [], color=FAMILIES["no AD"], lw=1.3, ls=":"))
        labels.append("simulation alone")
    if metric == "time":
        handles.append(Patch(color="#444", alpha=0.25, lw=0))
        labels.append("warm calls, min–max")
    if read:
        handles.append(Line2D([], [], **{k: v for k, v in READ_STYLE.items() if k != "zorder"}))
        labels.append(READ_LABEL)
    for status, word in FAILED_WORDS.items():
        if status in failed:
            mark = {"marker": FAILED_MARKERS[status], "markeredgecolor": "black"}
            handles.append(Line2D([], [], color="grey", ls="", **mark))
            labels.append(word)
    blank = 2 * len(families) - len(handles)  # families fill the first of two columns
    handles += [Line2D([], [], alpha=0)] * max(blank, 0)
    return handles, labels + [""] * max(blank, 0)


def scaling(
    df: pd.DataFrame,
    framework: str,
    metric: str = "time",
    strategies: list[str] | None = None,
    dtype: str = "float32",
    allocator: str = "glibc",
    ax=None,
    emphasis: bool = True,
):
    """Warm time (metric='time') or absolute peak memory ('memory') against N, log-log, for one
    framework: a line per strategy in its family's colour, labelled at its end (strong lines
    only when ``emphasis``), failed cases as markers at the timeout or cap. Returns the axes."""
    style()
    own = ax is None
    if own:
        _, ax = plt.subplots(figsize=(SCALING_WIDTH, PANEL_HEIGHT + 0.9))
    failed, labels = _panel(
        ax, df, framework, metric, strategies, dtype, allocator, emphasis, None, None
    )
    if own:
        names = strategies or sorted(set(_rows(df, framework, dtype, allocator)["strategy"]))
        families = {family(framework, n) for n in names}
        read = metric == "time" and bool(read_rows(df, dtype, allocator))
        _legend(ax.figure, _key(failed, families, metric, emphasis, read=read))
    place_labels(ax, labels, drop_first=FAMILIES["compiled"])
    return ax


def grid(count: int, extra_height: float = 1.4, share: bool = True):
    """A figure of count panels side by side in pairs (a 2 × 2 grid for four), on shared axes
    where share, each panel as wide and tall as a figure of its own; extra_height is room for a
    key below. Returns the figure and its panels, one per count (a panel left over is removed,
    and the one above it shows its N axis)."""
    cols = 2 if count > 1 else 1
    rows = -(-max(count, 1) // cols)
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(SCALING_WIDTH * cols, PANEL_HEIGHT * rows + extra_height),
        sharex=share,
        sharey=share,
        squeeze=False,
    )
    flat = list(axes.ravel())
    for ax in flat[max(count, 1) :]:
        fig.delaxes(ax)
    panels = flat[: max(count, 1)]
    for k, ax in enumerate(panels):
        if share and k + cols < len(panels):  # a panel under it shows the N axis
            ax.xaxis.set_tick_params(labelbottom=False)
        else:
            ax.xaxis.set_tick_params(labelbottom=True)
    return fig, panels


def scaling_grid(
    df: pd.DataFrame,
    metric: str = "time",
    frameworks=None,
    dtype: str = "float32",
    allocator: str = "glibc",
    title: str | None = None,
):
    """One panel per framework, side by side in a 2 × 2 grid (for four) at page width, on shared
    axes, with one key below (and a title above, if given)."""
    style()
    frameworks = [
        f for f in (frameworks or registry.FRAMEWORKS) if len(_rows(df, f, dtype, allocator))
    ]
    rows = [r for f in frameworks for r in records(_rows(df, f, dtype, allocator))]
    read = read_rows(df, dtype, allocator) if metric == "time" else []
    xs, ys = _extent(rows + read, metric)
    xlim, ylim = _limits(xs), _limits(ys)
    fig, axes = grid(len(frameworks))
    failed, families, labels = set(), set(), []
    if not frameworks:
        axes[0].text(0.5, 0.5, "not measured in this profile", ha="center")
    for k, (ax, fw) in enumerate(zip(axes, frameworks, strict=False)):
        seen, anchors = _panel(ax, df, fw, metric, None, dtype, allocator, True, xlim, ylim)
        if k + 2 < len(frameworks):  # the panel under it names the axis
            ax.set_xlabel("")
        failed |= seen
        labels.append((ax, anchors))
        families |= {family(fw, n) for n in {r["strategy"] for r in rows if r["framework"] == fw}}
    _legend(fig, _key(failed, families, metric, True, read=bool(read)))
    if title:
        fig.suptitle(title, fontsize=TEXT_SIZE)
    for ax, anchors in labels:
        place_labels(ax, anchors, drop_first=FAMILIES["compiled"])
    return fig
