"""What to use (chapter 6), dense Hessians: the smallest n at which one did not finish, whether
the matrices themselves would have fitted under the cap, and for each dense method how it
builds the Hessian, what it held and what stopped it."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.problems import moments
from jacbench.report import formats, queries
from jacbench.second import registry as second


def hessian_bytes(n) -> int:
    """Bytes of one output's n × n Hessian in float32."""
    return moments.dense_hessian_bytes(int(n), "float32", outputs=1)


def dense_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The dense Hessian methods' rows of the moments problem, by framework, method and n."""
    return queries.second_order(df, "moments", kind="dense")


def counted(finished: pd.DataFrame) -> bool:
    """Whether some method finished at two sizes far enough apart (the larger at least twice
    the smaller) to count its n × n arrays."""
    sizes = (sorted(g["inputs"]) for _, g in finished.groupby(["framework", "strategy"]))
    return any(len(s) >= 2 and s[-1] >= 2 * s[-2] for s in sizes)


def dense_limit(df: pd.DataFrame) -> str:
    """'Dense Hessians first failed to finish at n = 10,000, where one output's Hessian is
    381.5 MiB in float32, all three 1.1 GiB, and the memory cap
    was 8.0 GiB.'; or that every method finished, up to the largest n."""
    dense = dense_rows(df)
    stopped, finished = dense[dense["status"] != "ok"], dense[dense["status"] == "ok"]
    if len(stopped):
        n = int(stopped["inputs"].min())
        cap = stopped.loc[stopped["inputs"] == n, "mem_cap"].min()
        return (
            f"Dense Hessians first failed to finish at n = {n:,}, where one output's Hessian "
            f"is {formats.size(hessian_bytes(n))} in float32, "
            f"all three {formats.size(3 * hessian_bytes(n))}, and the memory cap was "
            f"{formats.size(cap)}."
        )
    if len(finished):
        return (
            "Every dense Hessian method of this build finished at every size tried, up to "
            f"n = {int(finished['inputs'].max()):,}."
        )
    return f"Dense Hessians are {formats.NOT_MEASURED}."


def dense_verdict(df: pd.DataFrame) -> str:
    """Whether the three Hessians would fit under the cap where a method first stopped ('The
    three Hessians would fit under that cap; what does not fit is what the methods build on
    the way: several n × n arrays per method.'), or exceed it."""
    dense = dense_rows(df)
    stopped, finished = dense[dense["status"] != "ok"], dense[dense["status"] == "ok"]
    arrays = (
        ": several n × n arrays per method."
        if counted(finished)
        else ", n × n arrays that fixed costs hide at the one size each method finished here."
    )
    if len(stopped):
        n = int(stopped["inputs"].min())
        cap = stopped.loc[stopped["inputs"] == n, "mem_cap"].min()
        if 3 * hessian_bytes(n) < cap:
            verdict = (
                "The three Hessians would fit under that cap; what does not fit is what the "
                "methods build on the way"
            )
        else:
            verdict = (
                "There the Hessians themselves exceed the cap; at smaller n, what limits the "
                "methods is what they build on the way"
            )
        return verdict + arrays
    if len(finished):
        return "What grows with n is what the methods build on the way" + arrays
    return "What the methods build on the way is therefore unknown here."


def arrays_grown(ok: pd.DataFrame) -> tuple[float, int, int] | None:
    """How many n × n arrays a method's peak beyond the inputs grew by between its two largest
    finished sizes (the larger at least twice the smaller), with the two sizes; None."""
    if len(ok) >= 2 and ok.iloc[-1]["inputs"] >= 2 * ok.iloc[-2]["inputs"]:
        lo, hi = ok.iloc[-2], ok.iloc[-1]
        grew = (hi["peak_over_inputs"] - lo["peak_over_inputs"]) / (
            hessian_bytes(hi["inputs"]) - hessian_bytes(lo["inputs"])
        )
        return float(grew), int(lo["inputs"]), int(hi["inputs"])
    return None


def arrays_over(rows: pd.DataFrame, ok: pd.DataFrame) -> tuple[int, int] | None:
    """Where a method stopped at the memory cap above its largest finished size: the n and how
    many n × n arrays the cap (less what the process held before) holds there; None."""
    largest = ok["inputs"].max() if len(ok) else 0
    failed = rows[(rows["status"] != "ok") & (rows["inputs"] > largest)]
    if failed.empty or failed.iloc[0]["status"] != "memory-cap":
        return None
    stop = failed.iloc[0]
    held_before = ok.iloc[-1]["cold_rss_before"] if len(ok) else 0
    return int(stop["inputs"]), int((stop["mem_cap"] - held_before) / hessian_bytes(stop["inputs"]))


def outgrown(df: pd.DataFrame) -> str:
    """The dense methods whose growth between their two largest finished sizes falls far short
    (under a third) of what stopped them: 'JAX's hessian grew by the equivalent of 0.9 n × n
    arrays from n = 1,000 to 3,000 yet needed more than 21 at n = 10,000'; '' where none."""
    said = []
    for (fw, _), rows in dense_rows(df).groupby(["framework", "strategy"], sort=True):
        ok = rows[rows["status"] == "ok"]
        grown, over = arrays_grown(ok), arrays_over(rows, ok)
        if grown is None or over is None or grown[0] * 3 > over[1]:
            continue
        name = queries.short_name(rows.iloc[0])
        said.append(
            f"{FRAMEWORK_NAMES[fw]}'s {name} grew by the equivalent of {grown[0]:.1f} n × n "
            f"arrays from n = {grown[1]:,} to {grown[2]:,} yet needed more than {over[1]} at "
            f"n = {over[0]:,}"
        )
    if not said:
        return ""
    return (
        "Growth at small n does not always carry to larger n: " + "; ".join(said) + ". A "
        "compiled program is planned for each shape (XLA assigns its buffers per compile), "
        "so what it holds at a size it never finished is not known from the sizes it did."
    )


def held(ok: pd.DataFrame) -> str:
    """'grew by the equivalent of 12.4 n × n arrays from n = 1,000 to 3,000' from the growth of
    the peak beyond the inputs between the two largest finished sizes (the larger at least
    twice the smaller), with, where what it held besides its three Hessians fell between them,
    by how much (the growth then understates the arrays); or the peak at the largest size that
    finished ('84.3 MiB beyond the inputs at n = 1,000')."""
    grown = arrays_grown(ok)
    if grown is not None:
        grew, lo, hi = grown
        text = f"grew by the equivalent of {grew:.1f} n × n arrays from n = {lo:,} to {hi:,}"
        besides = [r["peak_over_inputs"] - 3 * hessian_bytes(r["inputs"]) for r in
                   (ok.iloc[-2], ok.iloc[-1])]  # fmt: skip
        if besides[1] < besides[0]:
            text += (
                f"; what it held besides its three Hessians fell, from "
                f"{formats.size(besides[0])} to {formats.size(besides[1])}"
            )
        return text
    if len(ok):
        return (
            f"{formats.size(ok.iloc[-1]['peak_over_inputs'])} beyond the inputs at "
            f"n = {int(ok.iloc[-1]['inputs']):,}"
        )
    return formats.NOT_MEASURED


def stopped_at(rows: pd.DataFrame, ok: pd.DataFrame) -> str:
    """What stopped a method above its largest finished size: 'memory cap (8.0 GiB) at
    n = 10,000, over 21 n × n arrays' (the cap less what the process held before its first
    call at the largest finished n); '–' if nothing stopped it."""
    largest = ok["inputs"].max() if len(ok) else 0
    failed = rows[(rows["status"] != "ok") & (rows["inputs"] > largest)]
    if failed.empty:
        return "–"
    stop = failed.iloc[0]
    text = f"{formats.outcome(stop)} at n = {int(stop['inputs']):,}"
    over = arrays_over(rows, ok)
    if over is not None:
        text += f", over {over[1]} n × n arrays"
    return text


def how(framework: str, name: str) -> str:
    """How a dense method builds the Hessian, from its registry record ('–' where not said)."""
    return second.get(framework, name).how or "–"


def dense_methods(df: pd.DataFrame) -> pd.DataFrame:
    """One row per dense method (by framework, then method): its name, framework, how it builds
    the Hessian, what it held and what stopped it; empty where none was measured."""
    readings = []
    for (fw, _), rows in dense_rows(df).groupby(["framework", "strategy"], sort=True):
        ok = rows[rows["status"] == "ok"]
        name = queries.short_name(rows.iloc[0])
        readings.append(
            {
                "method": name,
                "framework": FRAMEWORK_NAMES[fw],
                "how it builds the Hessian": how(fw, name),
                "what it held": held(ok),
                "what stopped it": stopped_at(rows, ok),
            }
        )
    return pd.DataFrame(readings)
