"""How far a ratio travels (chapter 4): the side-by-side ratios measured on several occasions,
the reference dataset and sweeps of the same cases in other sessions (a second at one N, a third
at two, on a processor its sweep recorded), and how much each moved from the reference's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.measure import store
from jacbench.report import data, dataset, formats, queries
from jacbench.report.legacy.gbm import ratio_cell
from jacbench.report.legacy.method import AGREE, apart
from jacbench.strategies import registry

# The other occasions: cases of the reference dataset measured again, in other sessions, beside
# it (jacbench sweep --profile NAME --out ...). The second, the efficient profile's cases (the
# standard profile's at N = 10^6); the third, the ratios profile's (every case the standard
# profile times in three workers, at N = 10^5 and 10^6), on a machine whose processor the sweep
# recorded.
SECOND = dataset.FOLDER / "efficient.csv"
THIRD = dataset.FOLDER / "ratios.csv"
OTHERS = {"second": SECOND, "third": THIRD}


def staged_name(results: Path, which: str = "second") -> Path:
    """Where a book's staging tree puts an occasion ("second", "third"): beside its staged
    results."""
    return results.with_name(f"{results.stem}.{which}{results.suffix}")


def occasion_path(results: str | Path, which: str = "second") -> Path | None:
    """The file of an occasion ("second", "third") of these results: beside the reference
    dataset (the committed file, or a book's staged copy of it); None for other results (a
    book from one's own sweep has one occasion)."""
    results = Path(results)
    is_reference = results.resolve().parts[-len(dataset.RESULTS.parts) :] == dataset.RESULTS.parts
    path = results.parent / OTHERS[which].name if is_reference else staged_name(results, which)
    return path if path.exists() else None


def occasion(results: str | Path, which: str = "second") -> pd.DataFrame | None:
    """An occasion's rows (see occasion_path); None where there is none."""
    path = occasion_path(results, which)
    return data.load(path) if path is not None else None


def second_occasion(results: str | Path) -> pd.DataFrame | None:
    """The second occasion's rows when the results are the reference dataset (the committed
    file, with efficient.csv beside it, or a book's staged copy, with the copy staged beside
    it); None otherwise (a book from one's own sweep has one occasion)."""
    return occasion(results, "second")


def others(results: str | Path) -> list[pd.DataFrame]:
    """The rows of every occasion besides the reference's that these results have, in order."""
    return [o for o in (occasion(results, which) for which in OTHERS) if o is not None]


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


def moved_by_n(first: pd.DataFrame, other: pd.DataFrame) -> dict[int, pd.DataFrame]:
    """moved at each N of another occasion where some ratio was measured on both, by N."""
    tables = {int(n): moved(first, other, int(n)) for n in sorted(set(other["paths"].dropna()))}
    return {n: t for n, t in tables.items() if len(t)}


def travel_table(table: pd.DataFrame, third: pd.DataFrame | None = None) -> pd.DataFrame:
    """A moved table as the chapter shows it: each ratio with its spread on the first and second
    occasions, the second's over the first's and, with a third occasion, its ratio at the same
    N ('–' where it measured none)."""
    shown = pd.DataFrame({
        "framework": table["framework"].map(FRAMEWORK_NAMES), "strategy": table["strategy"],
        "first occasion": table["first"].map(ratio_cell),
        "second occasion": table["second"].map(ratio_cell),
        "second / first": table["moved"].map(lambda m: formats.times(m, 2)),
    })  # fmt: skip
    if third is not None:
        cells = []
        for _, r in table.iterrows():
            same = {k: r["first"][k] for k in ("framework", "strategy", "dtype", "allocator")}
            row = queries.one(third, problem="gbm", paths=r["first"]["paths"], status="ok", **same)
            cells.append(ratio_cell(row) if row is not None else "–")
        shown["third occasion"] = cells
    return shown


def factors(table: pd.DataFrame) -> pd.Series:
    """How far each ratio of a moved table travelled, either way: at least 1 (1.3 for a ratio
    30 % higher or 23 % lower)."""
    return table["moved"].map(lambda m: apart(m, 1.0))


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


def processor(path: str | Path | None) -> str | None:
    """The processor a sweep recorded in its metadata: 'AMD EPYC family 25 model 17,
    avx512f'; None where it recorded no more than the model's name, or there is no file."""
    if path is None:
        return None
    meta = store.read_meta(Path(path))
    detail, name = meta.get("cpu_detail"), meta.get("cpu")
    if not detail:
        return None
    return f"{name} {detail}" if name else str(detail)


def agreement(df: pd.DataFrame, sizes: list[int]) -> tuple[int, int, dict | None]:
    """At these N, how many ratios timed side by side agree within AGREE of the one the warm
    medians give (the strategy's over its simulation's), of how many, and the widest gap (row's
    framework, strategy, paths, "factor")."""
    agree = total = 0
    widest = None
    for _, row in queries.gbm(df, "strategy", status="ok").iterrows():
        sim = queries.simulation_of(df, row)
        side = queries.ratio(row)
        if int(row["paths"]) not in sizes or sim is None or side is None:
            continue
        warm = float(row["warm_median_s"] / sim["warm_median_s"])
        factor = apart(side, warm)
        total += 1
        agree += factor <= AGREE
        if widest is None or factor > widest["factor"]:
            widest = {"framework": row["framework"], "strategy": row["strategy"],
                      "paths": int(row["paths"]), "factor": factor}  # fmt: skip
    return agree, total, widest


def _widest(widest: dict) -> str:
    return (f"widest {formats.times(widest['factor'], 2)}, "
            f"{FRAMEWORK_NAMES[widest['framework']]}'s {widest['strategy']} at "
            f"{formats.count(widest['paths'])}")  # fmt: skip


def same_processor(machine: str | None, first_machine: str | None) -> bool:
    """Whether an occasion's sweep recorded the processor the dataset's sweep recorded."""
    return bool(machine) and machine == first_machine


def measured_where(machine: str | None, first_machine: str | None) -> str:
    """Where an occasion was measured, against the dataset's processor, as its sentences say it:
    'on AMD EPYC family 25 model 17, avx512f (the dataset's: not recorded)', 'in another session
    on the dataset's processor (...)', or 'on another machine of this kind' where its sweep
    recorded none."""
    if not machine:
        return "on another machine of this kind"
    if same_processor(machine, first_machine):
        return f"in another session on the dataset's processor ({machine})"
    return f"on {machine} (the dataset's: {first_machine or 'not recorded'})"


def third_sentence(first: pd.DataFrame, third: pd.DataFrame | None, machine: str | None,
                   first_machine: str | None) -> str:  # fmt: skip
    """What a third occasion, on a machine whose processor its sweep recorded, says: how far its
    ratios moved from the reference's at each N, and whether its two measures of a ratio (side by
    side, and from the warm medians) agree where the reference's did not; '' without one."""
    if third is None:
        return ""
    tables = moved_by_n(first, third)
    if not tables:
        return "A third occasion is in this build, but none of its ratios is in the dataset."
    where = measured_where(machine, first_machine)
    moves = []
    for n, t in tables.items():
        top = largest_move(t)
        moves.append(
            f"{top['factor']:.2f}× at {formats.count(n)} ("
            f"{FRAMEWORK_NAMES[top['framework']]}'s {top['strategy']}: "
            f"{formats.times(top['first']['ratio_median'], 2)} then "
            f"{formats.times(top['second']['ratio_median'], 2)})"
        )
    both = pd.concat(tables.values())
    out = int((~both["inside"]).sum())
    sizes_said = formats.listing([formats.count(n) for n in tables])
    said = (
        f"A third occasion, {where}, measured the same cases at N = {sizes_said} "
        f"(book/reference/{THIRD.name}): its ratios moved by up to {formats.listing(moves)}; "
        f"{out} of its {len(both)} {'median lies' if out == 1 else 'medians lie'} outside the "
        "dataset's spread."
    )
    agree, total, widest = agreement(third, list(tables))
    ref_agree, ref_total, ref_widest = agreement(first, list(tables))
    if total and ref_total:
        said += (
            f" Side by side and from the warm medians, its ratios agree within {AGREE:g}× in "
            f"{agree} of {total} ({_widest(widest)}), the dataset's in {ref_agree} of "
            f"{ref_total} ({_widest(ref_widest)})."
        )
    return said


def times_elsewhere(first: pd.DataFrame, other: pd.DataFrame | None, machine: str | None,
                    first_machine: str | None = None) -> str:  # fmt: skip
    """How the warm times of an occasion measured in another session (on the processor its sweep
    recorded, the dataset's or another) compare with the dataset's, framework by framework, over
    every case both measured ('PyTorch 0.82× to 1.35× (median 0.95×), ...'), and the furthest a
    warm time moved beside the furthest a side-by-side ratio moved; '' without the occasion or a
    case in common."""
    if other is None:
        return ""
    rows = []
    for _, b in queries.gbm(other, status="ok").iterrows():
        same = {k: b[k] for k in ("framework", "strategy", "target", "dtype", "allocator")}
        a = queries.one(first, problem="gbm", paths=b["paths"], status="ok", **same)
        if a is not None and a["warm_median_s"] > 0:
            factor = float(b["warm_median_s"] / a["warm_median_s"])
            rows.append((b["framework"], b["strategy"], int(b["paths"]), factor))
    if not rows:
        return ""
    table = pd.DataFrame(rows, columns=["framework", "strategy", "paths", "factor"])
    said = [
        f"{FRAMEWORK_NAMES.get(fw, fw)} {formats.times(f.min(), 2)} to {formats.times(f.max(), 2)} "
        f"(median {formats.times(f.median(), 2)})"
        for fw, f in sorted(table.groupby("framework")["factor"],
                            key=lambda item: FRAMEWORKS.index(item[0]))
    ]  # fmt: skip
    sizes = sorted(set(table["paths"]))
    text = (
        f"Measured again {measured_where(machine, first_machine)}, as the third occasion of the "
        f"GBM chapter's ratios (book/reference/{THIRD.name}), the same cases at N = "
        f"{formats.listing([formats.count(n) for n in sizes])} took, warm, against this "
        f"dataset's times: {formats.listing(said)}."
    )
    either = table["factor"].map(lambda m: apart(m, 1.0))
    top = table.loc[either.idxmax()]
    ratios = list(moved_by_n(first, other).values())
    ratio_top = float(factors(pd.concat(ratios)).max()) if ratios else None
    text += (f" A warm time moved by up to {either.max():.2f}× "
             f"({FRAMEWORK_NAMES.get(top['framework'], top['framework'])}'s {top['strategy']} at "
             f"{formats.count(top['paths'])})")  # fmt: skip
    if ratio_top is None:
        return text + "."
    if ratio_top < either.max():
        return text + (
            f", a ratio to a simulation timed beside it by up to {ratio_top:.2f}×: "
            + ("absolute times moved more between two sessions on one processor than the "
               "ratios did." if same_processor(machine, first_machine) else
               "absolute times are the measuring machine's, and the ratios moved less between "
               "machines.")
        )  # fmt: skip
    return (
        text + f", a ratio to a simulation timed beside it by as much or more ({ratio_top:.2f}×)."
    )
