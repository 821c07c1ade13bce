"""Every registered strategy, in every dtype it supports, against the float64 closed form.

Parametrized over the registry: a strategy added there is tested here without a new test.
"""

import numpy as np
import pytest
from conftest import PATHS, TOLERANCE

from jacbench.errors import UnsupportedConfiguration
from jacbench.problems import gbm
from jacbench.strategies import registry

GBM = [s for s in registry.STRATEGIES if "gbm" in s.problems]
CASES = [(s, d) for s in GBM for d in s.dtypes]
UNSUPPORTED = [(s, d) for s in GBM for d in gbm.DTYPES if d not in s.dtypes]


def _id(pair) -> str:
    return f"{pair[0].key}-{pair[1]}"


@pytest.fixture(scope="module")
def case_of(cases, loop_cases):
    """The case a strategy is checked on in a dtype: a loop over the steps runs a short loop."""
    return lambda strategy, dtype: (loop_cases if strategy.form == "steps" else cases)[dtype]


@pytest.fixture(scope="module")
def results(case_of):
    """Each strategy run once per dtype, shared by the checks below."""
    cache = {}

    def get(strategy, dtype):
        if (strategy.key, dtype) not in cache:
            cache[strategy.key, dtype] = strategy.build(case_of(strategy, dtype))()
        return cache[strategy.key, dtype]

    return get


@pytest.mark.parametrize("pair", CASES, ids=[_id(p) for p in CASES])
def test_jacobian_matches_closed_form(pair, case_of, results):
    strategy, dtype = pair
    case = case_of(strategy, dtype)
    out = results(strategy, dtype)
    assert isinstance(out.jacobian, np.ndarray) and out.jacobian.shape == (PATHS, 2)
    assert out.terminal.shape == (PATHS,)
    assert np.all(np.isfinite(out.jacobian))
    if strategy.faithful or strategy.drawn:
        # The question's programs, and the loops drawing inside, draw their own normals: check
        # the derivative of the paths they simulated, recovered from their own terminal values.
        reference = gbm.jacobian_from_terminal(case.params, out.terminal)
    else:
        reference = gbm.jacobian_closed_form(case)
    assert gbm.relative_error(out.jacobian, reference) < TOLERANCE[dtype]


SAME_NORMALS = [p for p in CASES if not (p[0].faithful or p[0].drawn)]


@pytest.mark.parametrize("pair", SAME_NORMALS, ids=[_id(p) for p in SAME_NORMALS])
def test_terminal_values_agree_across_frameworks(pair, case_of, results):
    strategy, dtype = pair
    case = case_of(strategy, dtype)
    rtol = {"float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(
        results(strategy, dtype).terminal, gbm.terminal_closed_form(case), rtol=rtol
    )


@pytest.mark.parametrize("pair", UNSUPPORTED, ids=[_id(p) for p in UNSUPPORTED])
def test_unsupported_dtype_says_why(pair, cases):
    strategy, dtype = pair
    with pytest.raises(UnsupportedConfiguration, match=dtype):
        strategy.build(cases[dtype])


# Every simulation over the case's normals: each strategy's baseline, and the loop constructs
# measured as simulations only (those drawing their own are strategies.test_steps's).
EXECUTIONS = sorted(
    {(s.framework, s.execution) for s in GBM if not s.drawn}
    | {(fw, name) for fw in ("torch", "tensorflow", "jax")
       for name in registry.simulations(fw) if name.startswith("steps-")}
)  # fmt: skip


@pytest.mark.parametrize("framework,execution", EXECUTIONS)
def test_simulation_baseline_matches_reference(framework, execution, cases, loop_cases):
    for dtype, rtol in (("float32", 1e-5), ("float64", 1e-12)):
        case = (loop_cases if execution.startswith("steps-") else cases)[dtype]
        terminal = registry.simulation(framework, execution)(case)()
        assert terminal.dtype == np.dtype(dtype)
        np.testing.assert_allclose(terminal, gbm.terminal_closed_form(case), rtol=rtol)


def test_question_programs_simulate_what_they_say(results, cases):
    """The torch program is GBM; the TensorFlow one, lacking the cumulative sum, is not."""
    p = cases["float32"].params
    torch_x = gbm.implied_brownian(
        p, results(registry.get("torch", "question"), "float32").terminal
    )
    tf_x = gbm.implied_brownian(
        p, results(registry.get("tensorflow", "question"), "float32").terminal
    )
    # W_T has variance T; the TensorFlow program's terminal driver is one increment, T / M.
    assert torch_x.var() == pytest.approx(p.maturity, rel=0.15)
    assert tf_x.var() == pytest.approx(p.maturity / p.steps, rel=0.15)
