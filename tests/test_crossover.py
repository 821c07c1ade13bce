"""The tall-to-wide crossover: both modes correct at every shape, measured through the harness
like every other case, and the crossover rule."""

import re

import numpy as np
import pytest

from jacbench.cli import main
from jacbench.errors import UsageError
from jacbench.measure import crossover
from jacbench.measure.targets import MODES
from jacbench.problems import shapes
from jacbench.strategies import shapes as shape_strategies


def test_shapes_span_tall_to_wide_with_fixed_product():
    s = shapes.shapes(1024, steps=6)
    assert s[0] == (1024, 1) and s[-1] == (1, 1024)
    assert all(m * n == 1024 for m, n in s)
    with pytest.raises(UsageError, match="power of two, got 1000; the nearest is 1024"):
        shapes.shapes(1000)
    with pytest.raises(UsageError, match="got 10000; the nearest is 8192"):
        shapes.shapes(10_000)
    assert shapes.nearest_power_of_two(3, 2, 8) == 4 and shapes.nearest_power_of_two(100, 2, 8) == 8
    assert shapes.nearest_power_of_two(3000, 2**8, 2**11) == 2**11


def _finite_differences(w: np.ndarray, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """The Jacobian of tanh(W x) by central differences in float64, column by column."""
    w64, x64 = w.astype(np.float64), x.astype(np.float64)
    columns = []
    for i in range(x64.size):
        e = np.zeros_like(x64)
        e[i] = h
        columns.append((np.tanh(w64 @ (x64 + e)) - np.tanh(w64 @ (x64 - e))) / (2 * h))
    return np.stack(columns, axis=1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_closed_form_matches_finite_differences(dtype):
    """The crossover's reference, diag(1 - tanh(W x)^2) W, against central differences of
    tanh(W x) (error O(h^2), about 1e-10 here) at every shape from tall to wide."""
    for m, n in shapes.shapes(64, steps=4):
        case = shapes.make_case(shapes.ShapesParams(outputs=m, inputs=n, dtype=dtype))
        closed = shapes.jacobian_closed_form(case.w, case.x)
        assert closed.shape == (m, n)
        np.testing.assert_allclose(closed, _finite_differences(case.w, case.x), atol=1e-8)
    # The check can fail: the closed form without tanh's derivative is W, off by far more.
    assert np.max(np.abs(case.w - _finite_differences(case.w, case.x))) > 1e-3


@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax"])
@pytest.mark.parametrize("mode", MODES)
def test_both_modes_match_the_closed_form(framework, mode):
    for m, n in shapes.shapes(64, steps=3):
        case = shapes.make_case(shapes.ShapesParams(outputs=m, inputs=n, dtype="float64"))
        j = shape_strategies.build(framework, mode, case)()
        assert j.shape == (m, n)
        reference = shapes.jacobian_closed_form(case.w, case.x)
        np.testing.assert_allclose(j, reference, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_numpy_s_modes_match_finite_differences_in_the_case_s_dtype(mode):
    """numpy's crossover rows time the closed form itself: checked here against finite
    differences, and returned in the case's dtype as the other frameworks' are."""
    for dtype in ("float32", "float64"):
        for m, n in shapes.shapes(64, steps=3):
            case = shapes.make_case(shapes.ShapesParams(outputs=m, inputs=n, dtype=dtype))
            j = shape_strategies.build("numpy", mode, case)()
            assert j.shape == (m, n) and j.dtype == np.dtype(dtype)
            reference = _finite_differences(case.w, case.x)
            np.testing.assert_allclose(j, reference, atol=1e-8 if dtype == "float64" else 1e-6)


def test_crossover_is_the_first_shape_where_reverse_wins():
    def rows(times, status="ok"):
        out = []
        for (m, n), (fwd, rev) in times.items():
            for mode, t in (("forward", fwd), ("reverse", rev)):
                out.append({"outputs": m, "inputs": n, "mode": mode, "warm_median_s": t,
                            "status": status})  # fmt: skip
        return out

    times = {(64, 1): (1.0, 9.0), (8, 8): (1.0, 2.0), (1, 64): (5.0, 1.0)}
    assert crossover.crossover(rows(times)) == 1 / 64
    assert crossover.crossover(rows({(64, 1): (1.0, 2.0)})) is None
    # A tall shape where reverse wins by noise is not the crossover: reverse must keep winning.
    noisy = {(64, 1): (1.0, 0.5), (8, 8): (1.0, 2.0), (1, 64): (5.0, 1.0)}
    assert crossover.crossover(rows(noisy)) == 1 / 64
    # Shapes that did not finish say nothing.
    assert crossover.crossover(rows(times, status="memory-cap")) is None


def test_rows_carry_the_sweep_fields(tmp_path):
    out = tmp_path / "crossover.csv"
    rows = crossover.measure(["numpy"], total=16, steps=2, repeats=2, warm_budget_s=0.2, out=out)
    assert {(r["outputs"], r["inputs"], r["mode"]) for r in rows} == {
        (16, 1, "forward"), (16, 1, "reverse"), (1, 16, "forward"), (1, 16, "reverse")
    }  # fmt: skip
    for r in rows:
        assert r["status"] == "ok" and r["target"] == "crossover", r["message"]
        assert r["mem_cap"] > 0 and r["timeout"] > 0 and r["warm_n"] >= 1
        assert r["warm_min_s"] <= r["warm_median_s"] <= r["warm_max_s"]
        assert r["max_rel_error"] < 1e-6
    # Measured once: a second run reuses every row.
    before = out.read_text()
    crossover.measure(["numpy"], total=16, steps=2, repeats=2, warm_budget_s=0.2, out=out)
    assert out.read_text() == before


def test_a_case_past_its_cap_is_a_memory_cap_row(tmp_path, capsys):
    # Importing torch alone holds about 220 MiB: a 100 MB cap stops every case.
    out = tmp_path / "capped.csv"
    args = ["crossover", "--frameworks", "torch", "--total", "4", "--steps", "2",
            "--repeats", "1", "--mem-cap", "100MB", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    rows = crossover.read(out)
    assert len(rows) == 4 and {r["status"] for r in rows} == {"memory-cap"}
    assert all("above the cap of 0.09 GiB" in r["message"] for r in rows)
    assert "torch: no verdict, no case finished (memory-cap)" in text


def test_command_reports_a_verdict(capsys):
    args = ["crossover", "--frameworks", "numpy", "--total", "64", "--steps", "3", "--repeats", "1"]
    assert main(args) == 0
    # Which mode wins is a timing, not asserted: one verdict line for the framework is.
    out = capsys.readouterr().out
    assert re.search(r"^numpy: (reverse mode beats forward mode from m / n = |forward mode is)",
                     out, re.M)  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [["--total", "1000"], ["--frameworks", "mxnet"], ["--total", "2^10"], ["--steps", "1"],
     ["--mem-cap", "lots"]],
)  # fmt: skip
def test_bad_input_exits_2(args, capsys):
    assert main(["crossover", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]


def test_a_shorter_side_bounds_the_extremes_of_a_large_total():
    s = shapes.shapes(2**16, steps=9, side=2**12)
    assert s[0] == (2**12, 2**4) and s[-1] == (2**4, 2**12) and (2**8, 2**8) in s
    assert all(m * n == 2**16 and max(m, n) <= 2**12 for m, n in s)
    # Symmetric about the square shape: the same aspects on the tall and the wide side.
    assert [m / n for m, n in s] == [n / m for m, n in reversed(s)]
    # The default side keeps the full range of smaller totals: one column to one row.
    assert shapes.shapes(1024, steps=6) == shapes.shapes(1024, steps=6, side=1024)
    for total, side in ((2**16, 2**7), (2**16, 3000), (2**16, 2**16), (2**10, 2**11)):
        with pytest.raises(UsageError, match="longest side") as refused:
            shapes.shapes(total, side=side)
        suggested = int(str(refused.value).rsplit(" ", 1)[-1])
        assert shapes.shapes(total, side=suggested)  # the suggestion is accepted


def test_a_profile_crossover_side_reaches_the_cases():
    todo = crossover.cases(["numpy"], total=2**10, steps=3, repeats=1, side=2**6)
    assert {(c.outputs, c.inputs) for c in todo} == {(64, 16), (32, 32), (16, 64)}


@pytest.mark.parametrize("side", ["100", "16"])
def test_bad_side_exits_2(side, capsys):
    assert main(["crossover", "--frameworks", "numpy", "--total", "1024", "--side", side]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "longest side" in err[0]


def test_a_kept_smaller_crossover_is_left_out():
    rows = [{"outputs": m, "inputs": n} for m, n in ((64, 16), (16, 64), (32, 1), (1, 32))]
    assert crossover.largest_total(rows) == rows[:2]
    assert crossover.largest_total([]) == []
