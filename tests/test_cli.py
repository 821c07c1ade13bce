"""The command line: names other tools rely on, and one-line errors with status 2."""

import json
import subprocess
import sys

import numpy as np
import pytest

from jacbench.cli import main
from jacbench.constants import TOLERANCE
from jacbench.problems import gbm


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jacbench", *args], capture_output=True, text=True, timeout=300
    )


def test_strategies_json_has_the_fields_tools_rely_on(capsys):
    assert main(["strategies", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert {"framework", "name", "mode", "problems"} <= set(records[0])
    assert ("torch", "pathwise") in {(r["framework"], r["name"]) for r in records}


def test_strategies_table_lists_every_strategy(capsys):
    from jacbench.strategies.registry import STRATEGIES

    assert main(["strategies"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.split()[:4] == ["framework", "name", "form", "mode"]
    # One line per strategy, in the registry's order, with its framework, name, form and mode.
    listed = [tuple(line.split()[:4]) for line in lines]
    assert listed == [(s.framework, s.name, s.form, s.mode) for s in STRATEGIES]
    assert {s.form for s in STRATEGIES} == {"array", "steps"}


def test_jacobian_writes_arrays_and_reports_error(tmp_path):
    out = tmp_path / "j.npz"
    args = ["jacobian", "--framework", "numpy", "--strategy", "analytic", "--paths", "300"]
    proc = _run(*args, "--steps", "10", "--dtype", "float64", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "numpy/analytic" in proc.stdout and "max relative error" in proc.stdout
    data = np.load(out)
    case = gbm.make_case(gbm.GBMParams(paths=300, steps=10, dtype="float64"))
    np.testing.assert_allclose(data["jacobian"], gbm.jacobian_closed_form(case), rtol=1e-12)
    np.testing.assert_allclose(data["terminal"], gbm.terminal_closed_form(case), rtol=1e-12)


@pytest.mark.parametrize("written", ["300", "3e2", "3_00", "3.0e2"])
def test_sizes_accept_every_notation(written, capsys):
    args = ["jacobian", "--framework", "numpy", "--strategy", "analytic", "--steps", "10"]
    assert main([*args, "--paths", written]) == 0
    assert "N=300 M=10" in capsys.readouterr().out


def test_jacobian_through_a_framework_matches_the_closed_form(tmp_path):
    out = tmp_path / "j.npz"
    proc = _run("jacobian", "--framework", "torch", "--strategy", "pathwise", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "torch/pathwise" in proc.stdout and "max relative error" in proc.stdout
    # The defaults: N = 1,000 paths, M = 52 steps, float32.
    case = gbm.make_case(gbm.GBMParams())
    jacobian = np.load(out)["jacobian"]
    assert jacobian.shape == (1000, 2) and jacobian.dtype == np.float32
    assert gbm.jacobian_error(case, jacobian) < TOLERANCE["float32"]


BAD = [
    (["--framework", "tf", "--strategy", "jvp"], "torch, tensorflow, jax, numpy"),
    (["--framework", "torch", "--strategy", "nope"], "functional-loop"),
    (["--framework", "torch", "--strategy", "jvp", "--paths", "0"], "--paths"),
    (["--framework", "torch", "--strategy", "jvp", "--steps", "-3"], "--steps"),
    (["--framework", "jax", "--strategy", "jvp", "--vol", "0"], "--vol"),
    (["--framework", "jax", "--strategy", "jvp", "--dtype", "float16"], "--dtype"),
    (["--framework", "torch", "--strategy", "question", "--dtype", "float64"], "float32 only"),
    (["--framework", "torch", "--strategy", "jvp", "--paths", "many"], "--paths"),
    (["--framework", "numpy", "--strategy", "analytic", "--problem", "heat"], "problem"),
    (["--strategy", "jvp"], "--framework"),
    (["--framework", "torch", "--strategy", "jvp", "--paths", "1.5e3.2"], "--paths"),
    (["--framework", "numpy", "--strategy", "analytic", "--output", "/no/such/j.npz"], "/no/such"),
    (
        ["--framework", "torch", "--strategy", "second:hvp-forward-over-reverse"],
        "second:hvp-forward-over-reverse",
    ),
    (
        ["--framework", "torch", "--strategy", "jacrev", "--problem", "moments", "--batch", "4"],
        "vmap-jacrev",
    ),
    (
        ["--framework", "numpy", "--strategy", "analytic", "--problem", "moments", "--batch", "-1"],
        "--batch",
    ),
]


@pytest.mark.parametrize("args,word", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_and_status_2(args, word, capsys):
    assert main(["jacobian", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err and "Traceback" not in err


def test_bad_input_through_the_console_exits_2():
    proc = _run("jacobian", "--framework", "torch", "--strategy", "jvp", "--vol", "-1")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["jacbench: error: --vol must be positive, got -1.0"]
