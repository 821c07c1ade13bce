"""Which dataset a book is built from: the reference dataset's place in the checkout, whether
rows are it, and the other measuring sessions kept beside it."""

from __future__ import annotations

from pathlib import Path

FOLDER = Path("book/reference")
PROFILE = "standard"
RESULTS = FOLDER / f"{PROFILE}.csv"
FIGURE = FOLDER / "gbm-time.png"


def results_path(root: Path = Path(".")) -> Path:
    """The reference dataset's results file under a checkout's root."""
    return Path(root) / RESULTS


def is_reference(df) -> bool:
    """Whether rows (report.data.load) are the reference dataset: as a book's build staged it
    (its metadata says so) or the committed file itself."""
    staged = (df.attrs.get("meta") or {}).get("dataset")
    if isinstance(staged, dict) and "reference" in staged:
        return bool(staged["reference"])
    path = Path(str(df.attrs.get("path", ""))).resolve()
    return path.parts[-len(RESULTS.parts) :] == RESULTS.parts


# The other sessions: some of the reference dataset's cases measured again, in other sessions,
# beside it. The second, the efficient profile's cases (the standard profile's at N = 10^6); the
# third, the ratios profile's (every case the standard profile times in three workers, at
# N = 10^5 and 10^6), on a processor its sweep recorded. They measure the noise between sessions
# (report.margins).
OTHERS = {"second": FOLDER / "efficient.csv", "third": FOLDER / "ratios.csv"}


def staged_name(results: Path, which: str = "second") -> Path:
    """Where a book's staging tree puts another session's file: beside its staged results."""
    return results.with_name(f"{results.stem}.{which}{results.suffix}")


def session_path(results: str | Path, which: str = "second") -> Path | None:
    """The file of another session ("second", "third") of these results: beside the reference
    dataset (the committed file, or a book's staged copy); None for other results."""
    results = Path(results)
    is_reference = results.resolve().parts[-len(RESULTS.parts) :] == RESULTS.parts
    path = results.parent / OTHERS[which].name if is_reference else staged_name(results, which)
    return path if path.exists() else None


def other_sessions(results: str | Path) -> list:
    """The rows of every other session these results have, in order ([] for a reader's own)."""
    from jacbench.report import data

    paths = [session_path(results, which) for which in OTHERS]
    return [data.load(p) for p in paths if p is not None]
