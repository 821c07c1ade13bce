"""How far a ratio travels (chapter 4): the side-by-side ratios at one N measured on two
occasions, the reference dataset and a second sweep of the same cases in another session, and
how much each moved between them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.measure import store
from jacbench.report import data, dataset, formats, queries
from jacbench.strategies import registry

# The second occasion: the efficient profile's cases (the standard profile's at N = 10^6),
# measured again beside the reference dataset (jacbench sweep --profile efficient --out ...).
SECOND = dataset.FOLDER / "efficient.csv"


def staged_name(results: Path) -> Path:
    """Where a book's staging tree puts the second occasion: beside its staged results."""
    return results.with_name(results.stem + ".second" + results.suffix)


def second_occasion(results: str | Path) -> pd.DataFrame | None:
    """The second occasion's rows when the results are the reference dataset (the committed
    file, with efficient.csv beside it, or a book's staged copy, with the copy staged beside
    it); None otherwise (a book from one's own sweep has one occasion)."""
    results = Path(results)
    is_reference = results.resolve().parts[-len(dataset.RESULTS.parts) :] == dataset.RESULTS.parts
    second = results.parent / SECOND.name if is_reference else staged_name(results)
    return data.load(second) if second.exists() else None


def moved(first: pd.DataFrame, second: pd.DataFrame, paths: int) -> pd.DataFrame:
    """Every strategy timed against its simulation at N = paths on both occasions: both
    ratios with their spreads, the second's median over the first's ("moved") and whether the
    second's median lies inside the first's spread ("inside"), framework by framework in the
    book's order (strategies by name within one)."""
    rows = []
    for _, a in queries.gbm(first, paths=paths, status="ok").iterrows():
        same = {k: a[k] for k in ("framework", "strategy", "dtype", "allocator")}
        b = queries.one(second, problem="gbm", paths=paths, status="ok", **same)
        if formats.missing(a["ratio_median"]) or b is None or formats.missing(b["ratio_median"]):
            continue
        rows.append({
            "framework": a["framework"], "strategy": a["strategy"], "first": a, "second": b,
            "moved": b["ratio_median"] / a["ratio_median"],
            "inside": bool(a["ratio_lo"] <= b["ratio_median"] <= a["ratio_hi"]),
        })  # fmt: skip
    table = pd.DataFrame(rows, columns=["framework", "strategy", "first", "second", "moved",
                                        "inside"])  # fmt: skip
    order = table["framework"].map(FRAMEWORKS.index)
    return table.iloc[order.argsort(kind="stable")].reset_index(drop=True)


def factors(table: pd.DataFrame) -> pd.Series:
    """How far each ratio of a moved table travelled, either way: at least 1 (1.3 for a ratio
    30 % higher or 23 % lower)."""
    return table["moved"].map(lambda m: max(m, 1 / m))


def largest_move(table: pd.DataFrame) -> dict | None:
    """The ratio that moved most between the occasions, either way: its row with "factor"
    (at least 1: 1.3 for a ratio 30 % higher or 23 % lower); None for an empty table."""
    if table.empty:
        return None
    factor = factors(table)
    row = table.loc[factor.idxmax()]
    return {**row.to_dict(), "factor": float(factor.max())}


def outside_phrase(table: pd.DataFrame) -> str | None:
    """'5 of the 17 second-occasion medians lie outside the first occasion's spread'; None
    for an empty table."""
    if table.empty:
        return None
    out, n = int((~table["inside"]).sum()), len(table)
    noun = "median lies" if out == 1 else "medians lie"
    return f"{out} of the {n} second-occasion {noun} outside the first occasion's spread"


def sentence(table: pd.DataFrame | None, paths: int | None) -> str:
    """What the two occasions say, as one or two sentences for the chapter."""
    top = largest_move(table) if table is not None else None
    if top is None:
        return (
            "This book's dataset has one occasion only (a second is measured beside the "
            "reference dataset), so how far its ratios travel is not measured here."
        )
    name = f"{FRAMEWORK_NAMES[top['framework']]}'s {top['strategy']}"
    return (
        f"Between the two occasions the medians at N = {formats.count(paths)} moved by up to "
        f"{top['factor']:.2f}× ({name}: {formats.times(top['first']['ratio_median'], 2)} then "
        f"{formats.times(top['second']['ratio_median'], 2)}), and {outside_phrase(table)}. "
        "A difference between two strategies smaller than that is no ground for ranking them."
        + method_note(table)
    )


# What each measuring method was (store.METHOD), as the note on two occasions names it.
METHOD_WORDS = {
    1: "pairs timed back to back",
    2: "settled pairs",
    3: "settled pairs and glibc's thresholds fixed",
}


def method_note(table: pd.DataFrame) -> str:
    """A sentence when the two occasions measured some ratio with different methods (one of
    them measured again since), whose movement then is the method's as much as the
    occasion's, each side's method named (its most frequent); empty when every ratio was
    measured alike on both."""
    first = [store.row_method(r["first"]) for _, r in table.iterrows()]
    second = [store.row_method(r["second"]) for _, r in table.iterrows()]
    differ = sum(a != b for a, b in zip(first, second, strict=True))
    if not differ:
        return ""
    which = "all of these" if differ == len(table) else f"{differ} of these {len(table)}"

    def words(methods: list[int]) -> str:
        method = max(set(methods), key=methods.count)
        return METHOD_WORDS.get(method, f"method {method}")

    return (
        f" For {which} ratios the two occasions used different measuring methods (the "
        f"dataset's {words(first)}, the second occasion's {words(second)}; see how the ratios "
        "are measured), so their movement includes the change of method as well as the "
        "occasions'."
    )


def coverage(first: pd.DataFrame, table: pd.DataFrame | None, paths: int | None) -> str:
    """Which of the first occasion's ratios at N the second measured again, said after 'for':
    'all 17 strategies timed at N = 1,000,000', 'all but the 6 blocked strategies (17 of 23)'
    or, where others are missing, the missing ones named; a plain phrase without a second."""
    if table is None or paths is None:
        return "none of them: there is no second occasion in this build"
    timed = queries.gbm(first, paths=paths, status="ok").dropna(subset=["ratio_median"])
    again = set(zip(table["framework"], table["strategy"], strict=True))
    missing = [(fw, s) for fw, s in zip(timed["framework"], timed["strategy"], strict=True)
               if (fw, s) not in again]  # fmt: skip
    if not missing:
        return f"all {len(timed)} strategies timed at N = {formats.count(paths)}"
    count = f"({len(table)} of {len(timed)})"
    if all(registry.get(fw, s).blocked for fw, s in missing):
        blocked = "the blocked strategy" if len(missing) == 1 else (
            f"the {len(missing)} blocked strategies")  # fmt: skip
        return f"all but {blocked} {count}"
    names = [f"{FRAMEWORK_NAMES[fw]}'s {s}" for fw, s in missing]
    return f"all but {formats.listing(names)} {count}"
