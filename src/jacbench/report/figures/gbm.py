"""The GBM chapters' figures beside the scaling panels: the memory model against measurement,
cold against warm, the allocator as a factor, time against memory, and the path-blocked
strategies beside the ones they block."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, ALLOCATORS
from jacbench.measure.targets import SimulationTarget
from jacbench.report.data import records
from jacbench.report.figures.panels import grid, scaling
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
