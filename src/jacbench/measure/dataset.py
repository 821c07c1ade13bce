"""A dataset: a results file and the files kept beside it, each named here and nowhere else.

Its members: the results (NAME.csv) and their metadata sidecar (NAME.meta.json), the tall-to-wide
crossover rows and theirs (NAME.crossover.csv, NAME.crossover.meta.json), the other measuring
sessions of the same cases (NAME.second.csv, NAME.third.csv, each with its sidecar) and the
reference's advice. One scheme names the committed reference (book/reference/standard.csv, where
the other sessions keep their profiles' names, efficient.csv and ratios.csv), the copy a book's
staging tree makes (data/results.csv and its members beside it) and a reader's own results.

A member is opened when first asked for, once per value: the metadata here; the rows as frames,
the margins measured from them and the crossover's rows by report.dataset, which takes this value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TypeVar

# The reference dataset: the standard profile measured on the reference machine, committed.
FOLDER = Path("book/reference")
PROFILE = "standard"
RESULTS = FOLDER / f"{PROFILE}.csv"
FIGURE = FOLDER / "gbm-time.png"  # the README's figure, drawn from it
# The reference's advice ("Your function"): measured by make reference, shown by every book.
ADVICE = FOLDER / "advice"
# Where a book's staging tree puts the results (relative to the tree, the notebooks' folder).
STAGED = Path("data/results.csv")
# The other sessions: some of the reference's cases measured again, in other sessions, beside it
# (report.margins measures the noise between sessions from them). The second, the efficient
# profile's cases; the third, the ratios profile's. Committed under their profile's name.
SESSIONS = {"second": "efficient", "third": "ratios"}

T = TypeVar("T")


def _sidecar(path: Path) -> Path:
    """The metadata sidecar of a results file: NAME.meta.json beside NAME.csv."""
    return path.with_suffix(".meta.json")


@dataclass(frozen=True)
class Dataset:
    """A results file and its members, named from its path (str or Path)."""

    results: Path
    _opened: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", Path(self.results))

    @property
    def committed(self) -> bool:
        """Whether the results are the committed reference's file, book/reference/standard.csv."""
        return self.results.resolve().parts[-len(RESULTS.parts) :] == RESULTS.parts

    @property
    def meta(self) -> Path:
        """The results' metadata sidecar."""
        return _sidecar(self.results)

    @property
    def crossover(self) -> Path:
        """The crossover's rows, a results file of their own."""
        return self.results.with_name(f"{self.results.stem}.crossover.csv")

    @property
    def crossover_meta(self) -> Path:
        """The crossover's metadata sidecar."""
        return _sidecar(self.crossover)

    def session(self, which: str) -> Path:
        """Another session's file ("second", "third"), whether it exists or not."""
        if self.committed:
            return self.results.with_name(f"{SESSIONS[which]}{self.results.suffix}")
        return self.results.with_name(f"{self.results.stem}.{which}{self.results.suffix}")

    def sessions(self) -> dict[str, Path]:
        """The other sessions these results have, in order ({} for a reader's own)."""
        return {w: p for w in SESSIONS if (p := self.session(w)).exists()}

    @property
    def advice(self) -> Path:
        """The advice folder: beside the committed reference; for any other results (a sweep
        measures none) the reference's, where a checkout or a book's staging tree holds it."""
        return self.results.with_name(ADVICE.name) if self.committed else ADVICE

    def files(self) -> dict[str, Path]:
        """Every member file by its name in the scheme, whether it exists or not."""
        found = {"results": self.results, "meta": self.meta, "crossover": self.crossover}
        found["crossover meta"] = self.crossover_meta
        for which in SESSIONS:
            found[which] = self.session(which)
            found[f"{which} meta"] = _sidecar(self.session(which))
        return found

    @property
    def staged(self) -> Dataset:
        """The same members as a book's staging tree names them: data/results.csv, ..."""
        return Dataset(STAGED)

    @cached_property
    def metadata(self) -> dict:
        """The results' metadata ({} where there is no sidecar)."""
        return json.loads(self.meta.read_text()) if self.meta.exists() else {}

    @cached_property
    def crossover_metadata(self) -> dict:
        """The crossover's metadata ({} where there is none)."""
        return Dataset(self.crossover).metadata

    def once(self, what: str, open_: Callable[[], T]) -> T:
        """What open_ returns, opened on the first call for what and kept in this value: how
        report.dataset opens the members as frames and measures the margins once."""
        if what not in self._opened:
            self._opened[what] = open_()
        return self._opened[what]


def reference(root: Path | str = Path(".")) -> Dataset:
    """The committed reference dataset under a checkout's root."""
    return Dataset(Path(root) / RESULTS)
