"""Every figure of the book, in one style (``figure_style``): readable at page width, units on
axes, log scales where data spans decades, and failed cases drawn as marked points at the cap,
never dropped. The GBM scaling figures (time and memory against N, strategy families) and the
price of compilation are in ``figures_scaling``, re-exported here with the other figures."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.measure import profiles
from jacbench.measure.targets import parse
from jacbench.report.data import records
from jacbench.report.figure_style import (  # noqa: F401 - figures.style() etc., as before
    FAILED_MARKERS,
    FAILED_WORDS,
    WIDTH,
    log_axes,
    plt,
    style,
)

# The GBM chapter's scaling figures, strategy families and the price of compilation live in
# their own module; the book reaches them here like every other figure.
from jacbench.report.figures_scaling import (  # noqa: F401
    FAMILIES,
    RECOMMENDED,
    break_even,
    compile_prices,
    compiled_variants,
    eager_counterpart,
    family,
    scaling,
    scaling_grid,
    strong,
)
from jacbench.report.queries import where
from jacbench.strategies import registry

FRAMEWORK_COLOURS = {"torch": "#d62728", "tensorflow": "#ff7f0e", "jax": "#1f77b4", "numpy": "#555"}


# --- the captions of the GBM figures --------------------------------------------------------------


@functools.cache
def _profile_cases(name: str) -> tuple:
    return tuple(profiles.expand(profiles.load_profile(name)))


def profile_of(df: pd.DataFrame) -> str:
    """Which shipped profile the rows are a sweep of, recognised by their cases' keys (a book
    stages its results under a name of its own): 'the quick profile', 'part of the quick
    profile (49 of its 98 cases)', or the results file's name when no profile matches."""
    keys = set(df["key"].dropna())
    envs = set(df["env"].dropna())
    best = None
    for name in profiles.profile_names():
        cases = {c.key(env) for c in _profile_cases(name) for env in envs}
        found = len(cases & keys) // max(len(envs), 1)
        total = len(_profile_cases(name))
        if found and (best is None or (found == total, found) > (best[1] == best[2], best[1])):
            best = (name, found, total)
    if best is None:
        return f"results file {Path(str(df.attrs.get('path', 'results.csv'))).name}"
    name, found, total = best
    return f"the {name} profile" + ("" if found == total else f" ({found} of its {total} cases)")


def caption_conditions(df: pd.DataFrame, dtype: str = "float32", allocator: str = "glibc") -> str:
    """The conditions of the scaling figures as a phrase for their captions: the profile, M,
    dtype, threads per worker, the allocator and the GBM parameters, read from the rows."""
    rows = where(df, problem="gbm", dtype=dtype, allocator=allocator)

    def values(column, fmt="{:g}"):
        found = sorted({float(v) for v in rows[column].dropna()})
        return "/".join(fmt.format(v) for v in found) or "–"

    threads = values("threads", "{:.0f}")
    return (f"{profile_of(df)}; M = {values('steps', '{:.0f}')} steps, {dtype}, {threads} "
            f"thread{'' if threads == '1' else 's'} per worker, {allocator} allocator; "
            f"S0 = {values('spot')}, σ = {values('vol')}, r = {values('drift')}, "
            f"T = {values('maturity')}")  # fmt: skip


def _label(row: dict) -> str:
    return f"{row['framework']}/{row['strategy']}"


def _gbm(df: pd.DataFrame, **conditions) -> list[dict]:
    """GBM Jacobian rows (strategies and simulations) as records, by framework, strategy, N."""
    rows = where(df, **{"problem": "gbm", "target": ("strategy", "simulation"), **conditions})
    return records(rows.sort_values(["framework", "strategy", "paths"]))


def _mib(row: dict) -> float:
    return row["peak"] / 2**20 if row.get("peak") is not None else np.nan


def _strategy_colours(names: list[str]) -> dict[str, tuple]:
    cmap = plt.get_cmap("tab20")
    return {n: cmap(i % 20) for i, n in enumerate(names)}


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
