"""What to use (chapter 6), the limits of its rules for the tall Jacobian, read from the data:
where a compiled variant beat its eager twin per call and where it did not, forward mode's
memory against the pathwise gradient's at the one M measured, and what the unblocked forms
would need where only the blocked ones were run (the memory model's prediction and the
measured growth carried on, never a measurement)."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.strategies import registry

# Two peaks within this factor of each other are "about the same".
ABOUT_SAME = 1.1


def _strategy(row: pd.Series) -> registry.Strategy:
    return registry.get(row["framework"], row["strategy"])


# --- Compiled against eager -------------------------------------------------------------------


def compiled_pairs(df: pd.DataFrame) -> pd.DataFrame:
    """Every compiled variant against its eager twin (Strategy.eager_twin) at each N where both
    ran correctly: framework, N, the two names and their warm medians."""
    ok = queries.gbm(df, status="ok")
    warm = {(r["framework"], r["strategy"], int(r["paths"])): r["warm_median_s"]
            for _, r in ok.iterrows()}  # fmt: skip
    pairs = []
    for (fw, name, n), t in warm.items():
        if fw not in AD_FRAMEWORKS or (twin := registry.get(fw, name).eager_twin) is None:
            continue
        if (fw, twin, n) in warm:
            pairs.append((fw, n, name, t, twin, warm[(fw, twin, n)]))
    columns = ["framework", "paths", "compiled", "compiled_s", "eager", "eager_s"]
    table = pd.DataFrame(pairs, columns=columns).sort_values(["paths", "compiled"])
    order = table["framework"].map(AD_FRAMEWORKS.index)
    return table.iloc[order.argsort(kind="stable")].reset_index(drop=True)


def compiled_sentence(df: pd.DataFrame) -> str:
    """Where the compiled variants beat their eager twins per call (warm medians): 'per call
    they beat their eager twins in 28 of the 30 pairs measured from N = 100 to 1,000,000; not
    TensorFlow's pathwise-function (85.7 ms) and pathwise-xla (83.9 ms) against pathwise
    (74.4 ms) at N = 100,000.'"""
    pairs = compiled_pairs(df)
    if pairs.empty:
        return f"per call, against their eager twins, they were {formats.NOT_MEASURED}."
    slower = pairs[pairs["compiled_s"] >= pairs["eager_s"]]
    sizes = formats.span(pairs["paths"], lambda n: f"{int(n):,}")
    if slower.empty:
        return (
            f"per call they beat their eager twins in all {len(pairs)} pairs measured, at "
            f"N = {sizes}."
        )
    said = []
    for (fw, n, eager), rows in slower.groupby(["framework", "paths", "eager"], sort=False):
        compiled = [
            f"{r['compiled']} ({formats.time(r['compiled_s'])})" for _, r in rows.iterrows()
        ]
        said.append(
            f"{FRAMEWORK_NAMES[fw]}'s {formats.listing(compiled)} against {eager} "
            f"({formats.time(rows['eager_s'].iloc[0])}) at N = {int(n):,}"
        )
    return (
        f"per call they beat their eager twins in {len(pairs) - len(slower)} of the {len(pairs)} "
        f"pairs measured, at N = {sizes}; not {'; '.join(said)}."
    )


# --- Forward mode's memory against the pathwise gradient's -------------------------------------


def forward_against_pathwise(df: pd.DataFrame) -> str:
    """Per framework, the answer code's forward builder against its pathwise gradient in peak
    beyond the inputs, at the largest N where both ran: 'At M = 52 and N = 1,000,000 forward
    mode held less beyond the inputs than the pathwise gradient in JAX (jvp 815.5 MiB against
    1.4 GiB), more in PyTorch (...) and about the same in TensorFlow (...).' (each N named
    where they differ); that it was not measured where no framework ran both."""
    found = []
    for fw in AD_FRAMEWORKS:
        names = [registry.answer(fw, role).name for role in ("forward", "pathwise")]
        n = queries.largest_common(df, fw, names)
        if n is None:
            continue
        ok = queries.gbm(df, framework=fw, status="ok", paths=n)
        fwd, rev = (queries.one(ok, strategy=s) for s in names)
        a, b = fwd["peak_over_inputs"], rev["peak_over_inputs"]
        if not (formats.missing(a) or formats.missing(b)):
            found.append((fw, names[0], float(a), float(b), int(fwd["steps"]), n))
    if not found:
        return f"Forward mode's memory beside the pathwise gradient's was {formats.NOT_MEASURED}."
    steps = " or ".join(f"{m}" for m in sorted({f[4] for f in found}))
    one_n = len({f[5] for f in found}) == 1
    said: dict[str, list[str]] = {"less": [], "more": [], "about the same": []}
    for fw, name, a, b, _, n in found:
        how = "about the same" if max(a, b) <= ABOUT_SAME * min(a, b) else (
            "less" if a < b else "more")  # fmt: skip
        at = "" if one_n else f", N = {n:,}"
        said[how].append(
            f"{FRAMEWORK_NAMES[fw]} ({name} {formats.size(a)} against {formats.size(b)}{at})"
        )
    parts = [[how, f" in {formats.listing(fws)}"] for how, fws in said.items() if fws]
    than = "as" if parts[0][0] == "about the same" else "than"
    parts[0][0] += f" beyond the inputs {than} the pathwise gradient"
    lead = f"At M = {steps} and N = {found[0][5]:,}" if one_n else (
        f"At M = {steps}, at the largest N where both ran,")  # fmt: skip
    return f"{lead} forward mode held {formats.listing([how + fws for how, fws in parts])}."


# --- What the unblocked forms would need where only blocked ones ran --------------------------


def blocked_only(df: pd.DataFrame) -> tuple[int, int] | None:
    """(N, the memory cap there) where the tall Jacobian's AD candidates finished only in their
    blocked forms, at a larger N than any unblocked one finished; None where there is no
    such N."""
    ok = queries.candidates(queries.gbm(df, framework=AD_FRAMEWORKS, status="ok"))
    if ok.empty:
        return None
    blocked = pd.Series([_strategy(r).blocked for _, r in ok.iterrows()], index=ok.index)
    if not blocked.any() or not (~blocked).any():
        return None
    top = int(ok.loc[blocked, "paths"].max())
    if top <= int(ok.loc[~blocked, "paths"].max()):
        return None
    return top, int(ok.loc[blocked & (ok["paths"] == top), "mem_cap"].min())


def unblocked_needs(df: pd.DataFrame) -> pd.DataFrame:
    """The unblocked AD candidates that ran at the largest N any did, with what they would
    hold at blocked_only's N: the memory model's predicted peak ('predicted') and the measured
    peak extended in a straight line through the two largest N it ran ('carried'; None where
    it ran at one N), and the N they ran at ('from')."""
    at = blocked_only(df)
    ok = queries.candidates(queries.gbm(df, framework=AD_FRAMEWORKS, status="ok"))
    if at is None:
        return pd.DataFrame(columns=["framework", "strategy", "predicted", "carried"])
    target, _ = at
    unblocked = ok[[not _strategy(r).blocked for _, r in ok.iterrows()]]
    top = int(unblocked["paths"].max())
    found = []
    for _, r in unblocked[unblocked["paths"] == top].iterrows():
        s = _strategy(r)
        predicted = s.memory.peak(r["framework"], target, int(r["steps"]), r["dtype"])
        own = unblocked[(unblocked["framework"] == r["framework"])
                        & (unblocked["strategy"] == r["strategy"])]  # fmt: skip
        own = own.sort_values("paths")
        carried = None
        if len(own) >= 2:
            lo, hi = own.iloc[-2], own.iloc[-1]
            slope = (hi["peak"] - lo["peak"]) / (hi["paths"] - lo["paths"])
            carried = float(hi["peak"] + slope * (target - hi["paths"]))
        found.append((r["framework"], r["strategy"], int(top), float(predicted), carried))
    return pd.DataFrame(found, columns=["framework", "strategy", "from", "predicted", "carried"])


def _extreme(needs: pd.DataFrame, column: str) -> str:
    rows = needs.dropna(subset=[column]).sort_values(column, kind="stable")
    lo, hi = rows.iloc[0], rows.iloc[-1]
    return f"{_peak(lo, column)} to {_peak(hi, column)}"


def _peak(row: pd.Series, column: str) -> str:
    return f"{formats.size(row[column])} ({FRAMEWORK_NAMES[row['framework']]}'s {row['strategy']})"


def beyond_sentence(df: pd.DataFrame, blocked_forms: str) -> str:
    """Where only the blocked forms were measured, what they are, and what the unblocked forms
    would need there, labelled as predictions; where the unblocked forms ran at every N the
    blocked ones did, what the blocked forms are."""
    at = blocked_only(df)
    if at is None:
        ok = queries.gbm(df, framework=AD_FRAMEWORKS, status="ok")
        ran = any(_strategy(r).blocked for _, r in ok.iterrows())
        return f"The blocked forms ({blocked_forms}) hold one block of paths at a time" + (
            "; here an unblocked form ran at every N where a blocked one did."
            if ran
            else f"; they were {formats.NOT_MEASURED}."
        )
    n, cap = at
    needs = unblocked_needs(df)
    said = (
        f"At N = {n:,} only the blocked forms were measured ({blocked_forms}): one block of "
        "paths at a time (how their memory grows with N is measured in the GBM chapter)."
    )
    if needs.empty:
        return said
    top = int(needs["from"].iloc[0])
    tried = queries.candidates(queries.gbm(df, framework=AD_FRAMEWORKS, paths=n))
    tried = tried[[not _strategy(r).blocked for _, r in tried.iterrows()]]
    said += " No unblocked form finished there." if len(tried) else (
        " The unblocked forms were not run there.")  # fmt: skip
    said += (
        f" For those that ran at N = {top:,}, the "
        f"memory model predicts peaks of {_extreme(needs, 'predicted')} at N = {n:,}, against "
        f"the {formats.size(cap)} cap there"
    )
    if needs["carried"].notna().any():
        said += (
            f", and each one's measured peak, extended in a straight line through its two "
            f"largest N, gives {_extreme(needs, 'carried')}"
        )
    return said + ": predictions, not measurements."
