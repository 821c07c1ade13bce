"""One Dataset value (measure.dataset): the names of a dataset's members, committed, staged and a
reader's, written out here as literal paths; each member opened once; and no other module (or
notebook) derives a member's path from the results' path itself."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from jacbench.measure.dataset import Dataset
from jacbench.publish import book

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "jacbench"
THE_MODULE = SRC / "measure" / "dataset.py"


# --- the naming scheme --------------------------------------------------------------------------


def test_the_committed_reference_names_its_members():
    ds = Dataset("book/reference/standard.csv")
    assert ds.committed
    assert ds.files() == {
        "results": Path("book/reference/standard.csv"),
        "meta": Path("book/reference/standard.meta.json"),
        "crossover": Path("book/reference/standard.crossover.csv"),
        "crossover meta": Path("book/reference/standard.crossover.meta.json"),
        "second": Path("book/reference/efficient.csv"),
        "second meta": Path("book/reference/efficient.meta.json"),
        "third": Path("book/reference/ratios.csv"),
        "third meta": Path("book/reference/ratios.meta.json"),
    }
    assert ds.advice == Path("book/reference/advice")
    # Wherever the checkout lies.
    there = Dataset(ROOT / "book/reference/standard.csv")
    assert there.committed and there.session("third") == ROOT / "book/reference/ratios.csv"
    assert there.advice == ROOT / "book/reference/advice"


def test_a_books_staging_tree_names_the_same_members():
    staged = Dataset(ROOT / "book/reference/standard.csv").staged
    assert not staged.committed
    assert staged.files() == {
        "results": Path("data/results.csv"),
        "meta": Path("data/results.meta.json"),
        "crossover": Path("data/results.crossover.csv"),
        "crossover meta": Path("data/results.crossover.meta.json"),
        "second": Path("data/results.second.csv"),
        "second meta": Path("data/results.second.meta.json"),
        "third": Path("data/results.third.csv"),
        "third meta": Path("data/results.third.meta.json"),
    }
    assert staged.advice == Path("book/reference/advice")  # the reference's, where it is staged


def test_a_readers_results_name_theirs_beside_them():
    ds = Dataset("results/quick.csv")
    assert not ds.committed
    assert (ds.meta, ds.crossover, ds.crossover_meta) == (
        Path("results/quick.meta.json"),
        Path("results/quick.crossover.csv"),
        Path("results/quick.crossover.meta.json"),
    )
    assert ds.session("second") == Path("results/quick.second.csv")
    assert ds.sessions() == {}  # none measured
    # A file named like the reference elsewhere is not it.
    assert not Dataset("results/standard.csv").committed


def test_the_committed_files_lie_where_the_scheme_names_them():
    ds = Dataset(ROOT / "book/reference/standard.csv")
    assert [name for name, path in ds.files().items() if not path.exists()] == []
    assert list(ds.sessions()) == ["second", "third"]
    assert (ds.advice / "heston" / "advice.json").exists()


def test_staging_copies_each_member_under_its_staged_name(tmp_path):
    results = ROOT / "book/reference/standard.csv"
    assert book.stage_data(Dataset(results), tmp_path, ROOT).results == Path("data/results.csv")
    staged = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert staged == [
        "results.crossover.csv",
        "results.crossover.meta.json",
        "results.csv",
        "results.meta.json",
        "results.second.csv",
        "results.second.meta.json",
        "results.third.csv",
        "results.third.meta.json",
    ]
    assert (tmp_path / "data/results.third.csv").read_bytes() == (
        ROOT / "book/reference/ratios.csv"
    ).read_bytes()


# --- opened once --------------------------------------------------------------------------------


def test_a_member_is_opened_once_per_value(tmp_path):
    results = tmp_path / "mine.csv"
    (tmp_path / "mine.meta.json").write_text(json.dumps({"cores": 2}))
    (tmp_path / "mine.crossover.meta.json").write_text(json.dumps({"jobs": 3}))
    ds = Dataset(results)
    assert ds.metadata == {"cores": 2} and ds.crossover_metadata == {"jobs": 3}
    (tmp_path / "mine.meta.json").write_text(json.dumps({"cores": 16}))
    assert ds.metadata == {"cores": 2}  # kept from the first reading
    assert Dataset(results).metadata == {"cores": 16}  # a new value reads it again
    assert Dataset(tmp_path / "none.csv").metadata == {}
    opened = []
    assert ds.once("x", lambda: opened.append(1) or "first") == "first"
    assert ds.once("x", lambda: opened.append(1) or "second") == "first" and opened == [1]
    assert ds == Dataset(str(results))  # equal by the results' path, whatever was opened


# --- nobody else derives a member's path ----------------------------------------------------------

# The ways a member's path was derived before the Dataset: the functions that did it, the
# suffixes and names of the members written as text, and a sibling named from the results' stem.
DERIVERS = {"path_for", "meta_path", "read_meta", "session_path", "staged_name", "results_path"}
MEMBER_TEXT = re.compile(
    r"\.meta\.json|\.crossover\.|efficient\.csv|ratios\.csv|\.(second|third)\.(csv|meta)|"
    r"book/reference/advice|data/results"
)
RENAMES = {"with_name", "with_suffix", "with_stem"}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstrings' nodes (prose, not paths)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                found.add(id(body[0].value))
    return found


def derivations(code: str) -> list[str]:
    """Where code derives a member's path: a call of a deriver, a member's name or suffix as
    text, or a path renamed with the stem of another or with a results-file suffix."""
    tree = ast.parse(code)
    prose = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
            if name in DERIVERS:
                found.append(f"line {node.lineno}: {name}()")
            elif name in RENAMES:
                args = [ast.unparse(a) for a in node.args]
                if any(".stem" in a or re.search(r"\.(csv|json)\b", a) for a in args):
                    found.append(f"line {node.lineno}: {name}({', '.join(args)})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in prose and MEMBER_TEXT.search(node.value):
                found.append(f"line {node.lineno}: {node.value!r}")
    return found


CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", re.S | re.M)


def _cells(path: Path):
    """A page's code cells, without their options; the parameters cell left out (its defaults
    name the files a reader reruns the page with)."""
    for cell in CELL.findall(path.read_text()):
        lines = cell.splitlines()
        if lines and lines[0] == "---":
            lines = lines[lines.index("---", 1) + 1 :]
        if any(ln.startswith(":tags:") and "parameters" in ln for ln in lines):
            continue
        yield "\n".join(ln for ln in lines if not ln.startswith(":tags:"))


def test_only_the_dataset_module_derives_a_members_path():
    found = [
        f"{path.relative_to(ROOT)} {where}"
        for path in sorted(SRC.rglob("*.py"))
        if path != THE_MODULE
        for where in derivations(path.read_text())
    ]
    pages = [*sorted((ROOT / "notebooks").glob("*.md")), ROOT / "book" / "index.md"]
    found += [
        f"{page.relative_to(ROOT)} {where}"
        for page in pages
        for cell in _cells(page)
        for where in derivations(cell)
    ]
    assert found == []
    # The module itself derives them, so the check sees a derivation where there is one.
    assert derivations(THE_MODULE.read_text())


def test_the_check_sees_each_way_of_deriving_a_member():
    ways = [
        "crossover.path_for(results)",
        "store.meta_path(p)",
        "Path(results).with_suffix('.meta.json')",
        "results.with_name(results.stem + '.crossover.csv')",
        "results.with_name(f'{results.stem}.{which}{results.suffix}')",
        "results.parent / 'efficient.csv'",
        "ADVICE = Path('book/reference/advice')",
        'files = [("metadata", Path("data/results.meta.json"))]',
    ]
    assert [w for w in ways if not derivations(w)] == []
    fine = ["'''Beside it: data/results.meta.json.'''", "path.with_name(path.name + '.tmp')"]
    assert [w for w in fine if derivations(w)] == []
