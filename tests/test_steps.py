"""The simulation written over the time steps: the Asian payoff against its closed form and
finite differences, the loops that draw their own normals, the machine's limit, and forward
mode's memory over the steps (O(N), not O(NM)).

Every step-form strategy of the gbm problem is also checked against the closed form by
test_strategies (parametrized over the registry); this module adds what that cannot see.
"""

import numpy as np
import pytest
from conftest import LOOP_STEPS, PATHS, STEPS, TOLERANCE

from jacbench.constants import GIB
from jacbench.errors import UsageError
from jacbench.measure import runner
from jacbench.measure.case import Case
from jacbench.measure.targets import parse
from jacbench.problems import asian, gbm, make_case
from jacbench.strategies import registry

ASIAN = [(s, d) for s in registry.STRATEGIES if "asian" in s.problems for d in s.dtypes]


@pytest.fixture(scope="module")
def asian_cases():
    """One per dtype, LOOP_STEPS steps (as conftest's loop_cases)."""
    return {d: make_case("asian", {"paths": PATHS, "steps": LOOP_STEPS, "dtype": d})
            for d in gbm.DTYPES}  # fmt: skip


@pytest.mark.parametrize("pair", ASIAN, ids=[f"{s.key}-{d}" for s, d in ASIAN])
def test_asian_payoff_and_jacobian_match_the_closed_form(pair, asian_cases):
    strategy, dtype = pair
    case = asian_cases[dtype]
    out = strategy.build(case)()
    payoff, d_average = asian.closed_form(case)
    assert out.jacobian.shape == (PATHS, 2) and out.terminal.shape == (PATHS,)
    # About half the paths end in the money at the money: the check is not vacuous.
    assert 0.3 < np.mean(out.terminal > 0) < 0.7
    assert strategy.error(case, out) < TOLERANCE[dtype]
    np.testing.assert_allclose(out.terminal, payoff, rtol=0, atol=1e-4 * payoff.max())
    zero = out.terminal == 0
    assert np.all(out.jacobian[zero] == 0)
    np.testing.assert_allclose(out.jacobian[~zero], d_average[~zero],
                               rtol=0, atol=TOLERANCE[dtype] * np.abs(d_average).max())  # fmt: skip


def test_the_asian_closed_form_is_the_derivative_of_its_payoff():
    """Central differences of the float64 payoff on the same normals, bumping spot and vol (the
    strike stays the base case's number), agree with the closed form on every path away from
    the kink at A = K."""
    case = asian.make_case(gbm.GBMParams(paths=400, steps=12, dtype="float64"))
    p, t = case.params, case.t
    w = gbm.brownian(t, case.normals)[1:]

    def average(spot, vol):
        return (spot * np.exp((p.drift - vol**2 / 2) * t[1:, None] + vol * w)).mean(axis=0)

    def payoff(spot, vol):
        return np.maximum(average(spot, vol) - case.strike, 0)

    h = 1e-6
    fd = np.stack(
        [
            (payoff(p.spot + h, p.vol) - payoff(p.spot - h, p.vol)) / (2 * h),
            (payoff(p.spot, p.vol + h) - payoff(p.spot, p.vol - h)) / (2 * h),
        ],
        axis=1,
    )
    value, d_average = asian.closed_form(case)
    np.testing.assert_allclose(value, payoff(p.spot, p.vol), rtol=1e-12)
    away = np.abs(average(p.spot, p.vol) - case.strike) > 1e-3
    assert away.sum() > 0.9 * p.paths and 0.3 < np.mean(value > 0) < 0.7
    jac = np.where((value > 0)[:, None], d_average, 0.0)
    np.testing.assert_allclose(fd[away], jac[away], rtol=1e-5, atol=1e-6)


def test_the_asian_check_allows_a_subgradient_only_at_the_kink(monkeypatch):
    """A path whose average lies within KINK of the strike may carry anything between zero and
    its in-the-money derivative (JAX's maximum gives half of it at a tie); the same path with
    twice its derivative fails, and so does a path far from the kink given the wrong side."""
    case = asian.make_case(gbm.GBMParams(paths=2000, steps=12))
    gap, d_average = asian._gap(case)
    payoff = np.maximum(gap, 0.0)
    exact = np.where((gap > 0)[:, None], d_average, 0.0)
    assert asian.error(case, exact, payoff) < 1e-12
    k = int(np.argmin(np.abs(gap)))
    monkeypatch.setitem(asian.KINK, "float32", 1.01 * abs(gap[k]) / case.strike)
    half, double, flipped = exact.copy(), exact.copy(), exact.copy()
    half[k] = 0.5 * d_average[k]
    double[k] = 2.0 * d_average[k]
    far = int(np.argmax(gap))
    flipped[far] = 0.0
    assert asian.error(case, half, payoff) < 1e-12
    assert asian.error(case, double, payoff) > 0.1
    assert asian.error(case, flipped, payoff) > 0.5


DRAWN = [s for s in registry.STRATEGIES if s.drawn]


@pytest.mark.parametrize("strategy", DRAWN, ids=[s.key for s in DRAWN])
def test_a_drawn_loop_and_its_simulations_read_the_same_normals(strategy):
    """The Jacobian's S_T, its drawn simulation's, and the draws alone summed over the steps
    agree: the three draw the same numbers, from the seed, the block and the step alone. The
    sum's spread is that of M standard normals."""
    params = {"paths": 3000, "steps": STEPS}
    jac = parse(strategy.framework, strategy.name)
    case = jac.make_case("gbm", params)
    assert case.streamed  # the case holds no normals: the loop draws its own
    out = jac.build(case)()
    sim = parse(strategy.framework, f"simulation:{strategy.execution}").build(case)()
    draws_name = "simulation:draws-" + strategy.execution.removeprefix("drawn-")
    total = parse(strategy.framework, draws_name).build(case)()
    np.testing.assert_allclose(sim, out.terminal, rtol=1e-5)
    p = case.params
    dt = p.maturity / p.steps
    expected = p.spot * np.exp((p.drift - p.vol**2 / 2) * p.maturity + p.vol * np.sqrt(dt) * total)
    np.testing.assert_allclose(out.terminal, expected, rtol=1e-4)
    assert np.var(total) == pytest.approx(p.steps, rel=0.1)
    assert abs(np.mean(total)) < 4 * np.sqrt(p.steps / params["paths"])
    # Another seed draws other numbers.
    other = jac.build(jac.make_case("gbm", {**params, "seed": 99}))()
    assert not np.allclose(other.terminal, out.terminal)


# --- the machine's limit -----------------------------------------------------------------

LIMITS = [(fw, n) for fw in ("numpy", "torch", "tensorflow", "jax") for n in ("read", "dispatch")
          if not (fw == "numpy" and n == "dispatch")]  # fmt: skip


@pytest.mark.parametrize("problem", ["gbm", "moments"])
@pytest.mark.parametrize("framework,name", LIMITS)
def test_the_limit_reads_the_inputs_once(framework, name, problem):
    target = parse(framework, f"limit:{name}")
    params = {"paths": PATHS} if problem == "gbm" else {"inputs": 5000}
    case = target.make_case(problem, params)
    result = np.asarray(target.build(case)())
    if name == "dispatch":  # one element of the inputs: nothing computed
        first = case.normals[0, 0] if problem == "gbm" else case.x[0]
        assert result.shape == () and result == first
        assert target.error(case, result) is None
        return
    if problem == "gbm":
        np.testing.assert_allclose(result, case.normals.astype(np.float64).sum(0), atol=1e-4)
    else:
        assert result.shape == (3, 5000) and np.all(result == case.x[None, :])
    assert target.error(case, result) < TOLERANCE["float32"]


def test_the_limit_names_its_choices():
    with pytest.raises(UsageError, match="limit:read"):
        parse("numpy", "limit:dispatch")
    with pytest.raises(UsageError, match="limit:read, limit:dispatch"):
        parse("jax", "limit:nope")
    assert parse("jax", "limit:read").unsupported("asian", "float32") is not None


# --- forward mode over the steps holds O(N) -----------------------------------------------

N_MEMORY = 1_000_000  # one path array: (M+1) N float32 = 212 MB


@pytest.mark.parametrize(
    "framework,steps,array,problem,arrays",
    [("jax", "steps-carry", "jvp", "gbm", 16),
     ("tensorflow", "steps-carry-xla", "forward-accumulator-xla", "gbm", 16),
     # Inductor's default fusion limit wrote the Asian payoff's running mean as ~60 arrays of N:
     # at this size 40 MB, so the bound here is the tighter one
     ("torch", "steps-compiled-carry", "compiled-jvp", "asian", 8)],
)  # fmt: skip
def test_forward_mode_over_the_steps_holds_no_path_array(framework, steps, array, problem, arrays):
    """Measured in capped workers at N = 10^6: a warm call of forward mode carried along the
    steps needs a few arrays of N values beyond what the worker held before it, far less than
    one path array; the same forward mode of the whole-array form needs more than one. (The
    first call also holds what compiling took, and JAX its copy of the normals: the warm
    calls' own peak is what a call needs. TensorFlow's allocator keeps what its first call
    freed and its warm calls reuse it, so their peak over the first call's is zero whatever they
    hold: there the peak over what the inputs took is the measure.) The resident peak also
    counts library pages a warm call touches for the first time, which only add: JAX's warm
    call measured 12 MB here alone and 32 MB once under a loaded test run, so a call over its
    bound is measured once more in a new worker and the smaller peak kept."""
    path_array, vector = (STEPS + 1) * N_MEMORY * 4, N_MEMORY * 4
    over = "warm_peak_over_inputs" if framework == "tensorflow" else "warm_peak_over_baseline"

    def measured(name):
        case = Case(framework=framework, strategy=name, problem=problem, paths=N_MEMORY, repeats=3,
                    warm_budget_s=0.2, threads=1, mem_cap=4 * GIB, timeout=300)  # fmt: skip
        row = runner.measure_one(case)
        assert row["status"] == "ok", row.get("message")
        return row[over]

    call = {steps: measured(steps), array: measured(array)}
    if call[steps] >= arrays * vector:
        call[steps] = min(call[steps], measured(steps))
    assert call[steps] < arrays * vector, call  # the outputs alone are three such arrays
    assert call[array] > path_array, call
