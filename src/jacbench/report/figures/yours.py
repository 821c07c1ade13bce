"""The figures of "Your function": one advice's time and peak against n with each fit carried to
the target, and a series' warm times against the number of inputs."""

from __future__ import annotations

import numpy as np

from jacbench.report.advice import Fitted
from jacbench.report.figures.style import (
    FAILED_MARKERS,
    FAILED_WORDS,
    WIDTH,
    failure_legend,
    log_axes,
    plt,
    strategy_colours,
    style,
)

MIB = 2**20
# What the advice's status words are called in the figure's key (its own, beside the book's).
STATUS_MARKER = {"wrong": "P", "refused": "s", **FAILED_MARKERS}
STATUS_WORD = {"wrong": "wrong answer", "refused": "refused", **FAILED_WORDS}


def _fit_line(ax, fit: Fitted, lo: float, hi: float, colour, scale: float = 1.0, **kw) -> None:
    ns = np.geomspace(lo, hi, 30)
    values = fit.fixed + fit.scale * ns**fit.exponent
    ax.plot(ns, values / scale, ls="--", lw=1, color=colour, **kw)


def scaling(adv):
    """Warm time (left) and peak beyond the inputs (right) against n: the measured sizes as
    points, each passed strategy's fit dashed up to the target, the pick drawn thicker, the pick
    measured at the target as a star, and each failure marked at its size along the top."""
    style()
    fig, (t_ax, m_ax) = plt.subplots(1, 2, figsize=(WIDTH, 3.6))
    names = [s.name for s in adv.strategies]
    colours = strategy_colours(names)
    lo, hi = min(adv.sizes), max(adv.target, max(adv.sizes))
    failed_seen = set()
    for s in adv.strategies:
        c, picked = colours[s.name], s.name == adv.picked
        ok = s.ok_rows
        if s.status == "ok" and ok:
            lw = 2.5 if picked else 1.2
            label = s.name + (" (pick)" if picked else "")
            ns = [r.n for r in ok]
            t_ax.plot(ns, [r.warm_median_s for r in ok], "o-", ms=4, lw=lw, color=c, label=label)
            m_ax.plot(ns, [r.peak_bytes / MIB for r in ok], "o-", ms=4, lw=lw, color=c)
            fits = s.fits or {}
            if "warm" in fits:
                _fit_line(t_ax, fits["warm"], max(ns), hi, c)
                _fit_line(m_ax, fits["peak"], max(ns), hi, c, scale=MIB)
        else:
            where = s.rows[-1].n if s.rows else lo
            marker = STATUS_MARKER.get(s.status, "D")
            failed_seen.add((s.name, STATUS_WORD.get(s.status, s.status)))
            t_ax.plot(
                [where],
                [1.0],
                marker=marker,
                color=c,
                ls="",
                ms=7,
                transform=t_ax.get_xaxis_transform(),
                clip_on=False,
                label=s.name,
            )
    measured = adv.measured_at_target
    if measured:
        t_ax.plot(
            [measured.n],
            [measured.warm_median_s],
            "*",
            ms=12,
            color="black",
            label=f"{adv.picked} measured at {measured.n:,}",
        )
        m_ax.plot([measured.n], [measured.peak_bytes / MIB], "*", ms=12, color="black")
    for ax in (t_ax, m_ax):
        ax.axvline(adv.target, color="grey", lw=0.8, ls=":")
        log_axes(ax)
        ax.set_xlabel("n (size of the example)")
    t_ax.set_ylabel("warm call (s)")
    m_ax.set_ylabel("peak beyond the inputs (MiB)")
    t_ax.set_title("time: measured, then fitted (dashed)")
    m_ax.set_title("memory: measured, then fitted (dashed)")
    failure_legend(t_ax, failed_seen, outside=False)
    handles, labels = t_ax.get_legend_handles_labels()
    t_ax.get_legend().remove()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, frameon=False)
    return fig


def series(ser, modes_of: dict[str, str]):
    """Warm time at the series' size against the number of inputs, one line per strategy
    (colour by strategy, line style by mode), each run's pick circled."""
    style()
    frame = ser.frame()
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8))
    # A strategy measured at the series' size in one run alone draws no line: left out.
    counts = frame[frame["warm_s"].notna()].groupby("strategy").size()
    names = [n for n in dict.fromkeys(frame["strategy"]) if counts.get(n, 0) >= 2]
    colours = strategy_colours(names)
    dashes = {"forward": "-", "reverse": ":", "pathwise": "--"}
    for name in names:
        rows = frame[(frame["strategy"] == name) & frame["warm_s"].notna()]
        if rows.empty:
            continue
        ax.plot(
            rows["inputs"],
            rows["warm_s"],
            marker="o",
            ms=4,
            color=colours[name],
            ls=dashes.get(modes_of[name], "-"),
            label=f"{name} ({modes_of[name]})",
        )
        picked = rows[rows["picked"]]
        ax.plot(picked["inputs"], picked["warm_s"], "o", ms=11, mfc="none", color="black")
    ax.plot([], [], "o", ms=11, mfc="none", color="black", label="the pick")
    log_axes(ax)
    ax.set_xlabel("inputs d (spots and vols)")
    ax.set_ylabel(f"warm call at n = {ser.n:,} (s)")
    fig.legend(loc="outside right upper", frameon=False)
    return fig
