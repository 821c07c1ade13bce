"""A dataset (measure.dataset.Dataset) as the report reads it: its rows as a frame, the other
sessions' rows, the margins measured from them and the crossover's rows, each opened on first
use and kept in the value, so that a page measures its margins once; and whether rows are the
reference dataset."""

from __future__ import annotations

import pandas as pd

from jacbench.measure import crossover as tall_to_wide
from jacbench.measure.dataset import FIGURE, FOLDER, PROFILE, RESULTS, Dataset, reference
from jacbench.report import data
from jacbench.report import margins as noise

# What report.dataset gives a page: measure.dataset's names, and the members opened.
__all__ = [
    "FIGURE",
    "FOLDER",
    "PROFILE",
    "RESULTS",
    "Dataset",
    "reference",
    "crossover",
    "is_reference",
    "margins",
    "others",
    "rows",
    "sessions",
]


def rows(ds: Dataset) -> pd.DataFrame:
    """The results (report.data.load): one frame per value, which no page changes."""
    return ds.once("rows", lambda: data.load(ds.results))


def sessions(ds: Dataset) -> dict[str, pd.DataFrame]:
    """The rows of every other session the results have, by which ("second", "third")."""
    return ds.once("sessions", lambda: {w: data.load(p) for w, p in ds.sessions().items()})


def others(ds: Dataset) -> list[pd.DataFrame]:
    """The other sessions' rows, in order ([] for a reader's own results)."""
    return list(sessions(ds).values())


def margins(ds: Dataset) -> noise.Margins:
    """The margins (report.margins.measure) of the results against their other sessions."""
    return ds.once("margins", lambda: noise.measure(rows(ds), others(ds)))


def crossover(ds: Dataset) -> list[dict]:
    """The crossover's rows (measure.crossover.read), typed; [] where none was measured."""
    path = ds.crossover
    return ds.once("crossover", lambda: tall_to_wide.read(path) if path.exists() else [])


def is_reference(df: pd.DataFrame) -> bool:
    """Whether rows (report.data.load) are the reference dataset: as a book's build staged it
    (its metadata says so) or the committed file itself."""
    staged = (df.attrs.get("meta") or {}).get("dataset")
    if isinstance(staged, dict) and "reference" in staged:
        return bool(staged["reference"])
    return Dataset(str(df.attrs.get("path", ""))).committed
