"""One sweep at a time writes a results file, and a file with a key found twice reads as the last
row of each key, said in one line."""

import csv
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from jacbench.cli import main
from jacbench.measure import lock, store
from jacbench.measure.dataset import Dataset
from jacbench.report import data

DATA = Path(__file__).parent / "data"

# A process that takes the lock of the file argv[1] (waiting for it if argv[2] is "wait"), says
# "held" on stdout, and keeps it until its stdin closes.
HOLDER = """
import sys
from jacbench.measure import lock
with lock.locked(sys.argv[1], wait=sys.argv[2] == "wait"):
    print("held", flush=True)
    sys.stdin.read()
"""


def _hold(path: Path, wait: bool = False) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), "wait" if wait else "no"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _release(proc: subprocess.Popen) -> None:
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0, proc.stderr.read()


def test_a_second_sweep_on_a_file_being_written_names_the_first_and_exits_2(
    tmp_path, capsys, naps_profile
):
    out = tmp_path / "naps.csv"
    holder = _hold(out)
    try:
        assert holder.stdout.readline() == "held\n"
        assert lock.lock_path(out).read_text().strip() == str(holder.pid)
        args = ["sweep", "--profile", str(naps_profile), "--out", str(out), "--quiet"]
        assert main(args) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1
        assert f"another sweep (pid {holder.pid}) is writing {out}" in err[0]
        assert "--wait" in err[0]
        # It measured nothing and wrote nothing: no rows, no metadata.
        assert not out.exists() and not Dataset(out).meta.exists()
    finally:
        _release(holder)
    assert not lock.lock_path(out).exists()  # the holder removed it on its way out


def test_with_wait_a_second_locker_says_so_and_goes_on_once_the_first_ends(tmp_path):
    out = tmp_path / "r.csv"
    first = _hold(out)
    assert first.stdout.readline() == "held\n"
    second = _hold(out, wait=True)
    try:
        line = second.stderr.readline()
        assert f"waiting for another sweep (pid {first.pid}) to end" in line
        assert str(out) in line
        _release(first)
        assert second.stdout.readline() == "held\n"
        assert lock.lock_path(out).read_text().strip() == str(second.pid)
    finally:
        if first.poll() is None:
            _release(first)
        _release(second)
    assert not lock.lock_path(out).exists()


def test_the_lock_of_a_killed_sweep_is_free(tmp_path):
    out = tmp_path / "r.csv"
    holder = _hold(out)
    assert holder.stdout.readline() == "held\n"
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    # Its lock file stays behind, naming it; the kernel has released the lock itself.
    assert lock.lock_path(out).read_text().strip() == str(holder.pid)
    with lock.locked(out):
        assert lock.lock_path(out).read_text().strip() == str(os.getpid())
    assert not lock.lock_path(out).exists()


def test_a_key_found_twice_reads_as_its_last_row_and_one_line_says_so(tmp_path, capsys):
    with open(DATA / "results-small.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    again = dict(rows[0], warm_median_s="123.5", message="the later row")
    path = tmp_path / "twice.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=store.COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows([*rows, again])

    read = store.read_rows(path)
    assert len(read) == len(rows)
    assert len({r["key"] for r in read}) == len(rows)
    by_key = {r["key"]: r for r in read}
    assert by_key[rows[0]["key"]]["message"] == "the later row"
    assert by_key[rows[1]["key"]] == dict.fromkeys(store.COLUMNS, "") | rows[1]

    df = data.load(path)
    assert len(df) == len(rows) and df["key"].is_unique
    assert df.loc[df["key"] == rows[0]["key"], "warm_median_s"].item() == 123.5
    store.read_rows(path)

    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1  # three reads of the same file, one line
    assert f"{path} has 1 row(s) repeating an earlier row's key" in err[0]
    assert "the last row of each key is read" in err[0]


def test_a_file_without_repeated_keys_reads_silently(tmp_path, capsys):
    rows = store.read_rows(DATA / "results-small.csv")
    assert len({r["key"] for r in rows}) == len(rows)
    data.load(DATA / "results-small.csv")
    assert capsys.readouterr().err == ""


def _sweep(profile: Path, out: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "jacbench", "sweep", "--profile", str(profile), "--out", str(out)]
    return subprocess.Popen([*cmd, "--quiet", *extra], stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.slow  # two sweeps of capped worker processes
def test_two_sweeps_at_once_on_one_file_leave_each_case_once(tmp_path, naps_profile):
    profile = naps_profile
    # Both wait for each other: both end well, and the second measures nothing again.
    out = tmp_path / "waiting.csv"
    procs = [_sweep(profile, out, "--wait"), _sweep(profile, out, "--wait")]
    assert [p.wait(timeout=600) for p in procs] == [0, 0]
    keys = [r["key"] for r in csv.DictReader(open(out, newline=""))]
    assert len(keys) == 3 and len(set(keys)) == 3
    # Neither waits: the one that finds the file being written exits 2 (if they overlapped at
    # all), and the file holds each case once either way.
    out = tmp_path / "refusing.csv"
    procs = [_sweep(profile, out), _sweep(profile, out)]
    codes = sorted(p.wait(timeout=600) for p in procs)
    assert codes in ([0, 0], [0, 2])
    keys = [r["key"] for r in csv.DictReader(open(out, newline=""))]
    assert len(keys) == 3 and len(set(keys)) == 3


def test_a_lock_that_cannot_be_opened_is_one_line(tmp_path, capsys, naps_profile):
    out = tmp_path / "r.csv"
    lock.lock_path(out).mkdir()  # a folder where the lock file should be: no one can open it
    args = ["sweep", "--profile", str(naps_profile), "--out", str(out), "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"cannot write {out}" in err[0]
    assert not out.exists()
