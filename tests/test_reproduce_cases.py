"""The question's programs at its own size: the standard profile's cases, the group key that
runs a case despite the memory model, and the rule that a case capped above half the RAM runs
alone."""

import csv
import hashlib
import json
import threading

import psutil
import pytest

from jacbench.cli import main
from jacbench.constants import GIB
from jacbench.errors import UsageError
from jacbench.measure import harness, profiles, runner
from jacbench.measure.case import Case

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
    # Nothing else runs despite the model, and nothing else is given more than the default but
    # TensorFlow's loop over the steps and its read of the normals at 10^7, which hold the
    # normals three times over (numpy's, tf.constant's and the compiled graph's).
    others = [c for c in cases if c is not at_16[0]]
    assert not any(c.run_despite_model for c in others)
    more = [c for c in others if c.problem == "gbm" and c.mem_cap != default_cap]
    assert more and all(c.framework == "tensorflow" and c.paths == 10**7 for c in more)
    assert all(c.mem_cap == 12 * GIB for c in more)
    assert all("steps-" in c.strategy or c.strategy == "limit:read" for c in more)
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
    assert ran["cold_s"] >= 0.25  # the probe naps a quarter second: its first call took that
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
    changed = threading.Condition()
    running: set[int] = set()
    beside: dict[int, set[int]] = {}
    # The small cases run two at a time: each waits at the barrier for its partner, so the pair
    # is running together before either returns; a partner that never comes breaks the barrier.
    pair = threading.Barrier(2, timeout=10)
    unpaired: list[int] = []

    def fake_measure(case: Case) -> dict:
        with changed:
            running.add(case.paths)
            for p in running:
                beside.setdefault(p, set()).update(running - {p})
            changed.notify_all()
        if case.paths == 99:
            # The big case gives another case a moment to start beside it (none should): the
            # wait ends early where one does, and its length decides nothing else.
            with changed:
                changed.wait_for(lambda: running - {99}, timeout=0.3)
        else:
            try:
                pair.wait()
            except threading.BrokenBarrierError:
                unpaired.append(case.paths)
                pair.reset()
        with changed:
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
    assert unpaired == []
    assert beside.get(1) == {2} and beside.get(3) == {4}
