"""Sweeps: profiles expand to cases, every case is one row, and a killed sweep resumes."""

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jacbench.cli import main
from jacbench.errors import UsageError
from jacbench.measure import sweep

DATA = Path(__file__).parent / "data"


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


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


def test_rerun_measures_nothing_twice(tmp_path):
    out = tmp_path / "naps.csv"
    profile = tmp_path / "naps.yaml"
    profile.write_text(
        "name: naps\ndefaults: {repeats: 1, warm_budget_s: 0.1, timeout: 30}\ngroups:\n"
        "  - frameworks: [callable]\n"
        "    strategies: [callable:jacbench.measure.probes:nap]\n"
        "    paths: [1, 2, 3]\n"
    )
    args = ["sweep", "--profile", str(profile), "--out", str(out), "--quiet"]
    assert main(args) == 0
    first = out.read_text()
    assert len(_rows(out)) == 3
    assert main(args) == 0
    assert out.read_text() == first


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


def test_profiles_are_data_and_expand():
    assert {"quick", "standard", "full"} <= set(sweep.profile_names())
    quick = sweep.expand(sweep.load_profile("quick"))
    keys = {(c.framework, c.strategy) for c in quick}
    from jacbench.strategies.registry import STRATEGIES

    # The quick profile measures every registered GBM strategy at least once.
    assert {(s.framework, s.name) for s in STRATEGIES if "gbm" in s.problems} <= keys


def test_overrides_filter_a_profile():
    cases = sweep.expand(
        sweep.load_profile("quick"),
        {"frameworks": ["jax"], "strategies": ["jvp"], "paths": [100, 200], "mem_cap": "1GiB"},
    )
    assert {(c.framework, c.strategy, c.paths) for c in cases} == {
        ("jax", "jvp", 100),
        ("jax", "jvp", 200),
    }
    assert all(c.mem_cap == 2**30 for c in cases)


def test_predicted_case_above_the_cap_is_skipped_not_run():
    case = sweep.Case(framework="tensorflow", strategy="tape-jacobian-pfor", paths=100_000,
                      mem_cap=2**30)  # fmt: skip
    row = sweep.measure_case(case)
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
        sweep.expand(sweep.load_profile(str(p)))


def test_results_file_with_other_columns_is_refused(tmp_path, capsys):
    out = tmp_path / "old.csv"
    out.write_text("key,framework,strategy\nabc,torch,jvp\n")
    args = ["sweep", "--profile", str(DATA / "probes.yaml"), "--out", str(out), "--quiet"]
    assert main(args) == 2
    assert "--fresh" in capsys.readouterr().err
