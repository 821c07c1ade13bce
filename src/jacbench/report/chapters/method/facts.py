"""How a case runs, how a ratio is timed, the measuring sessions and the margins they give, as
numbers and flags."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from jacbench.constants import FRAMEWORKS, SKIP_ABOVE
from jacbench.measure import runner, worker
from jacbench.report import dataset, margins, queries
from jacbench.report.chapters.method.memory import (
    Allocators,
    Experiment,
    Faults,
    allocators,
    experiment,
    faults,
)
from jacbench.report.chapters.method.ynnpack import Ynn, ynn


@dataclass(frozen=True)
class Settings:
    """What the harness did with every case, from its constants and the rows."""

    mem_cap: float | None  # the cap most cases ran under, bytes
    skip_above: float  # a predicted peak above this multiple of the cap: skipped
    min_calls: int  # at least this many warm calls and pairs...
    long_call_s: float  # ... unless one warm call takes this long
    settle_below_s: float  # a side of a pair quicker than this is called once untimed first
    min_pairs: int  # pairs made while they take less than pairs_within_s
    pairs_within_s: float
    several_below_s: float  # a case quicker than this is timed in more than one worker
    workers: int  # the most workers one case's ratio was timed in
    worker_sizes: tuple[int, ...]  # the N at which ratios come from several workers
    floor_s: float  # nothing quicker than this is ranked
    skipped: int  # rows skipped on the model's word
    capped: int  # rows the cap stopped
    few_calls_long: bool  # every row with fewer than min_calls warm calls took long_call_s


@dataclass(frozen=True)
class Spread:
    """The furthest apart two workers' warm medians of one simulation were."""

    factor: float
    framework: str
    mode: str  # the simulation's execution mode
    paths: int


@dataclass(frozen=True)
class Session:
    """One measuring session: the reference dataset's own, or another that measured some of its
    cases again."""

    which: str  # "reference", "second", "third", or "this" for a reader's own results
    file: str
    finished: str  # the date its sweep finished
    rows: int
    sizes: tuple[int, ...]
    processor: str | None  # as its sweep recorded it (model, family, flags), None if not
    matched: int  # cases it shares with the dataset (the dataset itself: every row)


@dataclass(frozen=True)
class Facts:
    """What the method chapter says, as numbers and flags."""

    settings: Settings
    spread: Spread | None
    sessions: tuple[Session, ...]
    margins: margins.Margins
    matched: Mapping[str, int]  # per framework, the cases the margins were measured on
    one_setting: bool  # at each N, every GBM row of a framework ran under one malloc setting
    allocators: Allocators
    experiment: Experiment | None
    faults: Faults
    ynn: Ynn | None

    @property
    def same_processor(self) -> bool:
        """Whether some other session ran on the processor the dataset's sweep recorded."""
        first = self.sessions[0].processor
        return bool(first) and any(s.processor == first for s in self.sessions[1:])


def settings(df: pd.DataFrame) -> Settings:
    """The harness's settings, and what they did to these rows."""
    caps = df["mem_cap"].dropna()
    several = df[(df["ratio_processes"] > 1).fillna(False).astype(bool)]
    ok = df[df["status"] == "ok"]
    few = ok[(ok["warm_n"] < worker.MIN_CALLS).fillna(False).astype(bool)]
    return Settings(
        mem_cap=float(caps.mode().iloc[0]) if len(caps) else None,
        skip_above=SKIP_ABOVE,
        min_calls=worker.MIN_CALLS,
        long_call_s=worker.LONG_CALL_S,
        settle_below_s=worker.SETTLE_BELOW_S,
        min_pairs=worker.MIN_PAIRS,
        pairs_within_s=worker.MIN_PAIRS_WITHIN_S,
        several_below_s=runner.MAX_CALL_FOR_MORE_PROCESSES_S,
        workers=int(df["ratio_processes"].max()) if len(df) else 1,
        worker_sizes=tuple(sorted({int(n) for n in several["paths"].dropna()})),
        floor_s=margins.FLOOR_S,
        skipped=int((df["status"] == "skipped-predicted").sum()),
        capped=int((df["status"] == "memory-cap").sum()),
        few_calls_long=bool((few["warm_median_s"] >= worker.LONG_CALL_S).all()),
    )


def _medians(text) -> list[float]:
    """A row's warm median in each of its workers (its warm_by_process, '0.0154;0.0497')."""
    if pd.isna(text):
        return []
    return [float(x) for x in str(text).split(";") if x]


def spread(df: pd.DataFrame) -> Spread | None:
    """The simulation whose workers' warm medians lay furthest apart; None where no simulation
    was timed in more than one worker."""
    widest = None
    for _, row in queries.gbm(df, "simulation", status="ok").iterrows():
        medians = [m for m in _medians(row["warm_by_process"]) if m > 0]
        if len(medians) > 1 and (widest is None or max(medians) / min(medians) > widest.factor):
            mode = queries.short_name(row)
            widest = Spread(
                max(medians) / min(medians), str(row["framework"]), mode, int(row["paths"])
            )
    return widest


def _matched(df: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """The GBM cases measured correctly in both, one row each (what the margins compare)."""
    keys = [*margins.SAME_CASE, "paths"]
    a, b = queries.gbm(df, status="ok"), queries.gbm(other, status="ok")
    return a[keys].merge(b[keys], on=keys)


def session(rows: pd.DataFrame, which: str, file: str, matched: int) -> Session:
    """A session's facts from its rows and the metadata beside them."""
    meta = rows.attrs.get("meta") or {}
    sizes = tuple(sorted({int(n) for n in queries.gbm(rows, ("strategy", "simulation"))["paths"]}))
    # The processor as a sweep records it: the model's name, then family and flags where known.
    named = [str(meta[k]) for k in ("cpu", "cpu_detail") if meta.get(k)]
    processor = " ".join(named) if meta.get("cpu_detail") else None
    date = str(meta.get("date", ""))[:10]
    return Session(which, file, date, len(rows), sizes, processor, matched)


def sessions(df: pd.DataFrame, others: Mapping[str, pd.DataFrame]) -> tuple[Session, ...]:
    """The dataset's session first, then each other one (by which: report.dataset.sessions) in
    order, each named by its committed file in the reference dataset."""
    reference = dataset.is_reference(df)
    source = ((df.attrs.get("meta") or {}).get("dataset") or {}).get("source")
    committed = dataset.reference()
    file = committed.results.as_posix() if reference else Path(source or df.attrs["path"]).name
    found = [session(df, "reference" if reference else "this", file, len(df))]
    for which, other in others.items():
        name = committed.session(which).as_posix()
        found.append(session(other, which, name, len(_matched(df, other))))
    return tuple(found)


def one_setting(df: pd.DataFrame) -> bool:
    """Whether at every N the GBM rows of each framework under glibc ran with one setting of
    malloc (as it comes, or its thresholds fixed): compiled and eager alike."""
    rows = queries.without_draws(queries.gbm(df, ("strategy", "simulation")))
    setting = rows["malloc_env"].fillna("")
    return bool((setting.groupby([rows["framework"], rows["paths"]]).nunique() <= 1).all())


def facts(
    df: pd.DataFrame,
    found: margins.Margins | None = None,
    others: Mapping[str, pd.DataFrame] | None = None,
) -> Facts:
    """The method chapter's facts from the dataset's rows, its margins and its other sessions'
    rows by which (report.dataset.margins and .sessions; none given: unmeasured, no other)."""
    others = {w: o for w, o in (others or {}).items() if len(o)}
    found = margins.measure(df) if found is None else found
    matched = pd.concat([_matched(df, o) for o in others.values()]) if others else pd.DataFrame()
    counts = matched.groupby("framework").size() if len(matched) else pd.Series(dtype=int)
    return Facts(
        settings=settings(df),
        spread=spread(df),
        sessions=sessions(df, others),
        margins=found,
        matched={fw: int(counts.get(fw, 0)) for fw in FRAMEWORKS},
        one_setting=one_setting(df),
        allocators=allocators(df, found),
        experiment=experiment(df),
        faults=faults(df, found),
        ynn=ynn(df, found),
    )
