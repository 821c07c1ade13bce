"""Chapter 6's tables: every strategy at the question's n, the picks, the question's solutions
and its third answer, per-sample Jacobians, Hessians by size, the per-path second derivatives
and the crossover's verdicts."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.report.chapters.wide.crossover import Crossover
from jacbench.report.chapters.wide.facts import (
    BY_HAND,
    CLOSED_FORM,
    CREATE_GRAPH,
    LOOP,
    REPORTED,
    SOLUTION_2,
    Case,
    Facts,
    case,
    listed,
)
from jacbench.report.chapters.wide.products import Products
from jacbench.report.chapters.wide.second import greeks_rows
from jacbench.report.picks import LARGEST, QUESTION
from jacbench.strategies import registry

NAMES = FRAMEWORK_NAMES


def _outcome(c: Case | None) -> str:
    """A case's warm call, or what stopped it (formats.outcome's words)."""
    if c is None:
        return formats.NOT_MEASURED
    if c.ok:
        return formats.time(c.warm_s)
    if c.status == "skipped-predicted":
        return f"skipped (needs {formats.size(c.predicted)})"
    if c.status == "memory-cap":
        return f"memory cap ({formats.size(c.cap)})"
    return c.status


def _ordered(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The rows sorted by the columns named, "place" being the framework's place in NAMES."""
    place = rows["framework"].map(list(NAMES).index)
    return rows.assign(place=place).sort_values(by, kind="stable")


def _columns(c: Case | None) -> dict:
    """A case's warm and first calls and its memory; one the model skipped says in the memory
    column what it would have needed."""
    done = c is not None and c.ok
    if c is not None and c.status == "skipped-predicted":
        needs = f"needs {formats.size(c.predicted)}"
        return {"warm": "skipped", "first call": "–", "memory": needs}
    return {
        "warm": _outcome(c),
        "first call": formats.time(c.cold_s) if done else "–",
        "memory": formats.size(c.beyond_inputs) if done else "–",
    }


def strategies(f: Facts) -> pd.DataFrame:
    """Every strategy of the moments problem at n, in the registry's order, numpy's last."""
    rows = []
    for key in listed():
        c = f.cases.get(key)
        if c is not None:
            call = registry.get(*key).labelled("moments")
            shown = {"framework": NAMES[key[0]], "strategy": key[1], "call": call}
            rows.append({**shown, **_columns(c)})
    return pd.DataFrame(rows)


def picks(f: Facts) -> pd.DataFrame:
    """The wide Jacobian's picks at the question's n and at the largest: for repeated calls,
    for one call, and the call from which the first overtakes the second."""
    rows = []
    for regime in (QUESTION, LARGEST):
        for fw in AD_FRAMEWORKS:
            p = f.pick(fw, regime)
            if p is None:
                continue
            ahead = formats.count(p.overtakes_at) if p.overtakes_at else "–"
            rows.append(
                {
                    "n": formats.count(p.size),
                    "framework": FRAMEWORK_NAMES[fw],
                    "repeated calls": ", ".join(p.repeated) or "–",
                    "one call": ", ".join(p.one_call) or "–",
                    "ahead from call": ahead,
                }
            )
    return pd.DataFrame(rows)


def solutions(f: Facts) -> pd.DataFrame:
    """The question's two solutions at n, and solution 1 without create_graph=True."""
    shown = {
        "solution 1, as asked": CREATE_GRAPH,
        "solution 1, no create_graph": LOOP,
        "solution 2": SOLUTION_2,
    }
    rows = [{"PyTorch": what, "strategy": name} for what, name in shown.items()]
    return pd.DataFrame([{**r, **_columns(f.at("torch", r["strategy"]))} for r in rows])


def third_answer(f: Facts) -> pd.DataFrame:
    """The third answer's CPU timings beside ours at n: solution 2, the derivative written by
    hand (PyTorch's torch.stack, as the answer wrote it), and how many times faster it is."""
    sol2, hand = f.at("torch", SOLUTION_2), f.at(*BY_HAND)
    factor = sol2.warm_s / hand.warm_s if sol2 and hand and sol2.ok and hand.ok else None
    reported = [REPORTED["cpu_solution_2"], REPORTED["cpu_by_hand"]]
    return pd.DataFrame(
        {
            "": ["solution 2", "by hand", "by hand, times faster"],
            "the third answer, its CPU": [
                *map(formats.time, reported),
                formats.fold(f.reported_by_hand),
            ],
            f"here, n = {f.n:,}": [
                _outcome(sol2),
                _outcome(hand),
                formats.fold(factor) if factor else "–",
            ],
        }
    )


def per_sample(df: pd.DataFrame) -> pd.DataFrame:
    """Every per-sample Jacobian measured (X of B rows of n), beside numpy's closed form."""
    rows = _ordered(queries.wide(df, problem="moments-batch"), ["batch", "inputs", "place"])
    closed = rows[rows["framework"] == CLOSED_FORM[0]]
    out = []
    for _, r in rows.iterrows():
        ref = queries.one(closed, inputs=r["inputs"], batch=r["batch"], status="ok")
        over = r["warm_median_s"] / ref["warm_median_s"] if ref is not None else None
        shape = f"{int(r['batch'])} × {int(r['inputs']):,}"
        shown = {
            "B × n": shape,
            "framework": NAMES[r["framework"]],
            "strategy": queries.short_name(r),
        }
        out.append({**shown, **_columns(case(r)), "time / closed form": formats.times(over)})
    return pd.DataFrame(out)


def hessians(df: pd.DataFrame, sizes: tuple[int, ...]) -> pd.DataFrame:
    """Every second-order method of the moments problem, a column per n of sizes: its warm
    call, or what stopped it."""
    second = _ordered(queries.second_order(df, "moments"), ["place", "kind", "method"])
    out = []
    for (fw, method), g in second.groupby(["framework", "method"], sort=False):
        row = {"framework": NAMES[fw], "method": method, "kind": g["kind"].iloc[0]}
        for n in sizes:
            r = queries.one(g, inputs=n)
            row[f"n = {n:,}"] = formats.outcome(r) if r is not None else "–"
        out.append(row)
    return pd.DataFrame(out)


def greeks(df: pd.DataFrame) -> pd.DataFrame:
    """The GBM's per-path second derivatives: a row per framework, method and dtype, a column
    per N (warm call, or what stopped it), and the largest error of its correct calls."""
    rows = _ordered(greeks_rows(df), ["place", "strategy", "dtype"])
    sizes = sorted({int(n) for n in rows["paths"].dropna()})
    out = []
    for (fw, name, dtype), g in rows.groupby(["framework", "strategy", "dtype"], sort=False):
        row = {"framework": NAMES[fw], "method": name.split(":")[-1], "dtype": dtype}
        for n in sizes:
            r = queries.one(g, paths=n)
            row[f"N = {n:,}"] = formats.outcome(r) if r is not None else "–"
        errors = g[g["status"] == "ok"]["max_rel_error"].dropna()
        row["largest error"] = formats.error(errors.max()) if len(errors) else "–"
        out.append(row)
    return pd.DataFrame(out)


def crossover(c: Crossover) -> pd.DataFrame:
    """The crossover's verdicts: a row per shape, tall to wide, and per framework the faster
    mode where the book's rule ranks the two, else 'tie'."""
    out: dict[tuple[int, int], dict] = {}
    for fw in AD_FRAMEWORKS:
        for s in c.shapes:
            if s.framework == fw:
                shape = f"{s.outputs:,} × {s.inputs:,}"
                out.setdefault((s.outputs, s.inputs), {"m × n": shape})[NAMES[fw]] = (
                    s.winner or "tie"
                )
    ordered = sorted(out, key=lambda k: -k[0] / k[1])
    return pd.DataFrame([out[k] for k in ordered])


def products(p: Products) -> pd.DataFrame:
    """The three products H_k v by framework and n: forward over reverse, reverse over reverse,
    the answer's Jacobian (three gradients), and one product's time in gradients."""
    out = []
    for fw in AD_FRAMEWORKS:
        for n in p.sizes:
            found = p.at(fw, n)
            if found is None:
                continue
            out.append({
                "framework": FRAMEWORK_NAMES[fw],
                "n": formats.count(n),
                "forward over reverse": formats.time(found.forward_s),
                "reverse over reverse": formats.time(found.reverse_s),
                "Jacobian (3 gradients)": formats.time(found.jacobian_s),
                "products / Jacobian": formats.times(found.in_gradients, 2),
            })  # fmt: skip
    return pd.DataFrame(out)
