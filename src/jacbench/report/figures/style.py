"""The book's figure style, shared by every figure module: matplotlib without a display,
sizes and fonts readable at page width, log axes labelled with plain numbers, and how a failed
case is marked."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402, F401 - the figure modules draw with this pyplot

WIDTH = 7.0  # inches: a page-width figure in the book theme
FRAMEWORK_COLOURS = {"torch": "#d62728", "tensorflow": "#ff7f0e", "jax": "#1f77b4", "numpy": "#555"}
FAILED_MARKERS = {"memory-cap": "X", "timeout": "v", "skipped-predicted": "s", "error": "D"}
FAILED_WORDS = {
    "memory-cap": "killed at memory cap",
    "timeout": "timed out",
    "skipped-predicted": "skipped: predicted above cap",
    "error": "error",
}


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


def strategy_colours(names: list[str]) -> dict[str, tuple]:
    """One colour of tab20 per name, in order."""
    cmap = plt.get_cmap("tab20")
    return {n: cmap(i % 20) for i, n in enumerate(names)}


def failure_legend(ax, failed_seen, outside: bool = True) -> None:
    """The axes' legend with one marker per kind of failure drawn ((name, word) pairs)."""
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
                )
            )
            labels.append(word)
    if outside:
        ax.legend(handles, labels, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    else:
        ax.legend(handles, labels, loc="upper left", frameon=False)
