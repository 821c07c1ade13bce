"""What the wide chapter's extras cost (chapter 5): create_graph=True against the plain loop of
gradients, and a Hessian-vector product counted in gradients of the same execution mode."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report import data, formats, queries
from jacbench.report.legacy.picks import clearly_faster
from jacbench.report.legacy.wide import LOOP, LOOP_CREATE_GRAPH, MOMENTS, _ok
from jacbench.strategies import registry

# --- create_graph=True ----------------------------------------------------------------------


def create_graph_costs(
    df: pd.DataFrame, framework: str = "torch", margin: float = 1.0
) -> pd.DataFrame:
    """The loop of gradients with create_graph=True over the same loop without it, at every n
    both ran correctly: warm medians and fastest calls, peaks beyond the inputs, the two ratios,
    whether both are under a millisecond ("quick") and whether it is slower or faster by more
    than the noise (picks.clearly_faster with the margin)."""
    plain = queries.wide(df, framework=framework, strategy=LOOP, status="ok")
    graph = queries.wide(df, framework=framework, strategy=LOOP_CREATE_GRAPH, status="ok")
    rows = []
    for m in sorted(set(plain["inputs"]) & set(graph["inputs"])):
        p, g = queries.one(plain, inputs=m), queries.one(graph, inputs=m)
        rows.append(
            {
                "inputs": int(m),
                "plain_s": p["warm_median_s"],
                "graph_s": g["warm_median_s"],
                "plain_min_s": _fastest(p),
                "graph_min_s": _fastest(g),
                "plain_peak": p["peak_over_inputs"],
                "graph_peak": g["peak_over_inputs"],
                "quick": max(p["warm_median_s"], g["warm_median_s"]) < data.OVERHEAD_S,
                "slower": clearly_faster(p, g, margin),
                "faster": clearly_faster(g, p, margin),
            }
        )
    floats = ["plain_s", "graph_s", "plain_min_s", "graph_min_s", "plain_peak", "graph_peak"]
    columns = ["inputs", *floats, "quick", "slower", "faster"]
    out = pd.DataFrame(rows, columns=columns)
    out[floats] = out[floats].astype(float)
    out[["quick", "slower", "faster"]] = out[["quick", "slower", "faster"]].astype(bool)
    out["time_ratio"] = out["graph_s"] / out["plain_s"]
    out["memory_ratio"] = out["graph_peak"] / out["plain_peak"]
    return out


def _fastest(row: pd.Series) -> float:
    return row["warm_median_s"] if formats.missing(row["warm_min_s"]) else row["warm_min_s"]


# A cost within this factor of the plain loop's, in time and in memory, is "almost nothing".
ALMOST_NOTHING = 1.15


def _overlap(r: pd.Series, margin: float) -> str:
    """Where the medians differ by more than the margin but the slower one's fastest call is not
    above the other's median (picks.clearly_faster's second condition decides): said so; ''."""
    if r["quick"] or r["slower"] or r["faster"]:
        return ""
    graph = ("its", r["graph_min_s"], "the plain loop's", r["plain_s"], "slower")
    plain = ("the plain loop's", r["plain_min_s"], "its", r["graph_s"], "faster")
    if r["time_ratio"] > margin:
        who, fast, other, median, word = graph
    elif r["time_ratio"] * margin < 1:
        who, fast, other, median, word = plain
    else:
        return ""
    return (f"its {formats.times(r['time_ratio'], 2)} is past the margin of "
            f"{formats.times(margin, 2)}, but {who} fastest "
            f"call ({formats.time(fast)}) is not slower than {other} median "
            f"({formats.time(median)}), so it is not ranked {word}")  # fmt: skip


def create_graph_sentence(costs: pd.DataFrame, n: int, margin: float = 1.0) -> str:
    """What create_graph=True costs the loop of gradients at the question's n (or the nearest n
    both ran) and at the other sizes: time only where it is slower by more than the noise
    (create_graph_costs, with the margin named here; calls under a millisecond not ranked, and
    where the fastest call decides, said so), memory where its peak is more than ALMOST_NOTHING
    times the plain loop's."""
    if costs.empty:
        return "The loop with create_graph=True was not measured beside the plain loop."
    at = costs.iloc[(costs["inputs"] - n).abs().argsort(kind="stable")].iloc[0]

    def cost(r) -> str:
        return (
            f"{formats.time(r['graph_s'])} against {formats.time(r['plain_s'])} "
            f"({formats.times(r['time_ratio'], 2)}), peak beyond the inputs "
            f"{formats.size(r['graph_peak'])} against {formats.size(r['plain_peak'])} "
            f"({formats.times(r['memory_ratio'], 2)})"
        )

    said = f"At n = {int(at['inputs']):,} the loop with it takes {cost(at)}: "
    if at["quick"]:
        said += "both are under a millisecond, where this report does not rank them"
    elif at["slower"]:
        said += f"slower by more than the noise of the measurement ({formats.times(margin, 2)})"
    elif at["faster"]:
        said += ("faster, which recording more cannot explain: the difference is noise between "
                 "the two loops' separately timed processes")  # fmt: skip
    else:
        said += _overlap(at, margin) or (
            f"the time differs by less than the noise ({formats.times(margin, 2)})"
        )
    said += (", and what it costs there is memory." if at["memory_ratio"] > ALMOST_NOTHING
             else ", and its memory is within a factor of "
             f"{formats.times(ALMOST_NOTHING, 2)} there.")  # fmt: skip
    others = costs[costs["inputs"] != at["inputs"]]
    if len(others):
        said += " " + _elsewhere(others, margin)
    return said


def _sizes(rows: pd.DataFrame) -> str:
    return "n = " + formats.listing([f"{int(m):,}" for m in rows["inputs"]])


def _elsewhere(others: pd.DataFrame, margin: float) -> str:
    """create_graph_sentence's sentences on the other sizes: the range of time ratios, where both
    are under a millisecond, where slower by more than the noise, where the fastest call decides,
    and where its memory is more than ALMOST_NOTHING times the plain loop's."""
    lo, hi = int(others["inputs"].min()), int(others["inputs"].max())
    sizes = f"n = {lo:,}" if lo == hi else f"n = {lo:,} to {hi:,}"
    said = [f"Over the other sizes measured ({sizes}) it takes "
            f"{formats.span(others['time_ratio'], lambda x: formats.times(x, 2))} the plain "
            "loop's time."]  # fmt: skip
    quick = others[others["quick"]]
    if len(quick):
        said.append(f"At {_sizes(quick)} both are under a millisecond, where this report does "
                    "not rank them.")  # fmt: skip
    slower = others[others["slower"]]
    ranked = (f"It is slower by more than the noise at {_sizes(slower)}" if len(slower)
              else "It is never slower by more than the noise")  # fmt: skip
    overlaps = [f"at n = {int(r['inputs']):,} {_overlap(r, margin)}"
                for _, r in others.iterrows() if _overlap(r, margin)]  # fmt: skip
    said.append("; ".join([ranked, *overlaps]) + ".")
    dearer = others[others["memory_ratio"] > ALMOST_NOTHING]
    memory = f"more than {formats.times(ALMOST_NOTHING, 2)} its memory"
    said.append(f"It takes {memory} at {_sizes(dearer)}." if len(dearer)
                else f"It never takes {memory}.")  # fmt: skip
    return " ".join(said)


# --- a Hessian-vector product in gradients --------------------------------------------------

# The frameworks whose second-order methods run compiled: JAX jits every one
# (second/jax_second.py); PyTorch's and TensorFlow's run eagerly.
COMPILED_SECOND = ("jax",)


def hvp_against_gradients(df: pd.DataFrame, n: int) -> dict[str, tuple[pd.Series, pd.Series]]:
    """Per AD framework, (its fastest correct Hessian-vector product at n, its fastest correct
    reverse-mode Jacobian there that runs as the product does: eager against eager, compiled
    against compiled); frameworks without both are left out."""
    second = queries.second_order(df, MOMENTS)
    jacobians = queries.candidates(queries.wide(df, inputs=n, target="strategy"))
    found = {}
    for fw in AD_FRAMEWORKS:
        hvp = queries.fastest(queries.where(second, inputs=n, kind="hvp", framework=fw))
        rows = queries.where(jacobians, framework=fw)
        records = [registry.get(fw, name) for name in rows["strategy"]]
        same = [r.mode == "reverse" and r.compiled == (fw in COMPILED_SECOND) for r in records]
        jac = queries.fastest(rows[same]) if len(rows) else None
        if _ok(hvp) and _ok(jac):
            found[fw] = (hvp, jac)
    return found


def hvp_in_gradients(df: pd.DataFrame, n: int, ranked: bool = False) -> dict[str, float]:
    """Per AD framework, its fastest Hessian-vector products at n counted in gradients: the warm
    time of the three products (one per output) over that of its three gradients
    (hvp_against_gradients); where ranked, frameworks whose two calls are both under a
    millisecond (per-call overhead, not arithmetic) are left out."""
    found = {}
    for fw, (h, j) in hvp_against_gradients(df, n).items():
        if not (ranked and max(h["warm_median_s"], j["warm_median_s"]) < data.OVERHEAD_S):
            found[fw] = float(h["warm_median_s"] / j["warm_median_s"])
    return found


def _gradients(x: float) -> str:
    return f"{x:.2g}" if x < 10 else f"{x:,.0f}"


def hvp_cost(df: pd.DataFrame, n: int) -> str:
    """'the time of 8.7 gradients in PyTorch and 4.7 in TensorFlow.' per product at n, then the
    frameworks whose two calls are both under a millisecond there, said so, and each one's range
    over every n where a call is not (and where a product took less than a gradient, said so);
    NOT_MEASURED where no framework has both."""
    pairs = hvp_against_gradients(df, n)
    if not pairs:
        return formats.NOT_MEASURED
    at = hvp_in_gradients(df, n, ranked=True)
    named = [f"{_gradients(g)}{' gradients' if i == 0 else ''} in {FRAMEWORK_NAMES[fw]}"
             for i, (fw, g) in enumerate(at.items())]  # fmt: skip
    said = [f"the time of {formats.listing(named)}." if at
            else "no time that can be counted in gradients here."]  # fmt: skip
    for fw, (h, j) in pairs.items():
        if fw not in at:
            said.append(f"In {FRAMEWORK_NAMES[fw]} both calls are under a "
                        f"millisecond ({formats.time(h['warm_median_s'])} and "
                        f"{formats.time(j['warm_median_s'])}): per-call overhead, not arithmetic, "
                        "so no ratio is given.")  # fmt: skip
    sizes = sorted(set(queries.second_order(df, MOMENTS, kind="hvp", status="ok")["inputs"]))
    every = [hvp_in_gradients(df, int(m), ranked=True) for m in sizes]
    frameworks = [fw for fw in AD_FRAMEWORKS if any(fw in e for e in every)]
    if len(sizes) > 1 and frameworks:
        ranges = [f"{formats.span([e[fw] for e in every if fw in e], _gradients)}"
                  f"{' gradients' if i == 0 else ''} in {FRAMEWORK_NAMES[fw]}"
                  for i, fw in enumerate(frameworks)]  # fmt: skip
        said.append(f"Over n = {int(sizes[0]):,} to {int(sizes[-1]):,}, leaving out sizes where "
                    f"both calls are under a millisecond, a product takes "
                    f"{formats.listing(ranges)}.")  # fmt: skip
        cheaper = [FRAMEWORK_NAMES[fw] for fw in frameworks
                   if max(e[fw] for e in every if fw in e) < 1]  # fmt: skip
        if cheaper:
            said.append(f"In {formats.listing(cheaper)} a product took less time than a "
                        "gradient, less than the count of passes predicts.")  # fmt: skip
    return " ".join(said)
