"""Workers forked from a template (measure.forks, the test suite's way) against fresh ones.

What the rest of the suite reads from a forked worker's record must be what a fresh worker
records: the status, the check against the closed form, the memory of each phase. The caps must
stop a forked worker as they stop a fresh one, and its template must serve the next case.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from jacbench.measure import forks, harness
from jacbench.measure.case import Case
from jacbench.measure.runner import measure_case

PROBES = "jacbench.measure.probes"


def _measured(case: Case, mode: str, monkeypatch) -> dict:
    monkeypatch.setenv(forks.MODE_VARIABLE, mode)
    return measure_case(case)


@pytest.mark.slow  # fresh workers import their framework
def test_a_forked_worker_records_what_a_fresh_one_does(monkeypatch):
    # TensorFlow: the framework whose libraries hold the most code pages.
    case = Case(framework="tensorflow", strategy="pathwise", paths=300, repeats=3,
                warm_budget_s=0.05)  # fmt: skip
    fresh = _measured(case, forks.EXEC, monkeypatch)
    forked = _measured(case, forks.FORK, monkeypatch)
    assert fresh["status"] == forked["status"] == "ok"
    assert forked["max_rel_error"] == fresh["max_rel_error"]  # the same inputs, the same answer
    assert forked["import_s"] < 0.2 * fresh["import_s"]  # imported once, by the template
    for field in ("inputs_rss_before", "cold_peak", "warm_peak"):
        # Without the template's file pages read again the child held about half of these
        # (TensorFlow: 370 MB against 722 MB at N = 300).
        assert forked[field] == pytest.approx(fresh[field], rel=0.1), field


def _probe(name: str, **kw) -> Case:
    return Case(framework="callable", strategy=f"callable:{PROBES}:{name}", threads=1, repeats=1,
                warm_budget_s=1, **kw)  # fmt: skip


@pytest.mark.slow  # a kill and a timeout
def test_the_caps_stop_a_forked_worker_and_its_template_serves_again(monkeypatch):
    monkeypatch.setenv(forks.MODE_VARIABLE, forks.FORK)
    capped = measure_case(_probe("allocate_forever", mem_cap=harness.GIB, timeout=60))
    assert capped["status"] == "memory-cap"
    assert harness.GIB < capped["watched_peak_rss"] < 2 * harness.GIB
    slept = measure_case(_probe("sleep_forever", mem_cap=harness.GIB, timeout=2))
    assert slept["status"] == "timeout" and slept["wall_s"] >= 2
    died = measure_case(_probe("abort", mem_cap=harness.GIB, timeout=60))
    assert died["status"] == "error" and "SIGABRT" in died["message"]
    # The same template after a kill, a timeout and an abort: the next case runs in it.
    templates = {id(t) for _, t in forks._IDLE}
    after = measure_case(_probe("allocate_400mb", mem_cap=harness.GIB, timeout=60))
    assert after["status"] == "ok"
    assert {id(t) for _, t in forks._IDLE} == templates


# In a process of its own, as a template is: this one's threads (JAX's among them) make a fork
# unsafe here. The child reports what its page table holds before and after touch.
FORK_AND_TOUCH = """
import os
from jacbench.measure import forks


def covered(runs):
    return {a + i for a, size in runs for i in range(0, size, forks.PAGE)}


runs = forks.resident_file_pages()
assert runs and all(size > 0 and size % forks.PAGE == 0 for _, size in runs)
pid = os.fork()
if pid == 0:
    wanted = covered(runs)
    before = wanted <= covered(forks.resident_file_pages())
    forks.touch(runs)
    after = wanted <= covered(forks.resident_file_pages())
    print("before", before, "after", after, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_a_forked_child_reads_the_templates_file_pages_into_its_own_table():
    done = subprocess.run([sys.executable, "-c", FORK_AND_TOUCH], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    # Before: some of the parent's file pages missing from the child's table; after: none.
    assert done.stdout.split() == ["before", "False", "after", "True"]
