"""The GBM chapters' figures beside the scaling panels: the memory model against measurement,
cold against warm, the allocator as a factor, time against memory, and the path-blocked
strategies beside the ones they block."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from jacbench.constants import AD_FRAMEWORKS, ALLOCATORS, FRAMEWORK_NAMES
from jacbench.measure.targets import SimulationTarget
from jacbench.report.data import records
from jacbench.report.figures.panels import FAMILIES, TEXT_SIZE, family, grid, scaling
from jacbench.report.figures.style import (
    FAILED_MARKERS,
    FRAMEWORK_COLOURS,
    WIDTH,
    log_axes,
    plt,
    strategy_colours,
    style,
)
from jacbench.report.queries import where, without_draws
from jacbench.strategies import registry

TALLEST = 7.8
LABEL_BOX = {"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none", "alpha": 0.75}


def _label(row: dict) -> str:
    return f"{row['framework']}/{row['strategy']}"


def _gbm(df: pd.DataFrame, **conditions) -> list[dict]:
    """GBM Jacobian rows (strategies and simulations) of the whole-array form as records, by
    framework, strategy, N."""
    given = {"problem": "gbm", "target": ("strategy", "simulation"), "form": "array"}
    rows = where(df, **{**given, **conditions})
    return records(without_draws(rows).sort_values(["framework", "strategy", "paths"]))


def _mib(row: dict) -> float:
    return row["peak"] / 2**20 if row.get("peak") is not None else np.nan


def memory_vs_model(df: pd.DataFrame, keys: list[tuple[str, str]], dtype: str = "float32"):
    """Measured absolute peak against the memory model's prediction, per strategy and N."""
    style()
    fig, ax = plt.subplots()
    colours = strategy_colours([f"{f}/{n}" for f, n in keys])
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
                ax.scatter(
                    [pred],
                    [meas],
                    marker=FAILED_MARKERS.get(r["status"], "D"),
                    color=colours[f"{fw}/{name}"],
                    s=60,
                    edgecolors="black",
                )
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
    # A bar pair per strategy, closer together where many would make the figure taller than a
    # screen (TALLEST inches, about 860 px at the book's 110 dpi).
    fig, ax = plt.subplots(figsize=(WIDTH, min(0.22 * len(rows) + 1.2, TALLEST)))
    y = np.arange(len(rows))
    ax.barh(
        y - 0.2, [r["cold_s"] for r in rows], height=0.4, label="cold (first call)", color="#bbb"
    )
    ax.barh(
        y + 0.2,
        [r["warm_median_s"] for r in rows],
        height=0.4,
        label="warm (median)",
        color=[FRAMEWORK_COLOURS[r["framework"]] for r in rows],
    )
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
    allocs = ALLOCATORS
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


def _front(points: list[tuple[float, float, str]]) -> set[str]:
    """The names no other point beats on both axes (less memory and less time)."""
    return {
        n for x, y, n in points
        if not any(x2 <= x and y2 <= y and (x2, y2) != (x, y) for x2, y2, _ in points)
    }  # fmt: skip


def _label_front(ax, points: list[tuple[float, float, str]], colour: str = "#333") -> None:
    """Each point's name to its right, stepped down where it would meet the label above it."""
    ax.figure.draw_without_rendering()
    placed: list[tuple[float, float]] = []  # display x, y of each label so far
    for x, y, name in sorted(points, key=lambda p: -p[1]):
        px, py = ax.transData.transform((x, y))
        drop = 0.0
        while any(abs(px - qx) < 90 and abs(py - drop - qy) < 11 for qx, qy in placed):
            drop += 11
        placed.append((px, py - drop))
        ax.annotate(
            name,
            (x, y),
            xytext=(5, 2 - drop * 72 / ax.figure.dpi),
            textcoords="offset points",
            fontsize=8.5,
            color=colour,
            va="center",
            arrowprops={"arrowstyle": "-", "lw": 0.5, "color": colour} if drop else None,
            bbox=LABEL_BOX,
        )


def tradeoff(df: pd.DataFrame, paths: int, dtype: str = "float32"):
    """Warm time against memory beyond the inputs for every strategy at one N: one panel per
    framework, colour the strategy's family (as in every chapter), marker its mode; labelled,
    the strategies no other of the panel beats on both time and memory."""
    style()
    rows = _gbm(df, paths=paths, dtype=dtype, allocator="glibc", status="ok", target="strategy")
    frameworks = [f for f in (*AD_FRAMEWORKS, "numpy") if any(r["framework"] == f for r in rows)]
    fig, axes = grid(max(len(frameworks), 1), extra_height=0.9)
    families, markers = set(), {"forward": "^", "reverse": "o", "none": "s"}
    anchors = []
    for ax, fw in zip(axes, frameworks, strict=False):
        points = []
        for r in (r for r in rows if r["framework"] == fw):
            x, y = max(r["peak_over_inputs"] or 0, 2**20) / 2**20, r["warm_median_s"]
            kind = family(fw, r["strategy"])
            families.add(kind)
            marker = markers[registry.get(fw, r["strategy"]).mode]
            ax.scatter([x], [y], marker=marker, color=FAMILIES[kind], s=34, zorder=3)
            points.append((x, y, r["strategy"]))
        best = _front(points)
        anchors.append((ax, [p for p in points if p[2] in best]))
        log_axes(ax)
        ax.set_title(FRAMEWORK_NAMES[fw], fontsize=TEXT_SIZE)
        ax.set_xlabel("memory beyond the inputs (MiB)")
        ax.set_ylabel("warm median (s)")
    if not frameworks:
        axes[0].text(0.5, 0.5, "not measured in this profile", ha="center")
    labels = [f for f in FAMILIES if f in families]
    handles = [
        Line2D([], [], color=FAMILIES[f], marker="s" if f == "no AD" else "o", ls="")
        for f in labels
    ]
    for mode in ("forward", "reverse"):
        handles.append(Line2D([], [], color="grey", marker=markers[mode], ls=""))
        labels.append(f"{mode} mode")
    fig.legend(handles, labels, loc="outside lower center", ncol=4, frameon=False,
               fontsize=TEXT_SIZE - 1.5)  # fmt: skip
    fig.suptitle(f"Time against memory, every strategy at N = {paths:,}", fontsize=TEXT_SIZE)
    for ax, points in anchors:
        _label_front(ax, points)
    return fig


def _blocked_names(framework: str) -> list[str]:
    """What the blocked figure draws for a framework: each blocked strategy and the one it
    blocks, and the blocked simulation."""
    pairs = registry.blocked_pairs(framework)
    drawn = [n for pair in pairs for n in pair]
    executions = {registry.get(framework, b).execution for b, _ in pairs}
    return drawn + [SimulationTarget(framework, e).text for e in sorted(executions)]


def blocked(df: pd.DataFrame, metric: str = "time", frameworks=AD_FRAMEWORKS):
    """Warm time or peak memory against N, one panel per framework side by side in pairs: the
    blocked strategies, the ones they block and the blocked simulation, every line labelled at
    its end."""
    style()
    frameworks = [f for f in frameworks if registry.blocked_pairs(f)]
    # Each panel keeps its own axes: the frameworks' blocked strategies reach different N.
    fig, axes = grid(len(frameworks), extra_height=0.4, share=False)
    for ax, fw in zip(axes, frameworks, strict=False):
        scaling(df, fw, metric, strategies=_blocked_names(fw), ax=ax, emphasis=False)
    return fig
