"""The terminal-only forms: each framework's default vectorized reverse mode on S_T computed from
W_T, against the closed form and against the same call on the path-keeping form, at the same
normals, in both precisions; and what their memory models say at the question's N."""

import numpy as np
import pytest
from conftest import TOLERANCE

from jacbench.problems import gbm
from jacbench.strategies import registry

# (framework, terminal-only form, the path-keeping strategy it is the terminal form of)
PAIRS = [
    ("torch", "jacrev-terminal", "jacrev"),
    ("tensorflow", "tape-jacobian-terminal", "tape-jacobian-pfor"),
    ("jax", "jacrev-terminal", "jacrev"),
]
# S_T from a sum over the steps against the last row of a cumulative sum: rounding apart.
TERMINAL_RTOL = {"float32": 1e-6, "float64": 1e-13}
CASES = [(*pair, dtype) for pair in PAIRS for dtype in gbm.DTYPES]


@pytest.fixture(scope="module")
def small_cases():
    return {dtype: gbm.make_case(gbm.GBMParams(paths=100, dtype=dtype)) for dtype in gbm.DTYPES}


@pytest.mark.parametrize("framework,terminal,path,dtype", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in CASES])  # fmt: skip
def test_the_terminal_form_matches_the_closed_form_and_the_path_form(
    framework, terminal, path, dtype, small_cases
):
    case = small_cases[dtype]
    strategy = registry.get(framework, terminal)
    assert dtype in strategy.dtypes
    out = strategy.build(case)()
    reference = registry.get(framework, path).build(case)()
    assert out.jacobian.shape == (100, 2) and out.terminal.shape == (100,)
    assert out.jacobian.dtype == out.terminal.dtype == np.dtype(dtype)
    assert gbm.relative_error(out.jacobian, gbm.jacobian_closed_form(case)) < TOLERANCE[dtype]
    assert gbm.relative_error(out.jacobian, reference.jacobian) < TOLERANCE[dtype]
    np.testing.assert_allclose(out.terminal, reference.terminal, rtol=TERMINAL_RTOL[dtype])


@pytest.mark.parametrize("framework,terminal,path", PAIRS)
def test_the_terminal_form_is_the_path_forms_call_shown_for_its_mechanism(
    framework, terminal, path
):
    s, twin = registry.get(framework, terminal), registry.get(framework, path)
    assert (s.mode, s.batching, s.execution) == (twin.mode, twin.batching, twin.execution)
    assert not s.candidate and not s.vectorizes and not s.variant_of and not s.answer


@pytest.mark.parametrize("framework,terminal,path", PAIRS)
def test_the_terminal_form_holds_n_by_n_where_the_path_form_holds_n_by_m_by_n(
    framework, terminal, path
):
    """At the question's N = 10,000 in float32 one N x N array is 0.4 GB: the terminal forms'
    models hold a few of them, the path forms' about 3 batches of N path arrays (64 GiB)."""
    n, m = 10_000, 52
    held = registry.get(framework, terminal).memory.working(n, m, "float32")
    path_held = registry.get(framework, path).memory.working(n, m, "float32")
    assert held < 5 * n * n * 4 < 2 * 2**30
    assert path_held > 40 * 2**30
