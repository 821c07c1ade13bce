"""The tall-to-wide crossover: both modes correct at every shape, and the crossover rule."""

import re

import numpy as np
import pytest

from jacbench import crossover
from jacbench.cli import main
from jacbench.problems import shapes


def test_shapes_span_tall_to_wide_with_fixed_product():
    s = shapes.shapes(1024, steps=6)
    assert s[0] == (1024, 1) and s[-1] == (1, 1024)
    assert all(m * n == 1024 for m, n in s)
    with pytest.raises(ValueError):
        shapes.shapes(1000)


@pytest.mark.parametrize("framework", ["numpy", "torch", "tensorflow", "jax"])
@pytest.mark.parametrize("mode", crossover.MODES)
def test_both_modes_match_the_closed_form(framework, mode):
    for m, n in shapes.shapes(64, steps=3):
        w, x = shapes.make(n, m, dtype="float64")
        j = crossover.builder(framework, w, x, mode)()
        assert j.shape == (m, n)
        np.testing.assert_allclose(j, shapes.jacobian_closed_form(w, x), rtol=1e-10, atol=1e-12)


def test_crossover_is_the_first_shape_where_reverse_wins():
    def rows(times):
        out = []
        for (m, n), (fwd, rev) in times.items():
            for mode, t in (("forward", fwd), ("reverse", rev)):
                out.append({"outputs": m, "inputs": n, "mode": mode, "warm_median_s": t})
        return out

    times = {(64, 1): (1.0, 9.0), (8, 8): (1.0, 2.0), (1, 64): (5.0, 1.0)}
    assert crossover.crossover(rows(times)) == 1 / 64
    assert crossover.crossover(rows({(64, 1): (1.0, 2.0)})) is None
    # A tall shape where reverse wins by noise is not the crossover: reverse must keep winning.
    noisy = {(64, 1): (1.0, 0.5), (8, 8): (1.0, 2.0), (1, 64): (5.0, 1.0)}
    assert crossover.crossover(rows(noisy)) == 1 / 64


def test_command_runs_a_framework_in_its_own_process(capsys):
    args = ["crossover", "--frameworks", "numpy", "--total", "64", "--steps", "3", "--repeats", "1"]
    assert main(args) == 0
    # Which mode wins is a timing, not asserted: one verdict line for the framework is.
    out = capsys.readouterr().out
    assert re.search(r"^numpy: (reverse mode beats forward mode from m / n = |forward mode is)",
                     out, re.M)  # fmt: skip


@pytest.mark.parametrize("args", [["--total", "1000"], ["--frameworks", "mxnet"]])
def test_bad_input_exits_2(args, capsys):
    assert main(["crossover", *args]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
