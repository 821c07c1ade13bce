"""Which dataset a book is built from: the reference dataset's place in the checkout, and the
paragraph that names a dataset, its machine and its date (the front page and the
reproducibility chapter show it)."""

from __future__ import annotations

from pathlib import Path

from jacbench.report import formats

FOLDER = Path("book/reference")
PROFILE = "standard"
RESULTS = FOLDER / f"{PROFILE}.csv"
FIGURE = FOLDER / "gbm-time.png"


def results_path(root: Path = Path(".")) -> Path:
    """The reference dataset's results file under a checkout's root."""
    return Path(root) / RESULTS


def describe(meta: dict, source: str, reference: bool, rerun: str | None = None) -> str:
    """One paragraph (Markdown) on the dataset a book was built from: which, where and when
    it was measured, and how to measure one's own (rerun: where the book says how to rerun a
    chapter; default the reproducibility chapter)."""
    rerun = rerun or "{doc}`../notebooks/07-method`"
    ram = meta.get("ram_bytes")
    machine = ", ".join(
        x
        for x in (
            str(meta.get("cpu") or "an unnamed CPU"),
            f"{meta['cores']} cores" if meta.get("cores") else "",
            f"{formats.size(ram)} of RAM" if ram else "",  # as chapter 1 prints it
            "no GPU",
        )
        if x
    )
    date = str(meta.get("date", "an unrecorded date"))[:10]
    versions = ", ".join(
        f"{name} {meta[key]}"
        for name, key in (("PyTorch", "torch"), ("TensorFlow", "tensorflow"), ("JAX", "jax"))
        if meta.get(key)
    )
    commit = f" at commit `{meta['git_commit']}`" if meta.get("git_commit") else ""
    what = (
        f"the **reference dataset** (`{source}`, the {PROFILE} profile), the results the text "
        "was written about, committed with the code"
        if reference
        else f"**results measured on the machine that built it** (`{source}`)"
    )
    own = (
        "`make book` rebuilds these pages from it without measuring; "
        "`make book PROFILE=quick` (or `standard`, `full`) measures on your machine and builds "
        f"from that, and {rerun} says how to rerun one chapter with your own parameters."
    )
    return (
        f"This build of the book was made from {what}. They were measured on {machine} "
        f"({versions}), finished on {date}{commit}. {own}"
    )


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
