"""How the GBM strategies' warm time grows with N (chapter 4): the slope of log time against log
N, fitted only where arithmetic rather than per-call overhead decides a call's time; the top
decade's growth and the page faults that come with it; and what vectorizing reverse mode did to
the time of the loop it batches."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.report import data, formats, queries
from jacbench.strategies import registry

# A size counts for a strategy's slope where its warm call takes at least this many times its
# warm call at the smallest N it ran: that smallest call bounds the per-call overhead from above,
# so the overhead is at most a fifth of the call (and the call is not data.OVERHEAD_S-quick).
OVER_SMALLEST = 5
# Growth over a decade at least this steep (N^1.25) is counted as steep: the sentence names it.
SUPERLINEAR = 1.25


def share_word(over: int = OVER_SMALLEST) -> str:
    """The share of a call its overhead is at most, in words: 'fifth' for 5, '1/7' otherwise."""
    return {2: "half", 3: "third", 4: "quarter", 5: "fifth", 10: "tenth"}.get(over, f"1/{over}")


def fit_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """The correct rows of one strategy (sorted by N) that its slope is fitted over: those from
    the first N whose warm time is at least OVER_SMALLEST times that at its smallest N, and not
    under data.OVERHEAD_S."""
    runs = runs.dropna(subset=["warm_median_s"]).sort_values("paths")
    if runs.empty:
        return runs
    floor = max(OVER_SMALLEST * float(runs["warm_median_s"].iloc[0]), data.OVERHEAD_S)
    above = (runs["warm_median_s"] >= floor).to_numpy()
    if not above.any():
        return runs.iloc[:0]
    return runs.iloc[int(above.argmax()) :]


def time_slope(runs: pd.DataFrame) -> tuple[float | None, int | None]:
    """The least-squares slope of log warm time against log N over fit_rows, and the N it is
    fitted from; (None, None) with fewer than two sizes there."""
    fit = fit_rows(runs)
    slope = queries.loglog_slope(fit["paths"], fit["warm_median_s"]) if len(fit) >= 2 else None
    return (None, None) if slope is None else (slope, int(fit["paths"].iloc[0]))


def slope_cell(slope: float | None, start: float | None) -> str:
    """'1.28 [10,000]': a slope and the N its fit starts from; '–' where there is none."""
    if formats.missing(slope):
        return "–"
    return f"{slope:.2f} [{formats.count(int(start))}]"


# --- the top decade -----------------------------------------------------------------------------


def top_decades(df: pd.DataFrame) -> pd.DataFrame:
    """Each strategy whose two largest correct sizes are a decade apart: the slope of that
    decade, a warm call's time and page faults at each end."""
    rows = []
    for (fw, name), runs in queries.gbm(df, status="ok").groupby(["framework", "strategy"]):
        runs = runs.dropna(subset=["warm_median_s"]).sort_values("paths")
        if len(runs) < 2:
            continue
        lo, hi = runs.iloc[-2], runs.iloc[-1]
        if hi["paths"] != 10 * lo["paths"]:
            continue
        slope = queries.loglog_slope([lo["paths"], hi["paths"]],
                                     [lo["warm_median_s"], hi["warm_median_s"]])  # fmt: skip
        rows.append({"framework": fw, "strategy": name, "from": int(lo["paths"]),
                     "to": int(hi["paths"]), "slope": slope, "faults_from": lo["warm_faults"],
                     "faults_to": hi["warm_faults"], "time_from": lo["warm_median_s"],
                     "time_to": hi["warm_median_s"]})  # fmt: skip
    columns = ["framework", "strategy", "from", "to", "slope", "faults_from", "faults_to",
               "time_from", "time_to"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def top_decade_sentence(df: pd.DataFrame, heap: pd.DataFrame | None = None) -> str:
    """Which strategies grew as N^SUPERLINEAR or faster over their last decade; the page faults
    a warm call of theirs and of the other strategies of that decade took at its top, and
    whether the two ranges overlap; and, for those measured again with malloc never mapping a
    block (heap: method.mapping_costs), their time then and whether that took the steepness
    away, the others' cause said to be not established. Says so where none grew that fast."""
    decades = top_decades(df)
    fast = decades[decades["slope"] >= SUPERLINEAR]
    if fast.empty:
        return (
            f"Over its last decade no strategy's warm time grew as N^{SUPERLINEAR:.2f} or faster."
        )
    parts = []
    for (lo, hi), group in fast.groupby(["from", "to"]):
        same = decades[(decades["from"] == lo) & (decades["to"] == hi)]
        rest = same[same["slope"] < SUPERLINEAR]
        steep = group.loc[group["slope"].idxmax()]
        parts.append(
            f"Of the {len(same)} strategies whose two largest sizes were N = {formats.count(lo)} "
            f"and {formats.count(hi)}, {len(group)} grew as N^{SUPERLINEAR:.2f} or faster over "
            f"that decade (up to N^{steep['slope']:.2f}, {FRAMEWORK_NAMES[steep['framework']]}'s "
            f"{steep['strategy']})."
        )
        parts += _faults_at_top(group, rest, hi)
        parts += _without_mappings(group, heap)
    return " ".join(parts)


def _faults_at_top(group: pd.DataFrame, rest: pd.DataFrame, hi: int) -> list[str]:
    """The page faults a warm call of the steep strategies took at the decade's top, beside the
    other strategies', and whether the two ranges overlap."""
    steep = group["faults_to"].dropna()
    if steep.empty:
        return []
    said = f"At N = {formats.count(hi)} a warm call of theirs took {_range(steep)} page faults"
    other = rest["faults_to"].dropna()
    if len(other):
        whom = "the other one" if len(rest) == 1 else f"one of the other {len(rest)}"
        said += f", and {whom} took {_range(other)}"
        if steep.min() <= other.max():
            said += ": the two ranges overlap, so the faults do not tell the steep from the others"
    return [said + "."]


_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def _without_mappings(group: pd.DataFrame, heap: pd.DataFrame | None) -> list[str]:
    """The steep strategies measured again at the decade's top with malloc never mapping a
    block of its own: their time then, the decade's slope from their glibc time at its foot,
    and what that says of the cause, for them and (not established) for the others."""
    if heap is None or heap.empty:
        return []
    again = heap[heap["target"] == "strategy"].merge(
        group, left_on=["framework", "strategy", "paths"], right_on=["framework", "strategy", "to"]
    )
    if again.empty:
        return []
    lo, hi = int(group["from"].iloc[0]), int(group["to"].iloc[0])
    names = formats.listing([f"{FRAMEWORK_NAMES[r['framework']]}'s {r['strategy']}"
                             for _, r in again.iterrows()])  # fmt: skip
    only = "only " if len(again) < len(group) else ""
    lead = "" if len(group) == 1 else f"Of these {len(group)}, "
    verb = "was" if len(again) == 1 else "were"
    said = [
        f"{lead}{only}{names} {verb} measured "
        f"again at N = {formats.count(hi)} with malloc never mapping a block of its own "
        "(allocator glibc-heap)."
    ]
    times = []
    for _, r in again.iterrows():
        faults = r["faults_from"]
        took = ("" if formats.missing(faults) else ", where it took no page faults"
                if faults == 0 else f", where it took {formats.count(round(faults))} page faults"
                " a call")  # fmt: skip
        times.append(
            f"{FRAMEWORK_NAMES[r['framework']]}'s {r['strategy']} took {formats.time(r['heap_s'])} "
            f"instead of {formats.time(r['glibc_s'])} (N^{_slope(r):.2f} from its glibc time at "
            f"{formats.count(lo)}{took})"
        )
    said.append(f"Measured so, {formats.listing(times)}.")
    slopes = again.apply(_slope, axis=1)
    cleared, kept = again[slopes < SUPERLINEAR], again[slopes >= SUPERLINEAR]
    if len(cleared):
        who = "it" if len(again) == 1 else f"these {_WORDS.get(len(again), len(again))}"
        if len(kept):
            who = formats.listing([f"{FRAMEWORK_NAMES[r['framework']]}'s {r['strategy']}"
                                   for _, r in cleared.iterrows()])  # fmt: skip
        said.append(f"So for {who}, memory newly mapped from the kernel on every call made the "
                    "decade steep.")  # fmt: skip
    if len(kept):
        said.append(f"Without mappings {formats.listing(list(kept['strategy']))} still grew as "
                    f"N^{SUPERLINEAR:.2f} or faster, so mappings do not explain it.")  # fmt: skip
    if len(again) < len(group):
        said.append(f"What made the other {len(group) - len(again)} steep was not measured.")
    return said


def _range(values: pd.Series) -> str:
    return formats.span(values, lambda v: formats.count(round(float(v))))


def _slope(r) -> float:
    return queries.loglog_slope([r["from"], r["to"]], [r["time_from"], r["heap_s"]])


# --- vectorizing reverse mode against its loop --------------------------------------------------


def vectorizing(df: pd.DataFrame) -> pd.DataFrame:
    """Each vectorized reverse mode beside the loop it batches (the registry's vectorizes) at
    every N both ran correctly: the vectorized warm time over the loop's ("ratio")."""
    rows = []
    for fw in FRAMEWORKS:
        for s in registry.by_framework(fw, "gbm"):
            if not s.vectorizes:
                continue
            found = queries.gbm(df, framework=fw, status="ok")
            for n in sorted(set(found["paths"])):
                at = found[found["paths"] == n]
                v = queries.one(at, strategy=s.name)
                lp = queries.one(at, strategy=s.vectorizes)
                if v is None or lp is None:
                    continue
                rows.append({"framework": fw, "vectorized": s.name, "loop": s.vectorizes,
                             "paths": int(n),
                             "ratio": float(v["warm_median_s"] / lp["warm_median_s"])})  # fmt: skip
    return pd.DataFrame(rows, columns=["framework", "vectorized", "loop", "paths", "ratio"])


def _verdict(k: float) -> str:
    """'slower' or 'faster' only where the factor, to the two decimals it is read to, is beyond
    formats.ABOUT_THE_SAME (1.15 itself is about as fast); else 'about as fast'."""
    if round(k, 2) > formats.ABOUT_THE_SAME:
        return "slower"
    return "faster" if round(1 / k, 2) > formats.ABOUT_THE_SAME else "about as fast"


def vectorizing_sentence(df: pd.DataFrame) -> str:
    """What vectorizing reverse mode did to the warm time of the loop it batches, framework by
    framework and N by N, as sentences of their own: 'Here it bought time only sometimes.
    Against the loop it batches, TensorFlow's tape-jacobian-pfor ran faster at N = 100, 1,000
    and 3,000 (2.6× to 4.5×); ...'. Says so where no pair was measured."""
    pairs = vectorizing(df)
    if pairs.empty:
        return "What that trade costs in time is not measured in this build."
    verdicts = pairs["ratio"].map(_verdict)
    lead = {True: "Here it never bought time", False: "Here it bought time only sometimes"}[
        not (verdicts == "faster").any()
    ]
    if (verdicts == "faster").all():
        lead = "Here it bought time as well"
    clauses = []
    for fw, mine in pairs.assign(verdict=verdicts).groupby("framework", sort=False):
        by_n = mine.groupby("paths")["verdict"].agg(lambda v: v.iloc[0] if v.nunique() == 1
                                                     else "mixed")  # fmt: skip
        said = []
        for verdict in ("faster", "about as fast", "slower", "mixed"):
            sizes = by_n[by_n == verdict].index
            if not len(sizes):
                continue
            k = mine[mine["paths"].isin(sizes)]["ratio"]
            fold = "" if verdict in ("about as fast", "mixed") else (
                f" ({formats.span(k if verdict == 'slower' else 1 / k, formats.times)})"
            )  # fmt: skip
            said.append(f"{verdict} at N = {formats.listing([formats.count(n) for n in sizes])}"
                        f"{fold}")  # fmt: skip
        names = formats.listing(list(dict.fromkeys(mine["vectorized"])))
        clauses.append(f"{FRAMEWORK_NAMES[fw]}'s {names} ran {formats.listing(said)}")
    return f"{lead}. Against the loop it batches, " + "; ".join(clauses) + "."
