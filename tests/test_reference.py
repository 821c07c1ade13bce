"""The committed reference dataset: it covers the standard profile the code expands to, holds no
strategy the registry has lost, and the book says which dataset it was built from."""

import csv
import re
import shutil
from pathlib import Path

import pytest

from jacbench.advise import reference as advice_runs
from jacbench.cli import main
from jacbench.measure import profiles, store, sweeps
from jacbench.measure.dataset import Dataset
from jacbench.publish import book, reference
from jacbench.report import data, dataset

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / dataset.RESULTS


def test_the_reference_dataset_covers_the_standard_profile():
    """Fails, naming the cases and `make reference`, when a strategy or a profile change asks
    for a case the committed dataset does not hold, or it holds one the registry lost."""
    problems = reference.coverage_problems(RESULTS)
    assert not problems, "\n".join(problems)


def test_the_profile_is_expanded_with_the_caps_of_the_datasets_machine(monkeypatch):
    """A case without a cap of its own gets min(8 GiB, half the RAM) of the machine that
    measured the dataset, whatever machine checks it: else the keys would differ here."""
    import psutil

    small = psutil.virtual_memory()._replace(total=2 * 2**30)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: small)  # this machine: 2 GiB
    spec = profiles.load_profile(dataset.PROFILE)
    own = {c.mem_cap for c in profiles.expand(spec)}  # caps named by the profile
    for ram, default in ((64 * 2**30, 8 * 2**30), (12 * 2**30, 6 * 2**30)):
        caps = {c.mem_cap for c in reference.expected_cases({"ram_bytes": ram})}
        assert default in caps and 2**30 not in caps
        assert caps - {default} <= own - {2**30}  # the rest are the profile's own caps


def test_the_reference_dataset_and_its_figure_are_committed_files():
    ds = Dataset(RESULTS)
    for path in (ds.results, ds.meta, ds.crossover):
        assert path.exists(), f"{path.relative_to(ROOT)} is missing; run make reference"
    for path in (ds.results, ds.crossover):
        store.check(path)  # a results file of this version's columns
    assert (ROOT / dataset.FIGURE).stat().st_size > 10_000
    assert "book/reference/gbm-time.png" in (ROOT / "README.md").read_text()
    # Local sweeps never write here: /results/ is their folder, and it is not committed.
    assert "/results/" in (ROOT / ".gitignore").read_text().split()
    assert dataset.FOLDER.as_posix() not in (ROOT / ".gitignore").read_text()


@pytest.fixture()
def copy(tmp_path):
    """A copy of the dataset (results, crossover, metadata, the advice) to spoil, laid out as
    the checkout lays it out (so that its members are named as the committed ones)."""
    ds, spoilt = Dataset(RESULTS), Dataset(tmp_path / dataset.RESULTS)
    spoilt.results.parent.mkdir(parents=True)
    for name in ("results", "meta", "crossover", "crossover meta"):
        shutil.copy2(ds.files()[name], spoilt.files()[name])
    shutil.copytree(ds.advice, spoilt.advice)
    return spoilt.results


def _rewrite(path: Path, change) -> None:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    rows = change(rows)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=store.COLUMNS)
        w.writeheader()
        w.writerows(rows)


def test_a_case_the_dataset_lacks_is_named_with_make_reference(copy):
    dropped = {}

    def drop(rows):
        i = next(i for i, r in enumerate(rows) if r["strategy"] == "pathwise")
        dropped.update(rows[i])
        return rows[:i] + rows[i + 1 :]

    _rewrite(copy, drop)
    problems = reference.coverage_problems(copy)
    assert len(problems) == 1
    assert f"{dropped['framework']}/pathwise N={int(dropped['paths']):,}" in problems[0]
    assert "make reference" in problems[0] and "1 case(s)" in problems[0]


def test_a_missing_crossover_shape_is_named(copy):
    _rewrite(Dataset(copy).crossover, lambda rows: rows[1:])
    problems = reference.coverage_problems(copy)
    assert len(problems) == 1 and "crossover" in problems[0]


def test_a_strategy_the_registry_no_longer_has_is_named(copy):
    renamed = []

    def rename(rows):
        rows[0]["strategy"] = "retired-strategy"
        renamed.append(rows[0]["framework"])
        return rows

    _rewrite(copy, rename)
    problems = reference.coverage_problems(copy)
    gone = [p for p in problems if "registry no longer has" in p]
    assert len(gone) == 1 and f"{renamed[0]}/retired-strategy" in gone[0]


def test_the_check_command_exits_1_and_lists_what_is_missing(copy, monkeypatch, capsys):
    _rewrite(copy, lambda rows: rows[2:])
    monkeypatch.setattr(dataset, "reference", lambda root=Path("."): Dataset(copy))
    assert main(["reference", "--check"]) == 1
    assert "make reference" in capsys.readouterr().out


def test_the_check_names_missing_advice(copy, monkeypatch, capsys):
    shutil.rmtree(copy.parent / "advice" / "heston")
    monkeypatch.setattr(dataset, "reference", lambda root=Path("."): Dataset(copy))
    assert main(["reference", "--check"]) == 1
    assert "book/reference/advice/heston: no advice.json" in capsys.readouterr().out


def test_the_check_names_the_rows_of_an_older_method_without_failing(copy, monkeypatch, capsys):
    def current(rows):
        for r in rows:
            r["method"] = store.METHOD
        rows[0]["method"] = ""  # one row as a sweep before the method column wrote it
        return rows

    _rewrite(copy, current)
    _rewrite(Dataset(copy).crossover, current)
    monkeypatch.setattr(dataset, "reference", lambda root=Path("."): Dataset(copy))
    assert main(["reference", "--check"]) == 0
    said = capsys.readouterr().out
    assert "every case of the profile is there" in said
    assert "2 of its " in said and "older method" in said and "make reference" in said
    _rewrite(copy, lambda rows: [r | {"method": store.METHOD} for r in rows])
    _rewrite(Dataset(copy).crossover, lambda rows: [r | {"method": store.METHOD} for r in rows])
    assert reference.older_method(copy) == ""
    # Method 2 is older only for the cases methods 3 and 4 changed: several processes under
    # plain glibc, and every JAX row (its copy of the normals now made with the inputs).
    _rewrite(copy, lambda rows: [r | {"method": 2} for r in rows])
    changed = [r for r in store.read_rows(copy) if r["framework"] == "jax"
               or (r["allocator"] == "glibc" and int(r["ratio_processes"]) > 1)]  # fmt: skip
    assert any(r["framework"] == "jax" and int(r["ratio_processes"]) <= 1 for r in changed)
    assert changed and reference.older_method(copy).startswith(f"{len(changed)} of its ")


def test_a_fresh_reference_measures_every_case_again(copy, monkeypatch, capsys):
    # --fresh removes the dataset, its crossover and their metadata before the sweep, which then
    # finds nothing measured (the sweep and the figure are replaced by spies here).
    monkeypatch.setattr(dataset, "reference", lambda root=Path("."): Dataset(copy))
    seen = []
    monkeypatch.setattr(sweeps, "measure_profile", lambda profile, results, cluster: seen.append(
        sorted(p.name for p in results.parent.iterdir())))  # fmt: skip
    monkeypatch.setattr(reference, "draw_figure", lambda results, out: out)
    measured_advice = []
    monkeypatch.setattr(advice_runs, "measure", lambda folder, fresh: measured_advice.append(
        (folder, fresh)))  # fmt: skip
    copy.with_name("keep.txt").write_text("not the dataset's")
    monkeypatch.setattr(store, "read_rows", lambda path: [])
    assert main(["reference", "--fresh"]) == 0
    assert seen == [["advice", "keep.txt"]]  # the advice stays: measured again, in place
    assert measured_advice == [(copy.parent / "advice", True)]  # beside the dataset, not here
    assert main(["reference", "--fresh", "--check"]) == 2
    assert "--fresh" in capsys.readouterr().err


def test_staging_marks_the_dataset(tmp_path):
    staged = book.stage_data(Dataset(RESULTS), tmp_path, ROOT).results
    meta = Dataset(tmp_path / staged).metadata
    assert meta["dataset"] == {"source": "book/reference/standard.csv", "reference": True}
    assert dataset.is_reference(data.load(tmp_path / staged))
    # A results file outside the checkout is named by its file name alone.
    other = tmp_path / "elsewhere" / "quick.csv"
    other.parent.mkdir()
    shutil.copy2(RESULTS, other)
    shutil.copy2(Dataset(RESULTS).meta, Dataset(other).meta)
    staged = book.stage_data(Dataset(other), tmp_path / "staging2", ROOT).results
    meta = Dataset(tmp_path / "staging2" / staged).metadata
    assert meta["dataset"] == {"source": "quick.csv", "reference": False}


def test_make_book_without_a_profile_measures_nothing():
    make = (ROOT / "Makefile").read_text()
    recipe = make[make.index("\nbook:") : make.index("\nreference:")]
    assert "$(BIN)/jacbench book\n" in recipe  # no profile: the reference dataset
    assert "--profile $(PROFILE)" in recipe  # PROFILE=...: measured here
    assert "\nPROFILE ?=\n" in make


def test_building_without_a_reference_dataset_says_make_reference(tmp_path):
    from jacbench.errors import UsageError

    with pytest.raises(UsageError, match="make reference"):
        book.build(root=tmp_path, out=tmp_path / "_build")


def test_the_built_book_names_its_dataset_on_the_front_page_and_in_the_method(built):
    out, _ = built
    meta = Dataset(RESULTS).metadata
    # index.html only redirects to the front page, book/index.html.
    for page in (
        out / "html" / "book" / "index.html",
        out / "html" / "notebooks" / "09-method.html",
    ):
        text = " ".join(re.sub(r"<[^>]+>", "", page.read_text()).split())
        assert "reference dataset" in text and "book/reference/standard.csv" in text, page.name
        assert str(meta["date"])[:10] in text and meta["cpu"] in text, page.name
        assert "make book PROFILE=quick" in text, page.name


def test_every_compiled_case_of_the_tall_comparison_has_its_compile_cost():
    """Each compiled GBM strategy and simulation on the whole path array holds the compile
    measured apart (measure.compile_cost), never negative: the second compile is slower than
    any warm call. A worker killed at the cap in its paired calls, which come before the second
    compile, leaves its measurements and says so; it has none."""
    from jacbench.measure import targets

    with open(RESULTS, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["problem"] == "gbm" and r["status"] == "ok"]
    compiled = [
        r
        for r in rows
        if (t := targets.parse(r["framework"], r["strategy"])).compiles
        and t.kind in ("strategy", "simulation")
        and not t.streams
    ]
    assert len(compiled) > 50
    killed = [r for r in compiled if "killed" in r["message"] and "paired calls" in r["message"]]
    lacking = [f"{r['framework']}/{r['strategy']} N={r['paths']}" for r in compiled
               if not r["compile_s"] and r not in killed]  # fmt: skip
    assert not lacking, lacking
    assert len(killed) <= 2, [r["key"] for r in killed]
    negative = [r["key"] for r in compiled if r["compile_s"] and float(r["compile_s"]) < 0]
    assert not negative, negative
