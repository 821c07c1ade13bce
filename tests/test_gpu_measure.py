"""Measuring on a GPU, checked on the CPU: the new columns, the gpu profiles, the GPU's facts in
the sidecar, the sweep's deadline, the summary table, and the worker's synchronised and
unsynchronised timings."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jacbench.cli import main
from jacbench.constants import GPU_FRAMEWORKS
from jacbench.errors import UsageError
from jacbench.measure import environment, harness, profiles, runner, store, sweep_summary
from jacbench.measure.case import Case
from jacbench.measure.device_probe import problems
from jacbench.report import data, dataset
from jacbench.strategies import registry

ROOT = Path(__file__).resolve().parents[1]
NEW = ["device", "inputs_device_in_use", "cold_device_peak", "warm_device_peak", "unsynced_n",
       "unsynced_median_s"]  # fmt: skip
SOLUTIONS = ["grad-loop-create-graph", "batched-backward", "analytic"]


def _row(case: Case, **metrics) -> dict:
    return {**case.spec_row(), "key": case.key("env"), "env": "env", "status": "ok", **metrics}


def test_the_new_columns_round_trip_through_the_store_and_the_loader(tmp_path):
    out = tmp_path / "gpu.csv"
    gpu = Case(framework="torch", strategy="analytic", problem="moments", inputs=10,
               device="cuda")  # fmt: skip
    cpu = Case(framework="torch", strategy="jvp", paths=10)
    store.append_row(out, _row(gpu, warm_median_s=0.004, unsynced_n=5, unsynced_median_s=1e-5,
                               inputs_device_in_use=4096, cold_device_peak=2**30,
                               warm_device_peak=2**29))  # fmt: skip
    store.append_row(out, _row(cpu, warm_median_s=0.002))
    rows = {r["device"] or "cpu": r for r in store.typed_rows(out)}  # blank: the CPU's
    assert rows["cuda"]["cold_device_peak"] == 2**30 and rows["cuda"]["unsynced_n"] == 5
    assert rows["cpu"]["warm_device_peak"] is None and rows["cpu"]["unsynced_median_s"] is None
    df = data.load(out).set_index("device")
    assert df.loc["cuda", "unsynced_median_s"] == pytest.approx(1e-5)
    assert df.loc["cuda", "warm_device_peak"] == 2**29 and str(df["unsynced_n"].dtype) == "Int64"


def test_a_dataset_without_the_columns_still_loads_as_the_cpus(tmp_path):
    # The reference as it was before the device columns: the same rows without them.
    import pandas as pd

    older = tmp_path / "older.csv"
    reference = pd.read_csv(ROOT / dataset.RESULTS, dtype=str, keep_default_na=False)
    reference.drop(columns=[c for c in NEW if c in reference]).to_csv(older, index=False)
    header = older.read_text().splitlines()[0].split(",")
    assert not set(NEW) & set(header) and store.older(header)
    for path in (older, ROOT / dataset.RESULTS):  # the reference: measured on the CPU only
        df = data.load(path)
        assert set(df["device"]) == {"cpu"}
        assert df["cold_device_peak"].isna().all()
        # times as the question took them only for the question's own solutions
        timed = df[df["unsynced_median_s"].notna()]
        assert all(registry.get(r["framework"], r["strategy"]).question_timed
                   for _, r in timed.iterrows())  # fmt: skip


def test_an_older_file_takes_a_gpu_row_and_keeps_its_own(tmp_path):
    out = tmp_path / "old.csv"
    lines = (ROOT / dataset.RESULTS).read_text().splitlines()
    out.write_text("\n".join(lines[:4]) + "\n")
    store.append_row(out, _row(Case(framework="jax", strategy="jvp", paths=10, device="cuda")))
    assert store.read_rows(out)[0]["device"] == "" and store.read_rows(out)[-1]["device"] == "cuda"
    assert list(data.load(out)["device"]) == ["cpu", "cpu", "cpu", "cuda"]


@pytest.mark.parametrize("name", ["gpu", "gpu-smoke"])
def test_the_gpu_profiles_expand_to_registered_targets_on_the_gpu(name):
    cases = profiles.expand(profiles.load_profile(name), ram=128 * 2**30)
    assert cases and {c.device for c in cases} == {"cuda"}
    assert {c.framework for c in cases} <= set(GPU_FRAMEWORKS)  # TensorFlow is not there
    for c in cases:
        assert c.target.unsupported(c.problem, c.dtype, c.device) is None, c.label()
    if name == "gpu":
        assert {c.strategy for c in cases if c.problem == "moments"} >= set(SOLUTIONS)
        assert {c.paths for c in cases if c.strategy == "question"} == {1000, 10000}
        assert max(c.paths for c in cases) == 10**8
        assert all(c.target.streams for c in cases if c.paths == 10**8)
        assert max(c.timeout for c in cases) <= 60  # scripts/gpu-sweep's LONGEST_CASE_S


def test_a_device_override_and_a_group_that_cannot_run_on_it(tmp_path):
    cases = profiles.expand(profiles.load_profile("gpu-smoke"), {"device": "cpu"})
    assert {c.device for c in cases} == {"cpu"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("groups:\n  - {frameworks: [tensorflow], strategies: [jvp], device: cuda}\n")
    with pytest.raises(UsageError, match="group 1: tensorflow runs on the cpu only, not cuda"):
        profiles.load_profile(str(bad))
    with pytest.raises(UsageError, match="cpu, cuda"):
        profiles.expand(profiles.load_profile("gpu-smoke"), {"device": "rocm"})


def test_the_environment_names_a_gpu_only_where_there_is_one(monkeypatch):
    smi = ("NVIDIA H100 80GB HBM3, 570.86.15, 81559 MiB\n", "| Driver Version: 570.86.15  "
           "CUDA Version: 12.8 |\n")  # fmt: skip

    def fake(args, **kw):
        text = smi[0] if any(a.startswith("--query-gpu") for a in args) else smi[1]
        return subprocess.CompletedProcess(args, 0, stdout=text, stderr="")

    found = environment.gpus(run=fake)
    assert found == [{"name": "NVIDIA H100 80GB HBM3", "driver_version": "570.86.15",
                      "memory.total": "81559 MiB", "cuda_driver": "12.8"}]  # fmt: skip
    monkeypatch.setattr(environment, "gpus", lambda: [])
    env = environment.environment()
    assert "gpu" not in env  # a CPU machine's key is what it was
    monkeypatch.setattr(environment, "gpus", lambda: found)
    assert environment.environment()["gpu"] == "NVIDIA H100 80GB HBM3"
    assert environment.fingerprint(environment.environment()) != environment.fingerprint(env)


def test_the_sidecar_of_a_gpu_sweep_records_the_gpu_and_the_frameworks_view(monkeypatch, tmp_path):
    probe = tmp_path / "device.json"
    probe.write_text('{"torch": {"version": "2.11.0", "cuda": "12.8", "cuda_available": true}}\n')
    monkeypatch.setenv(environment.PROBE_VARIABLE, str(probe))
    monkeypatch.setattr(environment, "gpus", lambda: [{"name": "a GPU"}])
    gpu = [Case(framework="torch", strategy="jvp", paths=10, device="cuda")]
    meta = environment.metadata_record(environment.environment(), gpu, 1, store.COLUMNS)
    assert meta["devices"] == ["cuda"] and meta["gpus"] == [{"name": "a GPU"}]
    assert meta["device_probe"]["torch"]["cuda"] == "12.8"
    cpu = [Case(framework="torch", strategy="jvp", paths=10)]
    meta = environment.metadata_record(environment.environment(), cpu, 1, store.COLUMNS)
    assert meta["devices"] == ["cpu"] and "device_probe" not in meta


def test_the_probe_says_which_framework_reaches_no_gpu():
    found = {"torch": {"cuda_available": True}, "jax": {"error": "ImportError: no jax"}}
    assert problems(found) == ["JAX reaches no GPU: ImportError: no jax"]
    assert problems({"torch": {"cuda_available": True}, "jax": {"gpus": ["gpu:H100"]}}) == []


def test_a_sweep_past_its_deadline_starts_no_case_and_says_so(tmp_path, naps_profile, capsys):
    out = tmp_path / "naps.csv"
    cases = profiles.expand(profiles.load_profile(str(naps_profile)))
    runner.run_sweep(cases, out, stop_after=1e-9)
    assert not out.exists() or store.read_rows(out) == []
    assert "3 case(s) not started" in capsys.readouterr().err
    assert main(["sweep", "--profile", str(naps_profile), "--stop-after", "0"]) == 2


def test_the_summary_lists_every_row_and_fails_the_smoke_check_on_one_not_ok(tmp_path, capsys):
    out = tmp_path / "s.csv"
    ok = Case(framework="torch", strategy="analytic", problem="moments", inputs=10**5,
              device="cuda")  # fmt: skip
    bad = Case(framework="jax", strategy="jvp", paths=10**7, device="cuda")
    store.append_row(out, _row(ok, warm_median_s=0.0021, unsynced_median_s=0.0004,
                               warm_device_peak=3 * 2**20))  # fmt: skip
    text = sweep_summary.table(out)
    assert "1e5" in text and "2.10 ms" in text and "400 us" in text and "3 MiB" in text
    assert sweep_summary.main([str(out), "--require-ok"]) == 0
    store.append_row(out, {**_row(bad), "status": "error", "message": "CUDA out of memory"})
    assert sweep_summary.main([str(out), "--require-ok"]) == 1
    assert "jax/jvp 1e7: error: CUDA out of memory" in capsys.readouterr().out
    assert sweep_summary.main([str(tmp_path / "none.csv")]) == 2


def _worker(spec: dict, keep: bool = False) -> dict:
    """The worker's record for spec in a fresh process; keep: on the GPU's path (results left to
    the framework, each timed call waiting for it) though on the CPU."""
    patch = "devices.keeps_results = lambda device: True; " if keep else ""
    code = ("import json, sys; from jacbench.strategies import devices; " + patch +
            "from jacbench.measure import worker; print(json.dumps(worker.run(json.loads("
            "sys.argv[1]))))")  # fmt: skip
    env = {**harness.os.environ, **harness.thread_environment(1)}
    out = subprocess.run([sys.executable, "-c", code, json.dumps(spec)], capture_output=True,
                         text=True, timeout=300, env=env)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # runs worker processes
@pytest.mark.parametrize("keep", [False, True], ids=["cpu", "gpu-path"])
def test_the_three_solutions_are_timed_synchronised_and_as_the_question_timed_them(keep):
    for name in [*SOLUTIONS, "jacrev"]:
        case = Case(framework="torch", strategy=name, problem="moments", inputs=10**4, repeats=3,
                    warm_budget_s=0.05, device="cpu")  # fmt: skip
        rec = _worker(case.worker_spec(), keep)
        assert rec["status"] == "ok", rec["message"]
        assert rec["max_rel_error"] < 1e-5 and rec["warm_n"] >= 3
        if name == "jacrev":  # not one of the question's: no unsynchronised timing
            assert "unsynced_median_s" not in rec
        else:
            assert rec["unsynced_n"] >= 3 and rec["unsynced_median_s"] > 0


@pytest.mark.slow  # runs worker processes
def test_jax_on_the_gpu_path_waits_for_its_results_and_checks_them():
    case = Case(framework="jax", strategy="pathwise", paths=2000, repeats=3, warm_budget_s=0.05)
    rec = _worker(case.worker_spec(), keep=True)
    assert rec["status"] == "ok", rec["message"]
    assert rec["max_rel_error"] < 1e-5 and rec["ratio_values"]
