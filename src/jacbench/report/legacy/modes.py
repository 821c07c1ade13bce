"""Forward and reverse mode (chapter 2): the teaching example's error against the closed form,
and each framework's forward mode against its vectorized reverse mode, measured, with the
ratio of the two against the count of passes (N VJPs over two JVPs)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.report import formats, queries

COLUMNS = ["framework", "forward", "reverse", "forward_s", "reverse_s", "forward_peak",
           "reverse_peak", "ratio"]  # fmt: skip


def relative_error(x, reference) -> float:
    """The largest relative error of x against a reference, element by element:
    max |x - reference| / |reference|."""
    x, reference = np.asarray(x, dtype=float), np.asarray(reference, dtype=float)
    return float(np.max(np.abs(x - reference) / np.abs(reference)))


def forward_against_reverse(
    df: pd.DataFrame, pairs: dict[str, tuple[str, str]], paths: int
) -> pd.DataFrame:
    """One row per framework of pairs {framework: (forward, reverse)} at N = paths: both
    strategies' warm times and peaks beyond the inputs where they ran correctly (NaN where
    not), and the reverse time over the forward (NaN unless both ran)."""
    ok = queries.gbm(df, paths=paths, status="ok")
    rows = []
    for fw, (fwd, rev) in pairs.items():
        a = queries.one(ok, framework=fw, strategy=fwd)
        b = queries.one(ok, framework=fw, strategy=rev)
        fwd_s, rev_s = queries.value(a, "warm_median_s"), queries.value(b, "warm_median_s")
        ratio = rev_s / fwd_s if fwd_s is not None and rev_s is not None and fwd_s > 0 else None
        rows.append({
            "framework": fw, "forward": fwd, "reverse": rev,
            "forward_s": fwd_s, "reverse_s": rev_s,
            "forward_peak": queries.value(a, "peak_over_inputs"),
            "reverse_peak": queries.value(b, "peak_over_inputs"),
            "ratio": ratio,
        })  # fmt: skip
    out = pd.DataFrame(rows, columns=COLUMNS)
    numeric = COLUMNS[3:]
    out[numeric] = out[numeric].astype(float)
    return out


def against_expected(measured, expected) -> str:
    """A measured ratio as a multiple of the expected one, e.g. '0.41×'; NOT_MEASURED where
    either is missing."""
    if formats.missing(measured) or formats.missing(expected) or expected <= 0:
        return formats.NOT_MEASURED
    return formats.times(measured / expected, digits=2)


def against_half_n(ratio, paths: int) -> str:
    """Reverse over forward time against the count of passes, N VJPs over two JVPs:
    '0.23× N/2'; NOT_MEASURED where the ratio is missing."""
    against = against_expected(ratio, paths / 2)
    return against if against == formats.NOT_MEASURED else f"{against} N/2"


def half(paths: int) -> str:
    """N/2 as the prose writes it: '500' for an even N, '500.5' for an odd one."""
    return f"{paths / 2:,.0f}" if paths % 2 == 0 else f"{paths / 2:,.1f}"


def in_short(cmp: pd.DataFrame, paths: int) -> str:
    """The chapter's answer from forward_against_reverse at N = paths: how many times as long
    each framework's N VJPs took as its two JVPs, set against N/2, the count of passes, and
    where forward mode was not the faster."""
    timed = cmp[cmp["ratio"].notna()]
    if timed.empty:
        return (f"At N = {paths:,} forward and reverse mode were not both measured in this "
                "profile.")  # fmt: skip
    named = [f"{formats.fold(r.ratio)} in {FRAMEWORK_NAMES[r.framework]}"
             for r in timed.itertuples()]  # fmt: skip
    said = (
        f"A tall Jacobian of N outputs and two inputs costs reverse mode N vector-Jacobian "
        f"products and forward mode two Jacobian-vector products. At N = {paths:,}, the N VJPs, "
        f"vectorized, took {formats.listing(named)} as long as the two JVPs"
    )
    half = paths / 2
    near = ((timed["ratio"] >= half / 2) & (timed["ratio"] <= 2 * half)).all()
    if near:
        said += f", within a factor of two of N/2 = {half:,.0f}, the count of passes."
    elif (timed["ratio"] < half).all():
        said += f": less than the N/2 = {half:,.0f} the count of passes predicts, since a "
        said += "vectorized batch shares its overhead."
    elif (timed["ratio"] > half).all():
        said += f": more than the N/2 = {half:,.0f} the count of passes predicts, since the "
        said += "batch's N cotangents cost memory traffic that two JVPs do not."
    else:
        said += f"; the count of passes gives N/2 = {half:,.0f}, and the frameworks fall on "
        said += "both sides of it: a VJP and a JVP each cost their own multiple of the function."
    slower = [FRAMEWORK_NAMES[r.framework] for r in timed.itertuples() if r.ratio <= 1]
    if slower:
        return f"{said} Forward mode was not the faster in {formats.listing(slower)}."
    return (
        f"{said} Of the two modes as they come, forward mode is the one for this shape; "
        "one reverse pass over per-path copies of the parameters (the pathwise gradient) "
        "also avoids the N VJPs, where the paths do not interact."
    )


def tensorflow_graph_forward(
    df: pd.DataFrame, paths: int, eager: str, graph: str, reverse: str
) -> str:
    """TensorFlow's reverse over forward time with its forward pass traced into one
    tf.function (graph) instead of run eagerly (eager): tape.jacobian's pfor (reverse) traces
    its vectorized loop into a graph on every call and runs that, so the two sides of the eager
    ForwardAccumulator's ratio pay different per-call costs. NOT_MEASURED wording where either
    is missing."""
    pair = forward_against_reverse(df, {"tensorflow": (graph, reverse)}, paths).iloc[0]
    eager_s = queries.value(
        queries.one(queries.gbm(df, paths=paths, status="ok"), framework="tensorflow",
                    strategy=eager), "warm_median_s")  # fmt: skip
    if formats.missing(pair["ratio"]) or eager_s is None:
        return (
            f"TensorFlow's forward pass inside one tf.function was not measured beside "
            f"its reverse mode at N = {paths:,}."
        )
    return (
        f"The two sides of TensorFlow's ratio do not run alike: tape.jacobian hands its "
        f"vectorized loop to pfor, which traces it into a graph afresh on every call and runs "
        f"that, while the ForwardAccumulator above runs eagerly ({formats.time(eager_s)}). "
        f"Traced into one tf.function ({graph}), the forward pass takes "
        f"{formats.time(pair['forward_s'])}, and the reverse mode "
        f"{formats.times(pair['ratio'], digits=0)} its time "
        f"({against_half_n(pair['ratio'], paths)})."
    )
