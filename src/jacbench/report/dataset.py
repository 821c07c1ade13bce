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
    rerun = rerun or "{doc}`../notebooks/07-reproduce`"
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
