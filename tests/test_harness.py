"""The harness: isolated workers, memory and time caps, and the memory it measures."""

import json
import subprocess
import sys
import time

import pytest

from jacbench.cli import main
from jacbench.errors import UsageError
from jacbench.measure import harness
from jacbench.measure.case import Case
from jacbench.measure.runner import measure_case
from jacbench.units import parse_bytes


@pytest.fixture(autouse=True)
def fresh_workers(monkeypatch):
    """The harness as the book's measurements use it: every worker started fresh (the test
    suite forks them otherwise, tests/conftest.py); page faults and allocator thresholds are
    what a fresh process shows (a forked one also takes a fault on the first write to each page
    it shares with its template)."""
    monkeypatch.setenv("JACBENCH_WORKERS", "exec")


PROBES = "jacbench.measure.probes"
MB = 10**6


def _probe(name: str, **kw) -> dict:
    case = Case(
        framework="callable",
        strategy=f"callable:{PROBES}:{name}",
        threads=1,
        repeats=kw.pop("repeats", 1),
        warm_budget_s=1,
        mem_cap=kw.pop("mem_cap", 2 * harness.GIB),
        timeout=kw.pop("timeout", 60),
    )
    return measure_case(case)


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_known_allocation_is_measured_within_5_percent():
    row = _probe("allocate_400mb", repeats=2)
    assert row["status"] == "ok", row["message"]
    assert row["hwm_reset"] is True
    for phase in ("cold", "warm"):
        assert row[f"{phase}_peak_over_baseline"] == pytest.approx(400 * MB, rel=0.05)
    assert row["cold_peak"] - row["cold_rss_before"] == row["cold_peak_over_baseline"]


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_allocation_past_the_cap_is_killed_and_recorded():
    row = _probe("allocate_forever", mem_cap=harness.GIB)
    assert row["status"] == "memory-cap"
    assert "above the cap of 1.00 GiB" in row["message"]
    # Polled every 20 ms while 100 MB blocks arrive every 0.1 s: killed soon after the cap.
    assert harness.GIB < row["watched_peak_rss"] < 2 * harness.GIB


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_sleeping_callable_times_out():
    row = _probe("sleep_forever", timeout=3)
    assert row["status"] == "timeout"
    assert row["wall_s"] >= 3  # ran until the timeout stopped it (how soon after: the load's)
    assert "3 s" in row["message"]


def test_abort_is_an_error_row_with_a_message():
    row = _probe("abort")
    assert row["status"] == "error"
    assert "SIGABRT" in row["message"]


def test_exception_is_an_error_row_with_its_message():
    row = _probe("fail")
    assert row["status"] == "error"
    assert "RuntimeError: this probe always fails" in row["message"]


def test_strategy_is_checked_against_the_closed_form():
    case = Case(framework="jax", strategy="jvp", paths=2000, threads=1, repeats=2, timeout=120)
    row = measure_case(case)
    assert row["status"] == "ok", row["message"]
    assert row["max_rel_error"] < 1e-4
    assert row["warm_n"] == 2 and row["warm_min_s"] <= row["warm_median_s"] <= row["warm_max_s"]


def test_wrong_answer_is_an_error_not_a_time(monkeypatch):
    from jacbench.measure import worker

    monkeypatch.setattr(worker, "TOLERANCE", {"float32": 0.0, "float64": 0.0})
    rec = worker.run(Case(framework="numpy", strategy="finite-difference", paths=50).worker_spec())
    assert rec["status"] == "error" and "closed form" in rec["message"]


def test_worker_fixes_threads_before_import():
    spec = Case(framework="torch", strategy="pathwise", paths=100, threads=1).worker_spec()
    rec = harness.run_worker(spec, harness.Limits(timeout=120))
    assert rec["status"] == "ok", rec["message"]
    assert rec["torch_threads"] == 1 and rec["threads"] == 1


@pytest.mark.parametrize(
    "text,value",
    [("8GiB", 8 * 2**30), ("512MiB", 512 * 2**20), ("1.5G", 1_500_000_000), ("1e9", 10**9)],
)
def test_parse_bytes(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["lots", "-1GiB", "0"])
def test_parse_bytes_rejects(text):
    with pytest.raises(UsageError):
        parse_bytes(text)


def test_default_cap_is_at_most_8_gib_and_half_the_ram():
    import psutil

    cap = harness.default_mem_cap()
    assert cap <= 8 * harness.GIB and cap <= psutil.virtual_memory().total // 2


def test_allocator_choices():
    assert harness.allocator_environment("glibc") == {}
    assert harness.allocator_environment("glibc-mmap") == {"MALLOC_MMAP_THRESHOLD_": "65536"}
    # Fixed thresholds are plain glibc's only: a variant keeps what it is.
    steady = harness.allocator_environment("glibc", steady=True)
    assert steady == {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "4294967296"}
    assert harness.allocator_environment("glibc-mmap", steady=True) == {
        "MALLOC_MMAP_THRESHOLD_": "65536"
    }
    # glibc-heap: the same fixed thresholds, and no block a mapping of its own.
    assert harness.allocator_environment("glibc-heap") == {**steady, "MALLOC_MMAP_MAX_": "0"}
    with pytest.raises(UsageError, match="glibc, glibc-mmap, jemalloc, .*glibc-heap"):
        harness.allocator_environment("tcmalloc")


def test_measure_command_prints_one_json_record(capsys):
    assert main(["measure", "--callable", f"{PROBES}:nap", "--repeats", "1"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["status"] == "ok" and row["target"] == "callable"
    assert row["cold_s"] >= 0.25


@pytest.mark.parametrize(
    "args,word",
    [
        (["--framework", "torch", "--strategy", "nope"], "functional-loop"),
        (["--callable", "no_colon"], "module:function"),
        (["--framework", "jax", "--strategy", "jvp", "--mem-cap", "lots"], "size"),
        (["--framework", "jax", "--strategy", "jvp", "--allocator", "tcmalloc"], "glibc-mmap"),
        (["--framework", "jax", "--strategy", "jvp", "--timeout", "0"], "timeout"),
        (["--strategy", "jvp"], "--framework"),
    ],
)
def test_measure_bad_input_exits_2(args, word, capsys):
    assert main(["measure", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err


def test_parent_never_imports_a_framework():
    code = (
        "import sys\n"
        "from jacbench.measure.case import Case\n"
        "from jacbench.measure.runner import measure_case\n"
        "row = measure_case(Case(framework='torch', strategy='pathwise', paths=100, repeats=1))\n"
        "assert row['status'] == 'ok', row\n"
        "print([m for m in ('torch', 'tensorflow', 'jax') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_measure_takes_its_defaults_from_the_reference_profile(capsys):
    from jacbench.measure import profiles
    from jacbench.report import dataset

    ref = profiles.load_profile(dataset.PROFILE).defaults
    assert ref.threads == 2  # what the reference dataset was measured with
    args = ["measure", "--framework", "numpy", "--strategy", "simulation:numpy", "--paths", "300"]
    assert main(args) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["threads"], row["repeats"], row["timeout"]) == (ref.threads, ref.repeats,
                                                                ref.timeout)  # fmt: skip
    # A quick call: the repeats fit in the profile's warm budget.
    assert row["status"] == "ok" and row["warm_n"] == ref.repeats
    with pytest.raises(SystemExit):
        main(["measure", "--help"])
    assert f"default 2, as in the reference dataset's profile ({dataset.PROFILE})" in " ".join(
        capsys.readouterr().out.split()
    )


def test_measure_passes_the_model_parameters(capsys):
    args = ["measure", "--framework", "numpy", "--strategy", "analytic", "--paths", "300"]
    assert main([*args, "--vol", "0.35", "--spot", "80", "--seed", "7", "--repeats", "1"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["vol"], row["spot"], row["seed"]) == (0.35, 80.0, 7)
    assert row["status"] == "ok" and row["max_rel_error"] < 1e-4


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_a_kill_after_the_worker_reported_keeps_its_measurements():
    row = _probe("report_then_allocate", mem_cap=harness.GIB)
    assert row["status"] == "ok" and row["warm_median_s"] == 0.25
    assert row["message"].startswith("ratio not measured: killed at")
    assert "in the paired calls" in row["message"]


def test_paired_calls_alternate_their_order(monkeypatch):
    from jacbench.measure import worker

    order = []
    ratios = worker.paired_calls(lambda: order.append("A"), lambda: order.append("B"), 4, 60)
    # Quick sides are settled: each timed call follows an untimed call of its own.
    assert "".join(order) == "AABBBBAAAABBBBAA" and len(ratios.ratios) == 4
    monkeypatch.setattr(worker, "SETTLE_BELOW_S", 0.0)  # no side is quick enough to settle
    order.clear()
    worker.paired_calls(lambda: order.append("A"), lambda: order.append("B"), 4, 60)
    assert "".join(order) == "ABBAABBA"


def _state_clock(monkeypatch, target_s: float, baseline_s: float, after_other_s: float):
    """A fake clock and two calls: the baseline takes after_other_s when the call before it
    was the target's (its data out of cache), baseline_s after itself; the target target_s."""
    from jacbench.measure import worker

    clock = {"t": 0.0, "last": None}
    monkeypatch.setattr(worker.time, "perf_counter", lambda: clock["t"])

    def target():
        clock["t"] += target_s
        clock["last"] = "target"

    def baseline():
        clock["t"] += after_other_s if clock["last"] == "target" else baseline_s
        clock["last"] = "baseline"

    return target, baseline


def test_settled_pairs_time_each_side_in_the_state_its_own_call_leaves(monkeypatch):
    from jacbench.measure import worker

    # A 2 s target (not settled: slower than SETTLE_BELOW_S) and a 3 ms baseline that takes
    # 12 ms right after the target: settled, every timed baseline call is the 3 ms one.
    target, baseline = _state_clock(monkeypatch, 2.0, 0.003, 0.012)
    pairs = worker.paired_calls(target, baseline, 6, 60)
    assert pairs.baseline == pytest.approx([0.003] * 6)
    assert pairs.target == pytest.approx([2.0] * 6)
    assert pairs.ratios == pytest.approx([2.0 / 0.003] * 6)
    # Unsettled, the pairs in which the baseline follows the target (A B) time it cold.
    monkeypatch.setattr(worker, "SETTLE_BELOW_S", 0.0)
    target, baseline = _state_clock(monkeypatch, 2.0, 0.003, 0.012)
    pairs = worker.paired_calls(target, baseline, 6, 60)
    assert pairs.baseline == pytest.approx([0.012, 0.003] * 3)


def test_paired_and_warm_calls_count_their_page_faults():
    import mmap

    from jacbench.measure import worker

    pages = 4096

    def touches_fresh_memory():  # a new anonymous mapping each call: every page faults in
        step = resource_page_size()
        with mmap.mmap(-1, pages * step) as m:
            for i in range(0, pages * step, step):
                m[i] = 1

    pairs = worker.paired_calls(touches_fresh_memory, lambda: None, 3, 0.0).fields()
    assert min(pairs["pair_target_fault_values"]) >= pages // 2
    assert max(pairs["pair_baseline_fault_values"]) < pages // 2
    warm = worker._warm_calls(touches_fresh_memory, 3, 0.0)
    assert warm["warm_n"] == len(warm["warm_fault_values"]) == 3
    assert min(warm["warm_fault_values"]) >= pages // 2


def resource_page_size() -> int:
    import os

    return os.sysconf("SC_PAGE_SIZE")


def test_warm_calls_pool_every_workers_calls():
    from jacbench.measure.runner import warm_pooled

    recs = [
        {"warm_values": [0.015, 0.016, 0.014], "warm_fault_values": [0, 0, 10]},
        {"warm_values": [0.050, 0.049, 0.051], "warm_fault_values": [20000, 20000, 20000]},
        {"status": "killed"},  # a worker without warm calls adds nothing
    ]
    pooled = warm_pooled(recs)
    assert pooled["warm_n"] == 6 and pooled["warm_median_s"] == pytest.approx(0.0325)
    assert (pooled["warm_min_s"], pooled["warm_max_s"]) == (0.014, 0.051)
    assert pooled["warm_by_process"] == "0.015;0.05"
    assert pooled["warm_faults"] == 10_005
    assert warm_pooled([{"status": "killed"}]) == {}


def test_calls_go_past_the_budget_to_a_minimum_but_not_for_minutes(monkeypatch):
    from jacbench.measure import worker

    clock = [0.0]
    monkeypatch.setattr(worker.time, "perf_counter", lambda: clock[0])

    def runs(seconds_each: float, repeats: int = 20, **kw) -> int:
        done = []
        clock[0] = 0.0

        def body(i):
            clock[0] += seconds_each
            done.append(i)

        worker._repeat(body, done.__len__, repeats, 2.0, **kw)
        return len(done)

    # Warm calls: the budget (2 s), then on to 3 calls unless one took 30 s or more.
    assert runs(0.1) == 20  # quick calls: the repeats fit in the budget
    assert runs(1.0) == 3  # the budget is spent after 2, the minimum goes on to 3
    assert runs(29.0) == 3  # under 30 s a call: still 3 (1 min 27 s)
    assert runs(30.0) == 1  # a call of 30 s or more: the budget decides, and one is made
    assert runs(1.0, repeats=2) == 2  # never more than the repeats
    # Pairs: always 3, and on to 5 while the pairs so far took under 30 s.
    pairs = {"unless_slower_than": float("inf"), "prefer": 5, "prefer_within": 30.0}
    assert runs(1.0, **pairs) == 5
    assert runs(10.0, **pairs) == 3  # 30 s after three: no more for the preference's sake
    assert runs(100.0, **pairs) == 3  # and never fewer than three, however long


def test_paired_calls_report_both_sides_times():
    from jacbench.measure.worker import paired_calls

    pairs = paired_calls(lambda: time.sleep(0.02), lambda: time.sleep(0.005), 3, 0.0)
    fields = pairs.fields()
    assert len(fields["ratio_values"]) == len(fields["pair_target_values"]) == 3
    assert min(fields["pair_target_values"]) >= 0.02
    assert min(fields["pair_baseline_values"]) >= 0.005
    assert fields["ratio_values"] == [
        a / b
        for a, b in zip(fields["pair_target_values"], fields["pair_baseline_values"], strict=True)
    ]


def test_ratio_summary_is_the_median_and_a_spread_across_workers():
    from jacbench.measure.runner import ratio_summary

    s = ratio_summary([[1.0, 2.0, 3.0, 4.0, 100.0]])
    assert (s["ratio_median"], s["ratio_lo"], s["ratio_hi"], s["ratio_pairs"]) == (3, 2, 4, 5)
    assert ratio_summary([[1.5]])["ratio_lo"] == 1.5 and ratio_summary([[]]) == {}
    # A worker whose pairs all sit apart widens the spread to its median.
    s = ratio_summary([[2.0, 2.1, 2.2], [2.0, 2.1, 2.2], [3.0, 3.1, 3.2]])
    assert s["ratio_hi"] == 3.1 and s["ratio_lo"] == 2.1 and s["ratio_by_process"] == "2.1;2.1;3.1"
    # The paired times pooled over the workers' records: the median of all five.
    recs = [
        {"pair_target_values": [4.0, 5.0], "pair_baseline_values": [1.0, 2.0]},
        {"pair_target_values": [6.0, 7.0, 8.0], "pair_baseline_values": [3.0, 4.0, 9.0]},
    ]
    s = ratio_summary([[4.0, 2.5], [2.0, 1.75, 0.9]], recs)
    assert (s["pair_target_median_s"], s["pair_baseline_median_s"]) == (6.0, 3.0)


def test_a_strategy_is_timed_against_its_simulation_side_by_side(capsys):
    args = ["measure", "--framework", "numpy", "--strategy", "analytic", "--paths", "2e4"]
    assert main([*args, "--repeats", "6", "--ratio-processes", "2"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["status"] == "ok", row["message"]
    # Six pairs in the worker that measured it, six more in a second worker.
    assert row["ratio_pairs"] == 12 and row["ratio_processes"] == 2
    assert 0 < row["ratio_lo"] <= row["ratio_median"] <= row["ratio_hi"]
    assert len(row["ratio_by_process"].split(";")) == 2
    # The paired calls' own times, pooled over both workers, beside the ratio they give.
    assert row["pair_target_median_s"] > 0 and row["pair_baseline_median_s"] > 0


def test_simulations_and_second_order_methods_have_no_ratio():
    sim = measure_case(Case(framework="numpy", strategy="simulation:numpy", paths=100, repeats=2))
    assert sim["status"] == "ok" and sim.get("ratio_median") is None


# --- a worker's children: counted in its memory, killed with it --------------------------------

# A child that starts a grandchild holding 50 MB of written bytes; the grandchild prints its pid
# on the pipe they share once the bytes are written, then waits to be killed.
GRANDCHILD = (
    "import os, sys, time\n"
    "held = b'\\x01' * 50_000_000\n"
    "print(os.getpid(), flush=True)\n"
    "time.sleep(120)\n"
)
CHILD = "import subprocess, sys\nsubprocess.run([sys.executable, '-c', sys.argv[1]])\n"


@pytest.fixture
def worker_with_a_child():
    """(the child's Popen, in a session of its own as run_worker starts it; the grandchild's
    pid)."""
    import os
    import signal

    popen = subprocess.Popen([sys.executable, "-c", CHILD, GRANDCHILD], stdout=subprocess.PIPE,
                             text=True, start_new_session=True)  # fmt: skip
    try:
        yield popen, int(popen.stdout.readline())
    finally:
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        popen.wait(timeout=30)
        popen.stdout.close()


def test_a_worker_s_memory_counts_its_children(worker_with_a_child):
    import psutil

    popen, grandchild = worker_with_a_child
    child = psutil.Process(popen.pid)
    own = child.memory_info().rss
    held = psutil.Process(grandchild).memory_info().rss
    assert held > 50 * MB  # the grandchild's bytes are in its own memory, not the child's
    assert harness._tree_rss(child.pid) >= own + 50 * MB


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_killed_worker_takes_its_children_with_it(worker_with_a_child):
    popen, grandchild = worker_with_a_child
    assert _alive(grandchild)
    harness._kill_group(popen)
    assert popen.wait(timeout=30) == -9
    # The grandchild got the same SIGKILL: it is gone within a moment (a deadline to wait out,
    # not a bound on how long killing takes).
    deadline = time.monotonic() + 30
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)
    harness._kill_group(popen)  # a group already gone is no error


def test_a_failed_extra_worker_is_named_and_contributes_nothing(monkeypatch):
    from jacbench.measure import runner

    records = iter([
        {"status": "memory-cap", "message": "killed at 2.10 GiB RSS, above the cap of 2.00 GiB"},
        {"status": "ok", "message": "", "warm_values": [0.5, 0.6], "ratio_values": [2.0, 2.2]},
        {"status": "ok", "message": "", "warm_values": []},  # ran, but timed no call
    ])  # fmt: skip
    asked = []

    def run_worker(spec, limits, allocator, steady=False):
        asked.append(spec)
        return next(records)

    monkeypatch.setattr(harness, "run_worker", run_worker)
    case = Case(framework="jax", strategy="jvp", paths=100, ratio_processes=4)
    rec = {"status": "ok", "message": "", "warm_values": [0.4], "ratio_values": [1.0, 1.1]}
    more = runner._more_processes(case, harness.Limits(timeout=60), rec)
    assert len(asked) == 3 and all(spec["extra"] for spec in asked)
    assert more == [{"status": "ok", "message": "", "warm_values": [0.5, 0.6],
                     "ratio_values": [2.0, 2.2]}]  # fmt: skip
    assert rec["message"] == (
        "timed in 2 of 4 processes (memory-cap: killed at 2.10 GiB RSS, above the cap of "
        "2.00 GiB; ok: )"
    )
    # The summary pools the ratios of the workers that paired calls: 1.0, 1.1, 2.0 and 2.2.
    summary = runner.ratio_summary([rec["ratio_values"], more[0]["ratio_values"]])
    assert summary["ratio_median"] == pytest.approx(1.55)
    # A message already there keeps its own words, the note after a separator.
    rec = {"status": "ok", "message": "ratio to simulation:jit not measured", "warm_values": [1]}
    records = iter([{"status": "timeout", "message": "after 60 s"}])
    runner._more_processes(Case(framework="jax", strategy="jvp", paths=100, ratio_processes=2),
                           harness.Limits(timeout=60), rec)  # fmt: skip
    assert rec["message"] == (
        "ratio to simulation:jit not measured; timed in 1 of 2 processes (timeout: after 60 s)"
    )


@pytest.mark.slow  # runs worker processes
def test_fixed_thresholds_reach_the_worker_and_its_heap_reuses_a_freed_block():
    """A 20 MB block freed after each call: with glibc's thresholds fixed, from the heap and
    reused by every warm call (no page fault); under glibc-mmap, a mapping that every call faults
    in again, fixed thresholds asked for or not."""
    case = Case(framework="callable", strategy=f"callable:{PROBES}:allocate_20mb", repeats=5)
    limits = harness.Limits(timeout=120)
    steady = harness.run_worker(case.worker_spec(), limits, "glibc", steady=True)
    assert steady["status"] == "ok" and steady["warm_fault_values"] == [0] * 5
    for asked in (False, True):
        mapped = harness.run_worker(case.worker_spec(), limits, "glibc-mmap", steady=asked)
        assert mapped["status"] == "ok" and min(mapped["warm_fault_values"]) > 0


@pytest.mark.slow  # runs worker processes
def test_no_block_is_mapped_under_glibc_heap_whatever_its_size():
    """A 40 MB block, above the fixed 32 MiB threshold: a mapping that every warm call faults in
    again under the thresholds alone (and under them when the harness's own environment holds
    glibc-heap's variable: a worker gets only its allocator's); from the heap and reused under
    glibc-heap."""
    case = Case(framework="callable", strategy=f"callable:{PROBES}:allocate_40mb", repeats=5)
    limits = harness.Limits(timeout=120)
    heap = harness.run_worker(case.worker_spec(), limits, "glibc-heap")
    assert heap["status"] == "ok" and heap["warm_fault_values"] == [0] * 5
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MALLOC_MMAP_MAX_", "0")
        steady = harness.run_worker(case.worker_spec(), limits, "glibc", steady=True)
    assert steady["status"] == "ok" and min(steady["warm_fault_values"]) > 0


@pytest.mark.parametrize(
    ("allocator", "processes", "steady"),
    [("glibc", 3, True), ("glibc", 1, False), ("jemalloc", 3, False), ("glibc-mmap", 3, False)],
)
def test_a_case_timed_in_several_processes_under_glibc_fixes_its_thresholds(
    monkeypatch, allocator, processes, steady
):
    """Every worker of the case is asked for them, and the row says so (malloc_env)."""
    from jacbench.measure import runner, store

    asked = []

    def run_worker(spec, limits, allocator, steady=False):
        asked.append(steady)
        return {"status": "ok", "message": "", "warm_median_s": 0.01, "warm_values": [0.01]}

    monkeypatch.setattr(harness, "run_worker", run_worker)
    case = Case(framework="jax", strategy="jvp", paths=100, ratio_processes=processes,
                allocator=allocator)  # fmt: skip
    assert case.steady_heap is steady
    row = runner.measure_case(case)
    assert asked == [steady] * processes
    assert row["malloc_env"] == ("MALLOC_MMAP_THRESHOLD_=33554432 "
                                 "MALLOC_TRIM_THRESHOLD_=4294967296" if steady else "")  # fmt: skip
    assert store.row_current({"method": "2", "allocator": allocator,
                              "ratio_processes": str(processes)}) is not steady  # fmt: skip
