"""What to use (chapter 6), the limits of its rules for the tall Jacobian, read from the data:
where a compiled variant beat its eager twin per call and where it did not, forward mode's
memory against the pathwise gradient's at the one M measured, and what the unblocked forms
would need where only the blocked ones were run (the memory model's prediction and the
measured growth carried on, never a measurement)."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report import formats, queries
from jacbench.report.legacy import picks
from jacbench.strategies import registry

# An unblocked form predicted (by the model or by its measured growth) under this multiple of
# the cap may have fitted after all: the model is trusted within a factor of two only.
NEAR_CAP = 1.25
# Two peaks within this factor of each other are "about the same".
ABOUT_SAME = 1.1


def _strategy(row: pd.Series) -> registry.Strategy:
    return registry.get(row["framework"], row["strategy"])


# --- Compiled against eager -------------------------------------------------------------------


def compiled_pairs(df: pd.DataFrame) -> pd.DataFrame:
    """Every compiled variant against its eager twin (Strategy.eager_twin) at each N where both
    ran correctly: framework, N, the two names, their warm medians and the two rows."""
    ok = queries.gbm(df, status="ok")
    rows = {(r["framework"], r["strategy"], int(r["paths"])): r for _, r in ok.iterrows()}
    pairs = []
    for (fw, name, n), r in rows.items():
        if fw not in AD_FRAMEWORKS or (twin := registry.get(fw, name).eager_twin) is None:
            continue
        if (e := rows.get((fw, twin, n))) is not None:
            pairs.append((fw, n, name, r["warm_median_s"], twin, e["warm_median_s"], r, e))
    columns = ["framework", "paths", "compiled", "compiled_s", "eager", "eager_s",
               "compiled_row", "eager_row"]  # fmt: skip
    table = pd.DataFrame(pairs, columns=columns).sort_values(["paths", "compiled"])
    order = table["framework"].map(AD_FRAMEWORKS.index)
    return table.iloc[order.argsort(kind="stable")].reset_index(drop=True)


def compiled_sentence(df: pd.DataFrame, margin_by: dict[str, float] | None = None) -> str:
    """Where the compiled variants beat their eager twins per call by more than the noise
    (picks.clearly_faster with the framework's margin), where they did not, and where the eager
    twin clearly won: 'per call, PyTorch's and TensorFlow's beat their eager twins clearly in
    25 of the 30 pairs measured, at N = 100 to 1,000,000; in the other 5 the two are within the
    noise or under a millisecond, ...'."""
    pairs = compiled_pairs(df)
    if pairs.empty:
        return f"per call, against their eager twins, they were {formats.NOT_MEASURED}."
    margin_by = margin_by or {}
    won, lost = [], []
    for _, p in pairs.iterrows():
        m = margin_by.get(p["framework"], 1.0)
        won.append(picks.clearly_faster(p["compiled_row"], p["eager_row"], m))
        lost.append(picks.clearly_faster(p["eager_row"], p["compiled_row"], m))
    won, lost = pd.Series(won, index=pairs.index), pd.Series(lost, index=pairs.index)
    whose = formats.listing([f"{FRAMEWORK_NAMES[fw]}'s" for fw in pairs["framework"].unique()])
    sizes = formats.span(pairs["paths"], lambda n: f"{int(n):,}")
    said = (f"per call, {whose} beat their eager twins by more than the noise in "
            f"{int(won.sum())} of the {len(pairs)} pairs measured, at N = {sizes}")  # fmt: skip
    even = pairs[~won & ~lost]
    if len(even):
        said += f"; in the other {len(even)} the two are within the noise or under a millisecond"
        slower = even[even["compiled_s"] >= even["eager_s"]]
        if len(slower):
            said += (f", and in {len(slower)} of those the compiled one is the slower by the "
                     f"median: {_slower(slower)}")  # fmt: skip
    if lost.any():
        said += (f"; in {int(lost.sum())} the eager twin was the faster by more than the "
                 f"noise: {_slower(pairs[lost])}")  # fmt: skip
    return said + "."


def _slower(pairs: pd.DataFrame) -> str:
    """Compiled variants beside their eager twin, grouped by twin and N: "TensorFlow's
    pathwise-function (85.6 ms) and pathwise-xla (83.9 ms) against pathwise (74.4 ms) at
    N = 100,000"."""
    said = []
    for (fw, n, eager), rows in pairs.groupby(["framework", "paths", "eager"], sort=False):
        compiled = [f"{r['compiled']} ({formats.time(r['compiled_s'])})"
                    for _, r in rows.iterrows()]  # fmt: skip
        said.append(f"{FRAMEWORK_NAMES[fw]}'s {formats.listing(compiled)} against {eager} "
                    f"({formats.time(rows['eager_s'].iloc[0])}) at N = {int(n):,}")  # fmt: skip
    return "; ".join(said)


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
            f", and each one's measured peaks at its two largest N, extended in a straight "
            f"line, give {_extreme(needs, 'carried')}"
        )
    said += ": predictions, not measurements."
    lowest = needs[["predicted", "carried"]].min(axis=1)
    close = needs[lowest <= NEAR_CAP * cap]
    if len(close):
        names = formats.listing([f"{FRAMEWORK_NAMES[r['framework']]}'s {r['strategy']}"
                                 for _, r in close.iterrows()])  # fmt: skip
        by = pd.concat([close["predicted"], close["carried"]]).dropna()
        said += (f" {names} ({formats.span(by, formats.size)} by the two estimates) are not "
                 f"predicted well above the cap: they might have run there.")  # fmt: skip
    return said
