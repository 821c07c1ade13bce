"""Sweeps on a Dask cluster (--cluster): the local runner's keys, each case once, each row's
machine, nothing lost when a worker dies or the sweep is cancelled, one line for a bad cluster."""

import contextlib
import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from jacbench.cli import main
from jacbench.errors import UsageError
from jacbench.measure import (
    cluster,
    cluster_sweep,
    crossover,
    environment,
    harness,
    probes,
    profiles,
    store,
    sweeps,
)
from jacbench.measure.dataset import Dataset

NAP = "callable:jacbench.measure.probes:nap"
LOSE = "callable:jacbench.measure.probes:lose_worker"


def _lines(path: Path) -> list[dict]:
    """Every row of the file as written, repeats included."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _rows_of(path: Path) -> list[dict]:
    """The rows of the file so far; none before it is made."""
    return _lines(path) if path.exists() else []


def _profile(tmp_path: Path, naps: list[int], losses: list[int] = ()) -> Path:
    """A profile of naps at the sizes naps, and cases of lose_worker at the sizes losses."""
    profile = tmp_path / "cluster.yaml"
    text = "name: cluster\ndefaults: {repeats: 1, warm_budget_s: 0.1, timeout: 60}\ngroups:\n"
    for strategy, sizes in ((NAP, naps), (LOSE, losses)):
        if sizes:
            text += f"  - frameworks: [callable]\n    strategies: [{strategy}]\n"
            text += f"    paths: {list(sizes)}\n"
    profile.write_text(text)
    return profile


@pytest.fixture
def fresh_workers(monkeypatch):
    """Each measuring child started fresh (not forked from a template): it dies with the Dask
    worker that started it (measure.worker asks Linux to kill it when its parent dies)."""
    monkeypatch.setenv("JACBENCH_WORKERS", "exec")


@pytest.mark.parametrize(
    "where, word",
    [("nowhere", "choose local, tcp://HOST:PORT"), ("slurm:missing.yaml", "does not exist")],
)
def test_a_bad_cluster_is_one_line_and_status_2(tmp_path, capsys, naps_profile, where, word):
    out = tmp_path / "r.csv"
    args = ["sweep", "--profile", str(naps_profile), "--out", str(out), "--cluster", where]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("jacbench: error: ") and word in err[0]
    assert not out.exists()


@pytest.mark.parametrize("command", [["reference"], ["advise", "m.py:f", "--example", "m.py:g"]])
def test_reference_and_advise_refuse_a_bad_cluster_in_one_line(
    command, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert main([*command, "--cluster", "nowhere"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and err[0].startswith("jacbench: error: --cluster 'nowhere': choose")
    assert not list(tmp_path.iterdir())


def test_the_slurm_config_asks_one_worker_a_machine_with_the_measure_resource(tmp_path):
    config = tmp_path / "slurm.yaml"
    config.write_text("queue: cpu\nwalltime: '02:00:00'\nmemory: 32GB\ncores: 8\nmachines: 3\n")
    found = cluster.slurm_options(config)
    assert found["machines"] == 3
    options = found["options"]
    assert options["processes"] == 1 and options["cores"] == 8 and options["queue"] == "cpu"
    extra = options["worker_extra_args"]
    assert extra[extra.index("--resources") + 1] == f"{cluster.RESOURCE}=1"
    config.write_text("queue: cpu\nwalltime: 1\nmemory: 1GB\ncores: 1\nnodes: 2\n")
    with pytest.raises(UsageError, match="unknown key 'nodes'"):
        cluster.slurm_options(config)


class _Scheduler:
    """A client whose scheduler gives a dashboard address and has bokeh at that version."""

    dashboard_link = "http://10.0.0.1:8787/status"

    def __init__(self, bokeh: str | None):
        self.bokeh = bokeh

    def get_versions(self, packages=()):
        return {"scheduler": {"packages": {name: self.bokeh for name in packages}}}


@pytest.mark.parametrize("bokeh", ["3.9.2", None, "2.4.3"])
def test_the_dashboard_address_is_given_only_where_the_scheduler_has_bokeh_to_serve_it(bokeh):
    said = cluster.dashboard(_Scheduler(bokeh))
    if bokeh == "3.9.2":
        assert said == _Scheduler.dashboard_link
    else:  # the address would serve a page saying that bokeh is missing
        assert said.startswith("not served") and "bokeh>=" in said and "http" not in said


@pytest.mark.slow  # starts a Python that imports dask and tries to connect for a second
def test_an_unreachable_scheduler_is_one_line_and_status_2(tmp_path, naps_profile):
    out = tmp_path / "r.csv"
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s")
    done = subprocess.run(
        [sys.executable, "-m", "jacbench", "sweep", "--profile", str(naps_profile), "--out",
         str(out), "--cluster", "tcp://127.0.0.1:9"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert lines == [lines[0]] and lines[0].startswith(
        "jacbench: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9"
    )
    assert not out.exists()


@pytest.mark.slow  # a LocalCluster of two process workers measures naps
def test_a_local_cluster_measures_the_local_runners_keys_once_each_with_its_machine(
    tmp_path, capsys, fresh_workers
):
    profile = _profile(tmp_path, [1, 2, 3, 4, 5])
    here, there = tmp_path / "here.csv", tmp_path / "there.csv"
    assert main(["sweep", "--profile", str(profile), "--out", str(here), "--quiet"]) == 0
    args = ["sweep", "--profile", str(profile), "--out", str(there), "--cluster", "local"]
    assert main([*args, "--jobs", "2"]) == 0
    rows = _lines(there)
    keys = [r["key"] for r in rows]
    assert sorted(keys) == sorted(r["key"] for r in _lines(here)) and len(set(keys)) == 5
    machine = environment.fingerprint(environment.environment())
    assert {r["env"] for r in rows} == {machine} and {r["status"] for r in rows} == {"ok"}
    meta = Dataset(there).metadata
    assert meta["cluster"] == "local" and set(meta["machines"]) == {machine}
    assert meta["machines"][machine]["hosts"] and meta["machines"][machine]["cpu"]
    err = capsys.readouterr().err
    assert "dashboard http" in err and "0 running" in err
    # Two workers of one measure resource each run no more than two cases at once.
    assert max(int(n) for n in re.findall(r"(\d+) running", err)) <= 2
    # Run again: nothing is submitted, nothing is written.
    before = there.read_text()
    assert main([*args, "--jobs", "2"]) == 0
    assert there.read_text() == before
    assert "5 of 5 cases already measured" in capsys.readouterr().err


@pytest.mark.slow  # LocalClusters whose workers are killed in the middle of a case
@pytest.mark.parametrize("losses, status", [(1, "ok"), (2, "error")])
def test_a_worker_lost_mid_case_is_retried_once_then_an_error_row_naming_it(
    tmp_path, monkeypatch, fresh_workers, losses, status
):
    monkeypatch.setenv(probes.LOSE_VARIABLE, f"{tmp_path / 'lost'}:{losses}")
    profile = _profile(tmp_path, [1, 2, 3], [1])
    out = tmp_path / "r.csv"
    cases = profiles.expand(profiles.load_profile(str(profile)))
    sweeps.run(cases, out, "local", quiet=True, jobs=2)
    rows = _lines(out)
    assert len(rows) == 4 and len({r["key"] for r in rows}) == 4  # nothing lost, nothing twice
    assert (tmp_path / "lost").read_text() == "x" * losses
    assert {r["status"] for r in rows if r["strategy"] == NAP} == {"ok"}
    (row,) = [r for r in rows if r["strategy"] == LOSE]
    assert row["status"] == status
    if status == "error":
        assert "was lost" in row["message"] and "tcp://127.0.0.1:" in row["message"]
        assert row["env"] == environment.fingerprint(environment.environment())
    # The measuring child of a killed worker died with it (measure.worker's PR_SET_PDEATHSIG):
    # none is left sleeping out the probe's minute.
    assert not _left_running(os.environ[probes.LOSE_VARIABLE])


def _left_running(marker: str) -> list[int]:
    """The processes still running with marker as their LOSE_VARIABLE."""
    import psutil

    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get(probes.LOSE_VARIABLE) == marker and "worker" in " ".join(
                p.cmdline()
            ):
                found.append(p.pid)
        except psutil.Error:
            continue
    return found


@contextlib.contextmanager
def _interruptible():
    """Children started meanwhile act on SIGINT. A shell that starts a command in the background
    (`make test > log &`, any `&` in a script) starts it with SIGINT ignored, and an ignored
    signal is inherited: a sweep started from such a suite ignores its Ctrl-C and measures every
    case (what failed this test in parallel runs; the load made no difference)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # reset to default on exec
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.slow  # a cluster sweep interrupted, then run again
def test_a_cancelled_cluster_sweep_leaves_whole_rows_and_a_rerun_measures_the_rest(tmp_path):
    profile = _profile(tmp_path, list(range(1, 9)))
    out = tmp_path / "r.csv"
    args = [sys.executable, "-m", "jacbench", "sweep", "--profile", str(profile), "--out",
            str(out), "--cluster", "local", "--jobs", "2", "--quiet"]  # fmt: skip
    env = dict(os.environ, JACBENCH_WORKERS="exec")
    with _interruptible():
        proc = subprocess.Popen(args, env=env, stderr=subprocess.DEVNULL)
    # A bound on a hang, not a time: on a starved machine (two busy processes at a higher
    # priority) the cluster's start and the first two rows took 90 s.
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline and len(_rows_of(out)) < 2:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=300) == -signal.SIGINT  # stopped by the interrupt, not finished
    kept = _rows_of(out)
    assert 2 <= len(kept) < 8 and out.read_text().endswith("\n")
    assert subprocess.run(args, env=env, timeout=600).returncode == 0
    rows = _lines(out)
    assert len(rows) == 8 == len({r["key"] for r in rows})
    assert rows[: len(kept)] == kept  # what was measured before the cancel stands


def test_the_quick_profiles_cases_have_the_local_runners_keys_on_the_clusters_workers(
    quick_results,
):
    """Every case of the test sweep of the quick profile (tests/conftest.py), sent to the two
    workers of a LocalCluster: each worker keys it as the local runner did, finds it measured
    and returns at once; and the client leaves every one of them unsubmitted."""
    out, cases = quick_results
    keys = {r["key"] for r in store.read_rows(out)}
    with cluster.connect("local", workers=2) as client:
        futures = [client.submit(cluster.measure_task, c, frozenset(keys), None, pure=False,
                                 resources={cluster.RESOURCE: 1}) for c in cases]  # fmt: skip
        found = client.gather(futures)
        machine = {m["key"] for m in client.run(cluster.describe).values()}
    assert all(set(f) == {"done", "host"} for f in found)
    assert sorted(f["done"] for f in found) == sorted(keys) and len(keys) == len(cases)
    todo, done = cluster_sweep._todo(cases, out, machine)
    assert todo == [] and done == keys


@pytest.mark.slow  # a LocalCluster measures a nap and a crossover of 2 shapes in JAX
def test_a_profile_on_a_cluster_measures_its_crossover_there_too(tmp_path, monkeypatch):
    profile = _profile(tmp_path, [1])
    crossing = "crossover: {total: 4, steps: 2, repeats: 3, warm_budget_s: 0.1, frameworks: [jax]}"
    profile.write_text(profile.read_text() + crossing + "\n")

    def here(*args, **kwargs):
        raise AssertionError("a case ran on the client's machine, not on the cluster's")

    monkeypatch.setattr(harness, "_launch", here)  # the cluster's workers are other processes
    results = tmp_path / "cluster.csv"
    sweeps.measure_profile(str(profile), results, cluster="local")
    out = Dataset(results).crossover
    rows = _lines(out)
    cases = crossover.profile_cases(profiles.load_profile(str(profile)))
    assert sorted(r["key"] for r in rows) == sorted({c.key(rows[0]["env"]) for c in cases})
    assert {r["status"] for r in rows} == {"ok"} and len(rows) == 4
    assert Dataset(out).metadata["cluster"] == "local"


WORKER_COMMIT = "c0ffee0+worker"
WORKER_GPUS = [{"name": "Worker GPU", "driver_version": "1", "memory.total": "1 MiB"}]
WORKER_PROBE = {"torch": {"gpus": ["Worker GPU"]}}


def _as_another_machine() -> None:
    """Run on a worker before it describes itself: its commit and GPU are not the client's."""
    environment.git_commit = lambda where=None: WORKER_COMMIT
    environment.gpus = lambda run=None: WORKER_GPUS
    environment.device_probe = lambda timeout=180: WORKER_PROBE


@pytest.mark.slow  # a LocalCluster of one worker measures two naps
def test_the_sidecar_describes_the_workers_machine_with_its_commit_and_gpu_not_the_clients(
    tmp_path, monkeypatch
):
    def here(*args, **kwargs):
        raise AssertionError("the sidecar read a fact of the client's machine")

    for fact in ("git_commit", "gpus", "device_probe", "read_bandwidth"):
        monkeypatch.setattr(environment, fact, here)  # here only: the workers are other processes
    cases = profiles.expand(profiles.load_profile(str(_profile(tmp_path, [1, 2]))))
    on_gpu = [types.SimpleNamespace(device="cuda", allocator=c.allocator, threads=c.threads)
              for c in cases]  # fmt: skip
    out = tmp_path / "r.csv"
    with cluster.connect("local", workers=1) as client:
        client.run(_as_another_machine)
        cluster_sweep._locked(client, cases, out, "local", True, False, 1, None)
        gpu_meta = cluster_sweep._sidecar(out, on_gpu, 1, "local", cluster_sweep._machines(
            client, on_gpu=True))  # fmt: skip
    (key,) = {r["env"] for r in _lines(out)}  # the worker's machine, its GPU in its key
    meta = Dataset(out).metadata
    assert meta["environment_key"] == key and meta["gpu"] == "Worker GPU"
    assert meta["git_commit"] == WORKER_COMMIT == meta["machines"][key]["git_commit"]
    assert meta["machines"][key]["read_bandwidth"]["gb_per_s"] > 0
    assert gpu_meta["gpus"] == WORKER_GPUS == gpu_meta["machines"][key]["gpus"]
    assert gpu_meta["device_probe"] == WORKER_PROBE == gpu_meta["machines"][key]["device_probe"]


ADVISED = """
import torch


def lognormal(theta, z):
    return theta[0] * torch.exp(theta[1] * z)


def example(n):
    return torch.tensor([100.0, 0.2]), torch.randn(n, generator=torch.Generator().manual_seed(0))
"""


@pytest.mark.slow  # advise's workers on a LocalCluster: the probe, two strategies, two sizes
def test_advise_on_a_cluster_runs_every_worker_there(tmp_path, monkeypatch, capsys):
    (tmp_path / "mine.py").write_text(ADVISED)
    monkeypatch.chdir(tmp_path)

    def here(*args, **kwargs):
        raise AssertionError("a worker started on the client's machine, not on the cluster's")

    monkeypatch.setattr(harness, "_launch", here)  # the cluster's workers are other processes
    out = tmp_path / "advice"
    rc = main(["advise", "mine.py:lognormal", "--example", "mine.py:example", "--sizes",
               "200,400", "--strategies", "jacfwd,jacrev", "--threads", "1", "--out", str(out),
               "--cluster", "local"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "measuring on " in err and "(worker tcp://127.0.0.1:" in err
    advice = json.loads((out / "advice.json").read_text())
    assert {s["name"]: s["status"] for s in advice["strategies"]} == {
        "jacfwd": "ok",
        "jacrev": "ok",
    }


@pytest.mark.slow  # a LocalCluster started for nothing to measure
def test_a_cluster_sweep_past_its_time_starts_no_case_and_says_the_rerun_measures_them(
    tmp_path, capsys
):
    profile = _profile(tmp_path, [1, 2, 3])
    out = tmp_path / "r.csv"
    cases = profiles.expand(profiles.load_profile(str(profile)))
    sweeps.run(cases, out, "local", jobs=2, stop_after=1e-9)
    assert not out.exists() or store.read_rows(out) == []
    assert "3 case(s) not started" in capsys.readouterr().err
