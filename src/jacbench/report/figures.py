"""Every figure of the book, in one style: readable at page width, units on axes, log scales
where data spans decades, and failed cases drawn as marked points at the cap, never dropped."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES  # noqa: E402
from jacbench.measure.targets import parse  # noqa: E402
from jacbench.report.data import records  # noqa: E402
from jacbench.report.queries import loglog_slope, where  # noqa: E402
from jacbench.strategies import registry  # noqa: E402

WIDTH = 7.0  # inches: a page-width figure in the book theme
FAILED_MARKERS = {"memory-cap": "X", "timeout": "v", "skipped-predicted": "s", "error": "D"}
FAILED_WORDS = {
    "memory-cap": "killed at memory cap",
    "timeout": "timed out",
    "skipped-predicted": "skipped: predicted above cap",
    "error": "error",
}
FRAMEWORK_COLOURS = {"torch": "#d62728", "tensorflow": "#ff7f0e", "jax": "#1f77b4", "numpy": "#555"}
MODE_STYLES = {"forward": "-", "reverse": "--", "none": ":"}


def style() -> None:
    """The book's matplotlib style."""
    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 110,
            "figure.figsize": (WIDTH, 4.2),
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 8,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "figure.constrained_layout.use": True,
        }
    )


def log_axes(ax, x: bool = True, y: bool = True) -> None:
    """Log scales labelled with plain numbers; 1-2-5 or 1-3 ticks on an axis spanning few decades.

    Decades alone leave an axis of two decades with three labels; 1-2-5 ticks there crowd the
    wide labels at the top (50,000 and 100,000 touch in a panel beside its legend).
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    plain = FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    if x:
        ax.set_xscale("log")
    if y:
        ax.set_yscale("log")
    for on, axis, lim in ((x, ax.xaxis, ax.get_xlim), (y, ax.yaxis, ax.get_ylim)):
        if not on:
            continue
        lo, hi = lim()
        if lo > 0 and hi / lo < 10**1.5:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        elif lo > 0 and hi / lo < 10**2.5:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 3.0)))
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(NullFormatter())


def _label(row: dict) -> str:
    return f"{row['framework']}/{row['strategy']}"


def _gbm(df: pd.DataFrame, **conditions) -> list[dict]:
    """GBM Jacobian rows (strategies and simulations) as records, by framework, strategy, N."""
    rows = where(df, **{"problem": "gbm", "target": ("strategy", "simulation"), **conditions})
    return records(rows.sort_values(["framework", "strategy", "paths"]))


def _series(df: pd.DataFrame, framework: str, strategy: str, **conditions) -> list[dict]:
    return _gbm(df, framework=framework, strategy=strategy, **conditions)


def _mib(row: dict) -> float:
    return row["peak"] / 2**20 if row.get("peak") is not None else np.nan


def _strategy_colours(names: list[str]) -> dict[str, tuple]:
    cmap = plt.get_cmap("tab20")
    return {n: cmap(i % 20) for i, n in enumerate(names)}


def scaling(
    df: pd.DataFrame,
    framework: str,
    metric: str = "time",
    strategies: list[str] | None = None,
    dtype: str = "float32",
    allocator: str = "glibc",
    ax=None,
    fit_from: int = 1000,
    legend_outside: bool = True,
):
    """Warm time (metric='time') or absolute peak memory ('memory') against N, log-log.

    Each strategy is a line with its fitted log-log slope (from N >= fit_from) in the legend;
    a failed case is a marker at the cap (memory) or at the timeout (time).
    """
    style()
    if ax is None:
        _, ax = plt.subplots()
    names = strategies or sorted(
        {r["strategy"] for r in _gbm(df, framework=framework, dtype=dtype, allocator=allocator)}
    )
    colours = _strategy_colours(names)
    failed_seen = set()
    drawn = False
    for name in names:
        rows = _series(df, framework, name, dtype=dtype, allocator=allocator)
        ok = [r for r in rows if r["status"] == "ok"]
        bad = [r for r in rows if r["status"] != "ok"]
        if not rows:
            continue
        drawn = True
        mode = registry.get(framework, name).mode if ":" not in name else "none"
        xs = [r["paths"] for r in ok]
        ys = [r["warm_median_s"] if metric == "time" else _mib(r) for r in ok]
        fit = [(x, y) for x, y in zip(xs, ys, strict=True) if x >= fit_from]
        slope = loglog_slope([p[0] for p in fit], [p[1] for p in fit])
        label = name + (f" (slope {slope:.2f})" if slope is not None else "")
        if ok:
            ax.plot(xs, ys, MODE_STYLES[mode], marker="o", ms=4, color=colours[name], label=label)
        for r in bad:
            y = (r["timeout"] if metric == "time" else r["mem_cap"] / 2**20) or np.nan
            marker = FAILED_MARKERS.get(r["status"], "D")
            word = FAILED_WORDS.get(r["status"], r["status"])
            first = (name, word) not in failed_seen and not ok
            ax.scatter([r["paths"]], [y], marker=marker, s=60, color=colours[name], zorder=5,
                       edgecolors="black", linewidths=0.6,
                       label=f"{name}: {word}" if first else None)  # fmt: skip
            failed_seen.add((name, word))
    if not drawn:
        ax.text(0.5, 0.5, "not measured in this profile", ha="center", transform=ax.transAxes)
    log_axes(ax)
    ax.set_xlabel("paths N")
    if metric == "time":
        ax.set_ylabel("warm median time (s)")
    else:
        ax.set_ylabel("peak resident memory (MiB)")
        caps = {r["mem_cap"] for r in _gbm(df, framework=framework) if r["mem_cap"]}
        for cap in caps:
            ax.axhline(cap / 2**20, color="black", lw=0.8, ls=":", zorder=0)
            ax.annotate("memory cap", (ax.get_xlim()[0], cap / 2**20), fontsize=8,
                        xytext=(4, 3), textcoords="offset points")  # fmt: skip
    _failure_legend(ax, failed_seen, legend_outside)
    ax.set_title(f"{framework}: {'time' if metric == 'time' else 'peak memory'} against N")
    return ax


def _failure_legend(ax, failed_seen, outside: bool = True) -> None:
    handles, labels = ax.get_legend_handles_labels()
    words = sorted({w for _, w in failed_seen})
    for status, word in FAILED_WORDS.items():
        if word in words:
            handles.append(
                plt.Line2D(
                    [],
                    [],
                    marker=FAILED_MARKERS[status],
                    color="grey",
                    ls="",
                    markeredgecolor="black",
                )  # fmt: skip
            )
            labels.append(word)
    if outside:
        ax.legend(handles, labels, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    else:
        ax.legend(handles, labels, loc="upper left", frameon=False)


def scaling_grid(df: pd.DataFrame, metric: str = "time", frameworks=None, **kw):
    """One panel per framework, stacked so each stays readable at page width."""
    style()
    frameworks = frameworks or [f for f in registry.FRAMEWORKS if _gbm(df, framework=f)]
    fig, axes = plt.subplots(len(frameworks), 1, figsize=(WIDTH, 3.6 * len(frameworks)))
    axes = np.atleast_1d(axes)
    for ax, fw in zip(axes, frameworks, strict=True):
        scaling(df, fw, metric=metric, ax=ax, **kw)
    return fig


def memory_vs_model(df: pd.DataFrame, keys: list[tuple[str, str]], dtype: str = "float32"):
    """Measured absolute peak against the memory model's prediction, per strategy and N."""
    style()
    fig, ax = plt.subplots()
    colours = _strategy_colours([f"{f}/{n}" for f, n in keys])
    lo, hi = np.inf, 0.0
    for fw, name in keys:
        rows = _gbm(df, framework=fw, strategy=name, dtype=dtype, allocator="glibc")
        model = registry.get(fw, name).memory
        for r in rows:
            pred = model.peak(fw, r["paths"], r["steps"], dtype, r["chunk_size"]) / 2**20
            if r["status"] == "ok":
                meas = _mib(r)
                ax.scatter([pred], [meas], color=colours[f"{fw}/{name}"], s=25)
            else:
                meas = (r["mem_cap"] or 0) / 2**20
                ax.scatter([pred], [meas], marker=FAILED_MARKERS.get(r["status"], "D"),
                           color=colours[f"{fw}/{name}"], s=60, edgecolors="black")  # fmt: skip
            lo, hi = min(lo, pred, meas), max(hi, pred, meas)
        ax.scatter([], [], color=colours[f"{fw}/{name}"], label=f"{fw}/{name}")
    if hi > 0:
        line = np.array([lo / 1.5, hi * 1.5])
        ax.plot(line, line, color="black", lw=0.8, label="prediction = measurement")
        ax.fill_between(line, line / 2, line * 2, color="grey", alpha=0.15, label="within 2×")
        log_axes(ax)
    else:
        ax.text(0.5, 0.5, "not measured in this profile", ha="center", transform=ax.transAxes)
    ax.set_xlabel("predicted peak (MiB)")
    ax.set_ylabel("measured peak (MiB); failed cases at the cap")
    ax.set_title("Memory model against measurement")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


def cold_warm(df: pd.DataFrame, paths: int, dtype: str = "float32"):
    """Cold (first call, tracing and compilation) and warm time per strategy at one N."""
    style()
    rows = _gbm(df, paths=paths, dtype=dtype, allocator="glibc", status="ok", target="strategy")
    rows.sort(key=lambda r: r["warm_median_s"])
    fig, ax = plt.subplots(figsize=(WIDTH, 0.22 * len(rows) + 1.2))
    y = np.arange(len(rows))
    ax.barh(y - 0.2, [r["cold_s"] for r in rows], height=0.4, label="cold (first call)",
            color="#bbb")  # fmt: skip
    ax.barh(y + 0.2, [r["warm_median_s"] for r in rows], height=0.4, label="warm (median)",
            color=[FRAMEWORK_COLOURS[r["framework"]] for r in rows])  # fmt: skip
    ax.set_yticks(y, [_label(r) for r in rows], fontsize=7)
    ax.set_xlabel("time (s)")
    ax.set_title(f"Cold and warm time at N = {paths:,}")
    if not rows:
        ax.text(0.5, 0.5, "not measured in this profile", ha="center", transform=ax.transAxes)
        return fig
    log_axes(ax, y=False)
    ax.legend(loc="lower right")
    return fig


def allocator_effect(df: pd.DataFrame, strategies: list[tuple[str, str]], paths: int):
    """Peak memory and warm time of looping strategies under each allocator."""
    style()
    allocs = ["glibc", "glibc-mmap", "jemalloc"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(WIDTH, 3.2))
    width = 0.8 / len(allocs)
    for i, alloc in enumerate(allocs):
        mems, times = [], []
        for fw, name in strategies:
            found = _gbm(df, framework=fw, strategy=name, paths=paths, allocator=alloc, status="ok")
            r = found[0] if found else None
            mems.append(_mib(r) if r else np.nan)
            times.append(r["warm_median_s"] if r else np.nan)
        x = np.arange(len(strategies)) + (i - 1) * width
        a1.bar(x, mems, width, label=alloc)
        a2.bar(x, times, width, label=alloc)
    labels = [f"{fw}/{n}" for fw, n in strategies]
    for ax in (a1, a2):
        ax.set_xticks(np.arange(len(strategies)), labels, rotation=20, ha="right", fontsize=8)
    a1.set_ylabel("peak resident memory (MiB)")
    a2.set_ylabel("warm median time (s)")
    a1.legend(title="allocator", frameon=False)
    fig.suptitle(f"The allocator as a factor, N = {paths:,}")
    return fig


def tradeoff(df: pd.DataFrame, paths: int, dtype: str = "float32"):
    """Warm time against memory beyond the inputs for every strategy at one N."""
    style()
    fig, ax = plt.subplots()
    rows = _gbm(df, paths=paths, dtype=dtype, allocator="glibc", status="ok", target="strategy")
    for r in rows:
        mode = registry.get(r["framework"], r["strategy"]).mode
        marker = {"forward": "^", "reverse": "o", "none": "s"}[mode]
        x, y = max(r["peak_over_inputs"] or 0, 2**20) / 2**20, r["warm_median_s"]
        ax.scatter([x], [y], marker=marker, color=FRAMEWORK_COLOURS[r["framework"]], s=30)
        ax.annotate(r["strategy"], (x, y), fontsize=6, xytext=(3, 2), textcoords="offset points")
    for fw, colour in FRAMEWORK_COLOURS.items():
        ax.scatter([], [], color=colour, label=fw)
    for mode, marker in (("forward", "^"), ("reverse", "o"), ("none", "s")):
        ax.scatter([], [], marker=marker, color="grey", label=f"{mode} mode")
    if rows:
        log_axes(ax)
    else:
        ax.text(0.5, 0.5, "not measured in this profile", ha="center", transform=ax.transAxes)
    ax.set_xlabel("peak memory beyond the inputs (MiB)")
    ax.set_ylabel("warm median time (s)")
    ax.set_title(f"Time against memory, every strategy at N = {paths:,}")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


# --- the wide chapter: moments Jacobians, Hessians, the tall-to-wide crossover ----------------


def wide_scaling(rows_of, title: str, frameworks=AD_FRAMEWORKS,
                 reference: list[dict] | None = None):  # fmt: skip
    """Warm time against n, one panel per framework, for the rows ``rows_of(framework)``
    returns (all sizes of one kind of method); failures drawn at the timeout or, when skipped
    on the model's prediction, at the top of the panel. ``reference`` rows (the closed form)
    are a dotted black line in every panel."""
    style()
    fig, axes = plt.subplots(len(frameworks), 1, figsize=(WIDTH, 3.0 * len(frameworks)),
                             sharex=True)  # fmt: skip
    for ax, fw in zip(np.atleast_1d(axes), frameworks, strict=True):
        rows = rows_of(fw)
        names = sorted({r["strategy"] for r in rows})
        colours = _strategy_colours(names)
        failed_seen = set()
        top = max((r["warm_median_s"] for r in rows if r["status"] == "ok"), default=1.0)
        for name in names:
            series = [r for r in rows if r["strategy"] == name]
            ok = [r for r in series if r["status"] == "ok"]
            short = parse(fw, name).name
            if ok:
                ax.plot([r["inputs"] for r in ok], [r["warm_median_s"] for r in ok], marker="o",
                        ms=4, color=colours[name], label=short)  # fmt: skip
            for r in series:
                if r["status"] == "ok":
                    continue
                word = FAILED_WORDS.get(r["status"], r["status"])
                first = (name, word) not in failed_seen and not ok
                ax.scatter([r["inputs"]], [r["timeout"] if r["status"] == "timeout" else top],
                           marker=FAILED_MARKERS.get(r["status"], "D"), s=60, zorder=5,
                           color=colours[name], edgecolors="black", linewidths=0.6,
                           label=f"{short}: {word}" if first else None)  # fmt: skip
                failed_seen.add((name, word))
        ax.set_title(f"{FRAMEWORK_NAMES[fw]}: {title}")
        if not rows:
            ax.text(0.5, 0.5, "not measured in this profile", ha="center", transform=ax.transAxes)
            continue
        ref = [r for r in reference or [] if r["status"] == "ok"]
        if ref:
            ax.plot([r["inputs"] for r in ref], [r["warm_median_s"] for r in ref], ":",
                    color="black", marker=".", label="closed form (numpy)")  # fmt: skip
        log_axes(ax)
        ax.set_ylabel("warm median time (s)")
        _failure_legend(ax, failed_seen, outside=True)
    np.atleast_1d(axes)[-1].set_xlabel("inputs n")
    return fig


def crossover(rows: list[dict], aspects: dict[str, float | None]):
    """Forward over reverse Jacobian time against the aspect m / n (tall on the left): above
    1, reverse mode is faster; the dashed line marks each framework's crossover."""
    style()
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
