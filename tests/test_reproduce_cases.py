"""The question's programs at its own size: the standard profile's cases, the group key that
runs a case despite the memory model, and the rule that a case capped above half the RAM runs
alone."""

import csv
import hashlib
import json
import threading
import time

import psutil
import pytest

from jacbench.cli import main
from jacbench.constants import GIB
from jacbench.errors import UsageError
from jacbench.measure import harness, profiles, runner, store
from jacbench.measure.case import Case
from jacbench.report import data, queries
from jacbench.report.chapters import question as speedups
from jacbench.report.chapters import reproduced

NAP = "callable:jacbench.measure.probes:nap"
ALLOCATE_FOREVER = "callable:jacbench.measure.probes:allocate_forever"
SLEEP_FOREVER = "callable:jacbench.measure.probes:sleep_forever"


def _question_cases(cases: list[Case], framework: str) -> list[Case]:
    return [
        c
        for c in cases
        if c.framework == framework and c.strategy == "question" and c.paths == 10_000
    ]


def test_standard_profile_measures_the_question_programs_at_their_size():
    cases = profiles.expand(profiles.load_profile("standard"))
    default_cap = harness.default_mem_cap()
    torch = {c.allocator: c for c in _question_cases(cases, "torch")}
    assert set(torch) == {"glibc", "glibc-mmap", "jemalloc"}
    # Under the allocators that return freed buffers the program has time to finish (about a
    # minute a call, a cold, a warm and a paired call); all three under the default cap.
    assert all(c.mem_cap == default_cap for c in torch.values())
    assert torch["glibc-mmap"].timeout >= 600 and torch["jemalloc"].timeout >= 600
    assert not any(c.run_despite_model for c in torch.values())
    tf = _question_cases(cases, "tensorflow")
    at_16 = [c for c in tf if c.mem_cap == 16 * GIB]
    assert len(at_16) == 1 and at_16[0].run_despite_model and at_16[0].timeout >= 900
    # Nothing else runs despite the model, and nothing else is given more than the default.
    others = [c for c in cases if c is not at_16[0]]
    assert not any(c.run_despite_model for c in others)
    assert all(c.mem_cap == default_cap for c in others if c.problem == "gbm")
    # One case per key: no two groups measure the same thing twice.
    assert len({c.key("env") for c in cases}) == len(cases)


def test_the_quick_profile_adds_no_heavy_case():
    cases = profiles.expand(profiles.load_profile("quick"))
    assert not any(c.run_despite_model for c in cases)
    assert max(c.mem_cap for c in cases) <= 4 * GIB


def test_the_flag_leaves_every_other_key_as_it_was():
    plain = Case(framework="torch", strategy="question", paths=10_000)
    spec = json.dumps([plain.spec_row(), "env"], sort_keys=True)
    assert plain.key("env") == hashlib.sha256(spec.encode()).hexdigest()[:16]
    flagged = Case(framework="torch", strategy="question", paths=10_000, run_despite_model=True)
    assert flagged.key("env") != plain.key("env") and flagged != plain
    # The results file keeps its columns: the flag is not one.
    assert flagged.spec_row() == plain.spec_row()


@pytest.mark.parametrize(
    "where", ["  - {frameworks: [jax], strategies: [jvp], run_despite_model: %s}\n", None]
)
@pytest.mark.parametrize("value", ["'yes please'", "1", "[true]"])
def test_a_bad_run_despite_model_is_one_line_and_status_2(tmp_path, capsys, where, value):
    p = tmp_path / "bad.yaml"
    if where is None:  # in the defaults
        text = f"defaults: {{run_despite_model: {value}}}\ngroups:\n  - {{frameworks: [jax]}}\n"
    else:
        text = "groups:\n" + where % value
    p.write_text(text)
    assert main(["sweep", "--profile", str(p), "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run_despite_model must be true or false" in err[0], err
    assert not (tmp_path / "r.csv").exists()


def test_a_case_refuses_a_flag_that_is_not_a_truth_value():
    with pytest.raises(UsageError, match="run_despite_model"):
        Case(framework="torch", strategy="jvp", run_despite_model="no")


def test_the_flag_reaches_the_cases_of_its_group_only(tmp_path):
    p = tmp_path / "two.yaml"
    p.write_text(
        "groups:\n"
        "  - {frameworks: [jax], strategies: [jvp], paths: [100]}\n"
        "  - {frameworks: [jax], strategies: [jvp], paths: [100], run_despite_model: true}\n"
    )
    cases = profiles.expand(profiles.load_profile(str(p)))
    assert sorted(c.run_despite_model for c in cases) == [False, True]


@pytest.fixture
def predicts_a_petabyte(monkeypatch):
    """Every case's model predicts a peak far above any cap."""
    monkeypatch.setattr(runner, "predicted_peak", lambda case: 10**15)


def test_a_case_predicted_above_its_cap_is_skipped_unless_flagged(predicts_a_petabyte):
    kw = dict(framework="callable", strategy=NAP, repeats=1, warm_budget_s=0.1, timeout=60)
    skipped = runner.measure_case(Case(**kw))
    assert skipped["status"] == "skipped-predicted" and skipped.get("cold_s") is None
    ran = runner.measure_case(Case(**kw, run_despite_model=True))
    assert ran["status"] == "ok", ran["message"]
    assert ran["cold_s"] == pytest.approx(0.25, abs=0.2)  # the probe naps a quarter second
    assert ran["predicted_peak"] == 10**15
    assert "run despite the model's predicted peak" in ran["message"]


def _rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_a_flagged_case_stopped_by_its_caps_records_how_long_and_how_much(
    tmp_path, predicts_a_petabyte
):
    cap = 300 * 2**20
    cases = [
        Case(framework="callable", strategy=ALLOCATE_FOREVER, mem_cap=cap, timeout=60,
             run_despite_model=True),
        Case(framework="callable", strategy=SLEEP_FOREVER, timeout=2, run_despite_model=True),
    ]  # fmt: skip
    out = runner.run_sweep(cases, tmp_path / "killed.csv", quiet=True)
    rows = {r["strategy"].rsplit(":", 1)[1]: r for r in _rows(out)}
    capped, late = rows["allocate_forever"], rows["sleep_forever"]
    assert capped["status"] == "memory-cap" and "run despite" in capped["message"]
    # The memory held when the cap stopped it (at least the cap, at most one 100 MB block and a
    # poll's worth beyond), and how long it ran.
    assert cap < float(capped["watched_peak_rss"]) < cap + 400 * 2**20
    assert float(capped["wall_s"]) > 0
    assert late["status"] == "timeout" and float(late["wall_s"]) >= 2


def test_a_case_capped_above_half_the_ram_is_a_batch_of_its_own():
    ram = 4 * GIB
    small = [Case(framework="callable", strategy=NAP, paths=i, mem_cap=GIB) for i in (1, 2, 3)]
    big = Case(framework="callable", strategy=NAP, paths=9, mem_cap=3 * GIB)
    at_half = Case(framework="callable", strategy=NAP, paths=8, mem_cap=2 * GIB)
    assert runner.runs_alone(big, ram) and not runner.runs_alone(at_half, ram)
    got = runner.batches([small[0], small[1], big, small[2], at_half], 2, ram)
    assert got == [([small[0], small[1]], 2), ([big], 1), ([small[2], at_half], 2)]
    assert runner.batches([(big, "k")], 2, ram) == [([(big, "k")], 1)]


def test_a_sweep_never_runs_a_big_case_beside_another(tmp_path, monkeypatch):
    ram = psutil.virtual_memory().total
    lock = threading.Lock()
    running: set[int] = set()
    beside: dict[int, set[int]] = {}

    def fake_measure(case: Case) -> dict:
        with lock:
            running.add(case.paths)
            for p in running:
                beside.setdefault(p, set()).update(running - {p})
        time.sleep(0.3)
        with lock:
            running.discard(case.paths)
        return {**case.spec_row(), "status": "ok"}

    monkeypatch.setattr(runner, "measure_case", fake_measure)
    small = [Case(framework="callable", strategy=NAP, paths=p, mem_cap=GIB) for p in (1, 2, 3, 4)]
    big = Case(framework="callable", strategy=NAP, paths=99, mem_cap=ram // 2 + GIB)
    runner.run_sweep([small[0], small[1], big, small[2], small[3]], tmp_path / "r.csv",
                     quiet=True, jobs=2)  # fmt: skip
    assert len(_rows(tmp_path / "r.csv")) == 5
    assert beside.get(99, set()) == set()
    # The others did run two at a time: the rule holds back the big case only.
    assert beside[1] == {2} and beside[3] == {4}


# The Reproduced table's verdicts, from rows written as a sweep writes them.
MIB = 2**20


def _row(framework, strategy, paths, status="ok", allocator="glibc", mem_cap=8 * GIB, **metrics):
    row = dict.fromkeys(store.COLUMNS, "")
    row.update(key=f"{framework}-{strategy}-{paths}-{allocator}-{mem_cap}", env="e",
               problem="gbm", framework=framework, strategy=strategy, target="strategy",
               paths=paths, steps=52, dtype="float32", threads=2, allocator=allocator,
               mem_cap=mem_cap, timeout=600.0, repeats=5, ratio_processes=1, status=status,
               **metrics)  # fmt: skip
    return row


def _ok(framework, strategy, paths, seconds, peak, allocator="glibc", libraries=200 * MIB):
    before = libraries + 10 * MIB
    return _row(framework, strategy, paths, allocator=allocator, cold_s=seconds,
                warm_median_s=seconds, import_peak=libraries, cold_rss_before=before,
                cold_peak=peak, warm_peak=peak)  # fmt: skip


def _results(tmp_path, rows):
    path = tmp_path / "r.csv"
    for row in rows:
        store.append_row(path, row)
    return data.load(path)


QUESTION_ROWS = [
    _ok("torch", "question", 1000, 0.9, 250 * MIB),
    _ok("tensorflow", "question", 1000, 1.2, 700 * MIB, libraries=600 * MIB),
    _ok("torch", "question", 1000, 0.9, 250 * MIB, allocator="glibc-mmap"),
    _ok("torch", "question", 1000, 0.3, 250 * MIB, allocator="jemalloc"),
    _row("torch", "question", 10_000, "memory-cap", wall_s=80.0, watched_peak_rss=8 * GIB),
    _ok("torch", "question", 10_000, 60.0, 260 * MIB, allocator="glibc-mmap"),
    _ok("torch", "question", 10_000, 6.0, 400 * MIB, allocator="jemalloc"),
    _row("tensorflow", "question", 10_000, "skipped-predicted", predicted_peak=64 * GIB),
    _row(
        "tensorflow",
        "question",
        10_000,
        "memory-cap",
        mem_cap=16 * GIB,
        wall_s=200.0,
        watched_peak_rss=16 * GIB,
        predicted_peak=64 * GIB,
    ),  # fmt: skip
    _ok("torch", "pathwise", 10_000, 0.01, 230 * MIB),
    _ok("tensorflow", "pathwise", 10_000, 0.02, 650 * MIB, libraries=600 * MIB),
    _ok("jax", "pathwise", 10_000, 0.005, 240 * MIB),
]


def test_the_reproduced_table_computes_each_verdict_from_the_numbers(tmp_path):
    df = _results(tmp_path, QUESTION_ROWS)
    table = reproduced.table(df).set_index("the question's observation")
    verdict = table["verdict"]
    assert len(table) == 6
    assert verdict.iloc[0].startswith("reproduced")  # 0.9 s and 1.2 s: about a second
    # 250 and 700 MiB: PyTorch's within 2× of 140 MB, TensorFlow's not, its libraries alone
    # holding more than the question's 340 MB.
    assert verdict.iloc[1].startswith("differs: TensorFlow 2.2× more; the libraries alone (Ten")
    assert verdict.iloc[1].endswith("TensorFlow 2.8× PyTorch (the question: 2.4×)")
    glibc, mmap, jemalloc = (verdict[f"N = 10,000, PyTorch under {a}"]
                             for a in ("glibc", "glibc-mmap", "jemalloc"))  # fmt: skip
    assert glibc.startswith("differs") and "dynamic mmap threshold" in glibc
    assert "glibc-mmap (260.0 MiB)" in glibc and "jemalloc" not in glibc  # jemalloc's grew
    assert mmap.startswith("reproduced")  # a minute, 260 MiB against 250 at N = 1,000
    assert jemalloc.startswith("differs: 10.0× faster than a minute (glibc-mmap: 1 min 0 s")
    assert "memory grows: +150.0 MiB" in jemalloc
    tf = table.loc["N = 10,000, TensorFlow"]
    assert tf["verdict"] == "reproduced: fails for lack of memory after minutes"
    assert tf["measured here"].startswith("killed at the 16.0 GiB cap after 3 min 20 s")


@pytest.mark.parametrize(
    "status,wall,word",
    [("memory-cap", 30.0, "reproduced, sooner"), ("ok", 30.0, "differs: it finished"),
     ("timeout", 900.0, "differs: not stopped by memory")],
)  # fmt: skip
def test_tensorflow_at_16_gib_whatever_became_of_it(tmp_path, status, wall, word):
    rows = [_row("tensorflow", "question", 10_000, status, mem_cap=16 * GIB, wall_s=wall,
                 cold_s=wall, warm_peak=GIB, cold_peak=GIB, watched_peak_rss=GIB)]  # fmt: skip
    assert reproduced.tf_fails(_results(tmp_path, rows)).verdict.startswith(word)


def test_cases_a_profile_left_out_are_marked_standard_only(tmp_path):
    df = _results(tmp_path, QUESTION_ROWS[:5])
    table = reproduced.table(df)
    assert list(table["measured here"][3:]) == [reproduced.STANDARD_ONLY] * 3
    assert reproduced.STANDARD_ONLY in table["verdict"][2]  # no allocator to compare with


def test_speedups_against_the_question_program(tmp_path):
    df = _results(tmp_path, QUESTION_ROWS)
    # PyTorch's program finished first under glibc-mmap: the reference, 60 s against 10 ms.
    ref = speedups.reference(df, "torch")
    assert ref["allocator"] == "glibc-mmap"
    best = queries.best(df, "torch", 10_000)
    text = speedups.against(best, ref, "torch")
    assert text.startswith("6000× faster than the question's program under glibc-mmap")
    assert "2.5× less memory beyond the inputs" in text  # 50 MiB against 20 MiB
    tf = speedups.against(queries.best(df, "tensorflow", 10_000),
                            speedups.reference(df, "tensorflow"), "tensorflow")  # fmt: skip
    assert tf == "the question's program failed at the 16.0 GiB cap after 3 min 20 s"
    jax = speedups.against(queries.best(df, "jax", 10_000), speedups.reference(df, "jax"), "jax")
    assert jax.startswith("12000× faster than the question's PyTorch program under glibc-mmap")
    table = speedups.speedups(df)
    assert list(table["framework"]) == ["PyTorch"] * 3 + ["TensorFlow", "JAX"]
