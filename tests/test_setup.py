"""The set-up a newcomer runs: the Debian packages step of `make test` and `make book`, and the
test tiers."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / ".ci" / "packages"


def _run(*args: str, as_nobody: bool = False, **env: str) -> subprocess.CompletedProcess:
    command = [str(PACKAGES), *args]
    if as_nobody and os.geteuid() == 0:
        # A user without root, as a newcomer runs make.
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    return subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )


@pytest.mark.skipif(
    os.geteuid() == 0 and not shutil.which("setpriv"), reason="no setpriv to drop root"
)
def test_a_missing_package_without_root_stops_with_one_line_naming_it_and_the_command():
    done = _run("chromium", as_nobody=True, JACBENCH_CHROMIUM="/nonexistent/chromium")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "chromium" in lines[0] and "apt-get install -y chromium" in lines[0]
    assert done.stdout == ""


def test_an_unknown_package_is_refused_with_status_2():
    done = _run("left-pad")
    assert done.returncode == 2 and "unknown package left-pad" in done.stderr


def test_the_makefile_and_ci_install_the_packages_through_one_script():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: .*\bpackages\b", makefile, re.M), "make test must install them"
    assert re.search(r"^packages:\n\t@\.ci/packages\n", makefile, re.M)
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci and "apt-get" not in ci  # one place installs them


@pytest.mark.slow  # collects the whole suite (about 8 s)
def test_the_fast_tier_leaves_out_every_test_that_sweeps_or_builds_the_book():
    from conftest import HEAVY_FIXTURES

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--fixtures-per-test", "-q", "-m", "not slow", "-p",
         "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    # One section per test: its header names the test, its lines the fixtures it uses.
    sections = re.split(r"^-+ ?fixtures used by (\S+) ?-+$", done.stdout, flags=re.M)[1:]
    tests = dict(zip(sections[::2], sections[1::2], strict=True))
    assert len(tests) > 50
    heavy = {
        name for name, body in tests.items()
        if any(re.search(rf"^{f} -- ", body, re.M) for f in HEAVY_FIXTURES)
    }  # fmt: skip
    assert not heavy, f"in the fast tier but sweeping or building: {sorted(heavy)}"
    assert not [name for name in tests if "runs_alone" in name]  # each executes a notebook
