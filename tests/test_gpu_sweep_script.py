"""scripts/gpu-sweep's dry run: the GPU machine's steps on the CPU, every size 1,000, with the
packages that machine lacks (TensorFlow, the book's tools) made impossible to import."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jacbench.measure import store
from jacbench.measure.dataset import Dataset
from jacbench.report import data

ROOT = Path(__file__).resolve().parents[1]
# Not on the GPU machine: importing any of them along the sweep's path would fail there.
ABSENT = ("tensorflow", "jupytext", "papermill", "jupyter_book", "myst_nb", "nbclient",
          "playwright", "itables", "ipykernel", "IPython")  # fmt: skip
# Every finder answers "not found" for them, as on a machine without them: an import fails with
# ModuleNotFoundError and importlib.util.find_spec returns None (torch asks it for tensorflow).
BLOCKER = f"""
import sys


class Absent:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {ABSENT!r}:
            return None
        return self.finder.find_spec(name, path, target)

    def __getattr__(self, attr):
        return getattr(self.finder, attr)


sys.meta_path[:] = [Absent(f) if hasattr(f, "find_spec") else f for f in sys.meta_path]
"""


def test_the_script_refuses_an_unknown_argument():
    out = subprocess.run([str(ROOT / "scripts" / "gpu-sweep"), "--wet"], capture_output=True,
                         text=True, timeout=30)  # fmt: skip
    assert out.returncode == 2 and "usage" in out.stderr


@pytest.mark.slow  # the profile at size 1,000: 21 worker processes, about a minute on 2 cores
def test_the_dry_run_measures_the_gpu_profile_on_the_cpu_without_the_missing_packages(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLOCKER)
    out = tmp_path / "out"
    env = {**os.environ, "DEVICE": "cpu", "OUT": str(out), "PYTHON": sys.executable,
           "PYTHONPATH": str(tmp_path / "site")}  # fmt: skip
    run = subprocess.run([str(ROOT / "scripts" / "gpu-sweep"), "--dry-run"], capture_output=True,
                         text=True, timeout=900, env=env, cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "smoke check passed" in run.stdout and "== (c) summary" in run.stdout
    rows = store.typed_rows(out / "gpu.csv")
    assert rows and {r["status"] for r in rows} == {"ok"}, [r["message"] for r in rows]
    assert set(data.load(out / "gpu.csv")["device"]) == {"cpu"}  # blank in the file
    assert {r["paths"] for r in rows if r["problem"] == "gbm"} == {1000}
    timed = {r["strategy"] for r in rows if r["unsynced_median_s"] is not None}
    assert timed == {"grad-loop-create-graph", "batched-backward", "analytic"}
    assert Dataset(out / "gpu.csv").metadata["devices"] == ["cpu"]
    assert "torch" in (out / "device.json").read_text()
