"""Sweeps: profiles expand to cases, every case is one row, and a killed sweep resumes."""

import csv
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from jacbench.cli import main
from jacbench.errors import UsageError
from jacbench.measure import profiles, runner, store
from jacbench.measure.case import Case
from tests.quick import LEFT_OUT

DATA = Path(__file__).parent / "data"


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_probe_sweep_records_every_outcome_and_goes_on(tmp_path, capsys):
    out = tmp_path / "probes.csv"
    assert (
        main(["sweep", "--profile", str(DATA / "probes.yaml"), "--out", str(out), "--quiet"]) == 0
    )
    status = {r["strategy"].rsplit(":", 1)[1]: r for r in _rows(out)}
    assert status["nap"]["status"] == "ok"
    assert status["allocate_forever"]["status"] == "memory-cap"
    assert status["abort"]["status"] == "error" and "SIGABRT" in status["abort"]["message"]
    assert status["fail"]["status"] == "error"
    # The case after the memory-cap kill still ran and measured its 400 MB.
    assert status["allocate_400mb"]["status"] == "ok"
    assert float(status["allocate_400mb"]["cold_peak_over_baseline"]) == pytest.approx(
        4e8, rel=0.05
    )
    capsys.readouterr()
    assert main(["table", str(out), "--paths", "1000"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("| framework | strategy") and len(table) == 2 + 5
    assert main(["table", str(tmp_path / "none.csv"), "--paths", "1000"]) == 2
    meta = out.with_suffix(".meta.json").read_text()
    for word in ("python", "numpy", "torch", "tensorflow", "jax", "cpu", "cores", "git_commit"):
        assert word in meta


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_rerun_measures_nothing_twice(tmp_path, naps_profile):
    out = tmp_path / "naps.csv"
    profile = naps_profile
    args = ["sweep", "--profile", str(profile), "--out", str(out), "--quiet"]
    assert main(args) == 0
    first = out.read_text()
    assert len(_rows(out)) == 3
    assert main(args) == 0
    assert out.read_text() == first


@pytest.mark.slow  # runs capped worker processes
def test_rows_of_an_older_method_are_measured_again_in_their_place(tmp_path, naps_profile, capsys):
    """A file part measured with an older method (a blank method column, as before the column)
    is whole after the rerun: every older row measured again and in its own place, one row a
    key, the current method's rows untouched."""
    out = tmp_path / "naps.csv"
    args = ["sweep", "--profile", str(naps_profile), "--out", str(out), "--quiet"]
    assert main(args) == 0
    rows = _rows(out)
    assert [store.row_method(r) for r in rows] == [store.METHOD] * 3
    for r in rows[:2]:  # the first two as an older sweep left them
        r["method"], r["wall_s"] = "", "-1"
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=store.COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    kept = rows[2]
    assert store.methods(out) == {rows[0]["key"]: 1, rows[1]["key"]: 1, kept["key"]: store.METHOD}
    assert main(args) == 0
    again = _rows(out)
    assert [r["key"] for r in again] == [r["key"] for r in rows]
    assert [store.row_method(r) for r in again] == [store.METHOD] * 3
    assert all(float(r["wall_s"]) > 0 for r in again[:2])  # measured again, not kept
    assert again[2] == kept
    assert "repeating" not in capsys.readouterr().err


def test_a_row_without_the_method_column_reads_as_the_first_method():
    assert store.row_method({"method": ""}) == store.row_method({}) == 1
    assert store.row_method({"method": "2"}) == 2


def test_method_3_makes_only_the_cases_it_changed_older():
    """Method 3 fixed glibc's thresholds for cases timed in several processes under plain glibc:
    their rows of method 2 are measured again, every other case's stand; method 1 never does."""
    assert store.METHOD == 4
    assert not store.current(2, "glibc", 3) and store.current(3, "glibc", 3)
    for allocator, processes in (("glibc", 1), ("glibc-mmap", 3), ("jemalloc", 3)):
        assert store.current(2, allocator, processes) and not store.current(1, allocator, processes)
    assert not store.row_current({"method": "2", "allocator": "glibc", "ratio_processes": "3"})
    assert store.row_current({"method": "2", "allocator": "glibc", "ratio_processes": ""})


def test_method_4_makes_only_jax_rows_older():
    """Method 4 waits for JAX's copy of the inputs before the first call: a JAX row of 3 is
    measured again, under any allocator; a row of another framework of 3 stands."""
    for allocator, processes in (("glibc", 3), ("glibc", 1), ("jemalloc", 1)):
        assert not store.current(3, allocator, processes, "jax")
        assert store.current(4, allocator, processes, "jax")
        for framework in ("torch", "tensorflow", "numpy"):
            assert store.current(3, allocator, processes, framework)
    jax_row = {"method": "3", "allocator": "glibc", "ratio_processes": "", "framework": "jax"}
    assert not store.row_current(jax_row)
    assert store.row_current({**jax_row, "framework": "torch"})


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_killed_sweep_rerun_has_every_case_once(tmp_path):
    out = tmp_path / "killed.csv"
    profile = tmp_path / "six.yaml"
    profile.write_text(
        "name: six\ndefaults: {repeats: 1, warm_budget_s: 0.1, timeout: 30}\ngroups:\n"
        "  - frameworks: [callable]\n"
        "    strategies: [callable:jacbench.measure.probes:nap]\n"
        "    paths: [1, 2, 3, 4, 5, 6]\n"
    )
    cmd = [sys.executable, "-m", "jacbench", "sweep", "--profile", str(profile), "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or len(_rows(out)) < 2):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = len(_rows(out))
    assert 2 <= partial < 6
    # A torn last line, as a kill in the middle of a write would leave, is cut on restart.
    with open(out, "a") as f:
        f.write("deadbeef,torn")
    assert main(["sweep", "--profile", str(profile), "--out", str(out), "--quiet"]) == 0
    rows = _rows(out)
    assert sorted(int(r["paths"]) for r in rows) == [1, 2, 3, 4, 5, 6]
    assert len({r["key"] for r in rows}) == 6


HEADER = b"key,env,framework,strategy,status\n"


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        (HEADER + b"a,e,jax,jvp,ok\nb,e,jax,jac", HEADER + b"a,e,jax,jvp,ok\n"),  # torn last line
        (HEADER + b"a,e,jax,jvp,ok\n", HEADER + b"a,e,jax,jvp,ok\n"),  # whole: left as it is
        (HEADER, HEADER),  # the header alone
        (b"key,env,fram", b""),  # torn in the header: nothing whole is left
        (b"", b""),  # empty
    ],
    ids=["torn-row", "whole", "header-only", "torn-header", "empty"],
)
def test_repair_cuts_a_torn_last_line_back_to_the_last_newline(tmp_path, written, kept):
    path = tmp_path / "r.csv"
    path.write_bytes(written)
    store.repair(path)
    assert path.read_bytes() == kept


def test_repair_leaves_a_missing_file_missing_and_a_repaired_file_takes_rows(tmp_path):
    path = tmp_path / "r.csv"
    store.repair(path)
    assert not path.exists()
    row = {"key": "k1", "env": "e", "framework": "jax", "strategy": "jvp", "status": "ok"}
    store.append_row(path, row)
    with open(path, "a") as f:
        f.write("k2,e,jax,ja")
    store.repair(path)
    store.append_row(path, row | {"key": "k3"})
    assert [r["key"] for r in store.read_rows(path)] == ["k1", "k3"]


def test_profiles_are_data_and_expand():
    assert {"quick", "standard", "full"} <= set(profiles.profile_names())
    quick = profiles.expand(profiles.load_profile("quick"))
    keys = {(c.framework, c.strategy) for c in quick}
    from jacbench.strategies.registry import STRATEGIES

    # The quick profile measures every registered GBM strategy at least once, but the four
    # slow-compiling PyTorch loops of tests/quick.py.
    registered = {(s.framework, s.name) for s in STRATEGIES if "gbm" in s.problems}
    assert LEFT_OUT <= registered and not LEFT_OUT & keys
    assert registered - LEFT_OUT <= keys


def test_overrides_filter_a_profile():
    cases = profiles.expand(
        profiles.load_profile("quick"),
        {"frameworks": ["jax"], "strategies": ["jvp"], "paths": [100, 200], "mem_cap": "1GiB"},
    )
    assert {(c.framework, c.strategy, c.paths) for c in cases} == {
        ("jax", "jvp", 100),
        ("jax", "jvp", 200),
    }
    assert all(c.mem_cap == 2**30 for c in cases)


def test_predicted_case_above_the_cap_is_skipped_not_run():
    case = Case(framework="tensorflow", strategy="tape-jacobian-pfor", paths=100_000,
                      mem_cap=2**30)  # fmt: skip
    row = runner.measure_case(case)
    assert row["status"] == "skipped-predicted"
    assert row["predicted_peak"] > 1.5 * 2**30 and "predicted peak" in row["message"]


@pytest.mark.parametrize(
    "args,word",
    [
        (["--profile", "nope"], "quick"),
        (["--profile", "quick", "--frameworks", "mxnet"], "mxnet"),
        (["--profile", "quick", "--strategies", "nope", "--frameworks", "jax"], "nope"),
        (["--profile", "quick", "--paths", "1e3,x"], "--paths"),
        (["--profile", "quick", "--paths", "0"], "--paths"),
        (["--profile", "quick", "--paths", "1.5e3,2.5"], "--paths"),
        (["--profile", "quick", "--problems", "heat"], "heat"),
        (["--profile", "quick", "--jobs", "0"], "--jobs"),
        (["--profile", "quick", "--timeout", "-1"], "--timeout"),
        (["--profile", "quick", "--allocators", "tcmalloc"], "tcmalloc"),
    ],
)
def test_sweep_bad_input_exits_2(args, word, capsys):
    assert main(["sweep", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err


def test_unknown_profile_strategy_is_a_usage_error(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("groups:\n  - frameworks: [torch]\n    strategies: [warp-drive]\n")
    with pytest.raises(UsageError, match="warp-drive"):
        profiles.expand(profiles.load_profile(str(p)))


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_results_file_of_another_version_is_refused_with_the_way_out(tmp_path, capsys):
    # A column this version does not know (a file that lacks some of this version's columns,
    # in their order, is an older one: it reads, test_queries shows).
    old = tmp_path / "old.csv"
    before = ["warm_s" if c == "warm_median_s" else c for c in store.COLUMNS]
    old.write_text(",".join(before) + "\n")
    args = ["sweep", "--profile", str(DATA / "probes.yaml"), "--out", str(old), "--quiet"]
    assert main(args) == 2
    assert "--fresh" in capsys.readouterr().err
    assert main([*args, "--fresh"]) == 0  # measured again, from scratch
    assert list(_rows(old)[0]) == store.COLUMNS


@pytest.mark.parametrize("command", ["sweep", "table"])
def test_a_csv_that_is_not_a_results_file_is_one_line_and_status_2(tmp_path, capsys, command):
    foreign = tmp_path / "prices.csv"
    foreign.write_text("date,close\n2026-01-02,101.5\n")
    args = {
        "sweep": ["sweep", "--profile", str(DATA / "probes.yaml"), "--out", str(foreign)],
        "table": ["table", str(foreign), "--paths", "1000"],
    }[command]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a jacbench results file" in err[0]
    assert foreign.read_text().startswith("date,close")  # left as it was


def test_moments_groups_expand_by_inputs_and_batch(tmp_path):
    p = tmp_path / "wide.yaml"
    p.write_text(
        "groups:\n"
        "  - {problem: moments, frameworks: [jax], strategies: all, inputs: [100, 1e3]}\n"
        "  - {problem: moments, frameworks: [torch],"
        " strategies: [second:hvp-forward-over-reverse], inputs: [10]}\n"
        "  - {problem: moments-batch, strategies: all, inputs: [50], batch: [4]}\n"
        "  - {problem: gbm, frameworks: [jax], strategies: [second:per-path-second],"
        " paths: [100]}\n"
    )
    cases = profiles.expand(profiles.load_profile(str(p)))
    got = {(c.problem, c.framework, c.strategy, c.size, c.batch) for c in cases}
    assert ("moments", "jax", "jacrev", 1000, 0) in got
    assert ("moments", "torch", "second:hvp-forward-over-reverse", 10, 0) in got
    assert ("moments-batch", "torch", "vmap-jacrev", 50, 4) in got
    assert ("gbm", "jax", "second:per-path-second", 100, 0) in got
    # GBM-only strategies are not moments cases, and overrides pick problems and sizes.
    assert not any(c.strategy == "pathwise" for c in cases if c.problem == "moments")
    only = profiles.expand(profiles.load_profile(str(p)), {"problems": ["moments"], "inputs": [7]})
    assert {c.problem for c in only} == {"moments"} and {c.inputs for c in only} == {7}


@pytest.mark.slow  # runs capped worker processes (a sweep, a kill, a timeout)
def test_a_moments_sweep_is_measured_and_checked(tmp_path):
    cases = [
        Case(framework="jax", strategy="jacrev", problem="moments", inputs=1000,
                   repeats=2, warm_budget_s=0.1, timeout=120),
        Case(framework="jax", strategy="second:hvp-forward-over-reverse", problem="moments",
                   inputs=1000, repeats=2, warm_budget_s=0.1, timeout=120),
        Case(framework="numpy", strategy="analytic", problem="moments-batch", inputs=100,
                   batch=3, repeats=2, warm_budget_s=0.1, timeout=120),
    ]  # fmt: skip
    out = runner.run_sweep(cases, tmp_path / "wide.csv", quiet=True)
    rows = _rows(out)
    assert [r["status"] for r in rows] == ["ok"] * 3, [r["message"] for r in rows]
    assert all(float(r["max_rel_error"]) < 1e-5 for r in rows)
    assert {r["inputs"] for r in rows} == {"1000", "100"} and rows[0]["paths"] == ""


def test_dense_hessian_at_the_question_size_is_skipped_on_the_model(tmp_path):
    case = Case(framework="torch", strategy="second:func-hessian", problem="moments",
                      inputs=100_000)  # fmt: skip
    row = runner.measure_case(case)
    assert row["status"] == "skipped-predicted"
    # Three dense 100,000 x 100,000 float32 Hessians are 120 GB before any working memory.
    assert row["predicted_peak"] > 3 * 4 * 100_000**2


BAD_PROFILES = {
    "not YAML": ("groups: [\n  - {frameworks: [jax]", "not valid YAML at line"),
    "no groups": ("name: empty\n", "no 'groups' list"),
    "unknown key": ("groups:\n  - {frameworks: [jax], strategies: [jvp], pathz: [10]}\n", "pathz"),
    "unknown top key": ("jobz: 2\ngroups:\n  - {frameworks: [jax]}\n", "jobz"),
    "unknown framework": ("groups:\n  - {frameworks: [mxnet]}\n", "mxnet"),
    "unknown problem": ("groups:\n  - {problem: heat}\n", "heat"),
    "unknown strategy": ("groups:\n  - {frameworks: [jax], strategies: [warp]}\n", "warp"),
    "bad size": ("groups:\n  - {frameworks: [jax], strategies: [jvp], paths: [1e3.5]}\n", "paths"),
    "unknown crossover key": ("groups: []\ncrossover: {totl: 64}\n", "totl"),
    "crossover side too short": ("groups: []\ncrossover: {total: 4096, side: 32}\n", "side"),
}


@pytest.mark.parametrize("text,word", BAD_PROFILES.values(), ids=list(BAD_PROFILES))
def test_bad_profile_is_one_line_and_status_2(tmp_path, capsys, text, word):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    assert main(["sweep", "--profile", str(p), "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and word in err[0] and "Traceback" not in err[0], err


@pytest.mark.parametrize("written", ["10000", "10_000", "1e4", "1.0e4"])
def test_sizes_read_the_same_everywhere(tmp_path, written):
    p = tmp_path / "sizes.yaml"
    p.write_text(f"groups:\n  - {{frameworks: [jax], strategies: [jvp], paths: ['{written}']}}\n")
    assert {c.paths for c in profiles.expand(profiles.load_profile(str(p)))} == {10_000}
    cli = profiles.expand(profiles.load_profile("quick"), {"paths": [10_000]})
    assert {c.paths for c in cli if c.problem == "gbm"} == {10_000}


def test_the_efficient_profile_measures_the_standard_profiles_cases_at_its_size():
    """Its rows sit beside the reference dataset's: the same keys, so the same settings."""
    efficient = profiles.expand(profiles.load_profile("efficient"))
    standard = {c.key("env") for c in profiles.expand(profiles.load_profile("standard"))}
    assert {c.paths for c in efficient} == {1_000_000}
    assert [c.label() for c in efficient if c.key("env") not in standard] == []
    # Every recommended strategy's time is read against its simulation, measured beside it.
    names = {(c.framework, c.strategy) for c in efficient}
    for fw, name in names:
        baseline = Case(framework=fw, strategy=name).baseline
        assert baseline is None or (fw, baseline.text) in names, (fw, name)


def test_the_ratios_profile_measures_every_case_the_standard_profile_times_in_processes():
    """The third occasion's cases: the standard profile's timed in three workers (float32,
    plain glibc), no more and no fewer, so its rows sit beside the reference dataset's; and at
    the sizes where the picks are made (N = 10^4, n = 10^5), standard cases timed in three
    workers where the standard profile times them in one."""
    ratios = profiles.expand(profiles.load_profile("ratios"))
    standard = profiles.expand(profiles.load_profile("standard"))
    timed = {c.key("env") for c in standard if c.ratio_processes == 3
             and c.dtype == "float32" and c.allocator == "glibc"}  # fmt: skip
    at_picks = [c for c in ratios if c.size in (10_000, 100_000) and c.paths != 100_000]
    assert {c.key("env") for c in ratios if c not in at_picks} == timed
    assert {c.paths for c in ratios if c not in at_picks} == {100_000, 1_000_000}
    alone = {replace(c, ratio_processes=1).key("env") for c in at_picks}
    assert len(at_picks) == 34 and alone <= {c.key("env") for c in standard}
    assert {(c.problem, c.size) for c in at_picks} == {("gbm", 10_000), ("moments", 100_000)}


def test_the_environment_key_ignores_a_few_kib_of_ram_but_not_a_gib():
    """Machines of one kind report totals a few KiB apart from boot to boot: the same key, so a
    rerun on the next boot keeps the rows; another GiB of memory, or another version, is another
    environment."""
    from jacbench.measure import environment

    env = environment.environment()
    here = environment.fingerprint(env)
    assert environment.fingerprint({**env, "ram_bytes": 25_276_203_008}) == environment.fingerprint(
        {**env, "ram_bytes": 25_276_194_816}
    )
    assert environment.fingerprint({**env, "ram_bytes": env["ram_bytes"] + 2**30}) != here
    assert environment.fingerprint({**env, "torch": "0.0.0"}) != here


def test_the_commit_recorded_says_when_the_code_differed_from_it(tmp_path):
    """A sweep run with uncommitted code records the commit with '+changes'; a changed results
    file (outside src/) does not count; outside a checkout, 'unknown'."""
    import subprocess

    from jacbench.measure import environment

    assert environment.git_commit(tmp_path) == "unknown"

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       cwd=tmp_path, check=True, capture_output=True)  # fmt: skip

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "code.py").write_text("x = 1\n")
    (tmp_path / "results.csv").write_text("a\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "c")
    clean = environment.git_commit(tmp_path / "src")
    assert clean and clean != "unknown" and "+" not in clean
    (tmp_path / "results.csv").write_text("a\nb\n")
    assert environment.git_commit(tmp_path / "src") == clean
    (tmp_path / "src" / "code.py").write_text("x = 2\n")
    assert environment.git_commit(tmp_path / "src") == clean + "+changes"


def test_the_environment_records_the_cpu_generation_the_model_name_hides():
    """'AMD EPYC' names several generations whose kernels differ (AVX-512 or not): the family,
    model and widest vector extension are recorded; they are not in the key, so the reference
    dataset, measured before they were recorded, stays this environment's."""
    from jacbench.measure import environment

    zen4 = ("model name\t: AMD EPYC\ncpu family\t: 25\nmodel\t\t: 17\n"
            "flags\t\t: sse4_2 avx avx2 avx512f\n")  # fmt: skip
    zen3 = zen4.replace("model\t\t: 17", "model\t\t: 1").replace(" avx512f", "")
    assert environment.cpu_detail(zen4) == "family 25 model 17, avx512f"
    assert environment.cpu_detail(zen3) == "family 25 model 1, avx2"
    assert environment.cpu_detail("") == ""
    env = environment.environment()
    assert "cpu_detail" in env
    assert environment.fingerprint({**env, "cpu_detail": "x"}) == environment.fingerprint(env)
