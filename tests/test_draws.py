"""The simulations that measure drawing the random numbers (strategies.draws): the blocked
draws against numpy's own stream, TensorFlow's drawing simulations against the GBM's mean, the
names a framework accepts, and each one measured by `jacbench measure` in a worker."""

import json

import numpy as np
import pytest

from jacbench.cli import main
from jacbench.constants import FRAMEWORKS
from jacbench.errors import UsageError
from jacbench.measure.targets import SimulationTarget, parse
from jacbench.problems import gbm, make_case
from jacbench.strategies import blocked, catalog, draws, registry

BLOCKED_FRAMEWORKS = ("torch", "tensorflow", "jax")
TF_DRAWS = tuple(draws.TENSORFLOW)
# Each target measured by `jacbench measure`; a TensorFlow worker takes 10 to 20 s to start.
NEW = [
    pytest.param(fw, name, id=f"{fw}-{name}",
                 marks=[pytest.mark.slow] if fw == "tensorflow" else [])
    for fw, name in [(fw, catalog.BLOCKED_DRAWS) for fw in BLOCKED_FRAMEWORKS]
    + [("tensorflow", name) for name in TF_DRAWS]
]  # fmt: skip


def _streamed(paths: int, dtype: str = "float32", **kw) -> gbm.GBMCase:
    return make_case("gbm", {"paths": paths, "dtype": dtype, **kw}, streamed=True)


@pytest.mark.parametrize("dtype", gbm.DTYPES)
@pytest.mark.parametrize("block", [250, 300])  # N = 1,000: 4 blocks, or 3 and a ragged 100
def test_blocked_draws_are_the_streams_last_normals(dtype, block):
    case = _streamed(1000, dtype)
    out = draws.build_blocked_draws(case, block_size=block)()
    expected = gbm.stream_normals(case.params, 0, 1000)[-1]
    assert out.dtype == case.dtype and out.shape == (1000,)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("framework", BLOCKED_FRAMEWORKS)
def test_blocked_draws_read_the_blocks_of_the_blocked_simulations(framework, monkeypatch):
    """Through the registry: the model's block size, every block drawn into one buffer."""
    case = SimulationTarget(framework, catalog.BLOCKED_DRAWS).make_case("gbm", {
        "paths": 1000, "chunk_size": 1})  # fmt: skip
    assert case.streamed
    size = blocked.block_size(case)
    calls = []
    draw = gbm.GBMCase.block_normals

    def spy(self, start, stop, out=None):
        calls.append((start, stop, id(out), out.shape))
        return draw(self, start, stop, out=out)

    monkeypatch.setattr(gbm.GBMCase, "block_normals", spy)
    out = registry.simulation(framework, catalog.BLOCKED_DRAWS)(case)()
    assert 1 < size < 1000 and [c[:2] for c in calls] == blocked.blocks(1000, size)
    assert len({c[2] for c in calls}) == 1 and {c[3] for c in calls} == {(52, size)}
    np.testing.assert_array_equal(out, gbm.stream_normals(case.params, 0, 1000)[-1])


@pytest.fixture(scope="module")
def tf_terminals():
    """S_T of each TensorFlow drawing simulation at N = 20,000, two calls each."""
    params = {"paths": 20_000}
    out = {}
    for name in TF_DRAWS:
        case = SimulationTarget("tensorflow", name).make_case("gbm", params)
        call = registry.simulation("tensorflow", name)(case)
        out[name] = (case, call(), call())
    return out


@pytest.mark.parametrize("name", TF_DRAWS)
def test_tensorflow_draws_simulate_the_gbm(name, tf_terminals):
    case, s, again = tf_terminals[name]
    p = case.params
    assert case.streamed  # the case holds no normals: the function draws its own
    assert s.shape == (p.paths,) and s.dtype == np.float32 and np.isfinite(s).all()
    np.testing.assert_array_equal(s, again)  # a stateless draw: every call the same
    # E[S_T] = S0 exp(drift T). Four standard errors (0.6 at N = 20,000) exclude a simulation
    # without drift (100) or with the wrong Ito term (105.1).
    mean = p.spot * np.exp(p.drift * p.maturity)
    sd = mean * np.sqrt(np.exp(p.vol**2 * p.maturity) - 1)
    assert abs(s.mean() - mean) < 4 * sd / np.sqrt(p.paths)
    assert abs(np.log(s).std() - p.vol * np.sqrt(p.maturity)) < 0.01


def test_xla_draws_the_same_numbers_whatever_the_algorithm_named(tf_terminals):
    """Philox under XLA is what auto_select picks there (only faster); tf.function's differ."""
    xla = tf_terminals["xla-draws"][1]
    np.testing.assert_array_equal(tf_terminals["xla-philox-draws"][1], xla)
    assert not np.allclose(tf_terminals["function-draws"][1], xla)


def test_the_drawing_simulations_are_named_beside_the_execution_modes():
    for fw in FRAMEWORKS:
        modes = registry.executions(fw)
        assert registry.simulations(fw)[: len(modes)] == modes
        assert not set(modes) & {catalog.BLOCKED_DRAWS, *TF_DRAWS}
    assert registry.simulations("numpy") == ["numpy"]
    assert registry.simulations("jax") == ["blocked-jit", "drawn-jit", "jit", "steps-jit",
                                           "jit-path", "steps-jit-fori", "blocked-draws",
                                           "draws-jit"]  # fmt: skip
    assert (
        parse("jax", "simulation:drawn-jit").streams
        and parse("jax", "simulation:draws-jit").streams
    )
    assert not parse("jax", "simulation:steps-jit").streams
    assert parse("tensorflow", "simulation:xla-draws").streams
    assert not parse("tensorflow", "simulation:xla").streams


@pytest.mark.parametrize(
    "framework,text",
    [("tensorflow", "simulation:xla-drawz"), ("numpy", "simulation:blocked-draws"),
     ("torch", "simulation:xla-draws")],
)  # fmt: skip
def test_an_unknown_simulation_names_the_valid_ones(framework, text):
    with pytest.raises(UsageError, match="choose one of: simulation:") as e:
        parse(framework, text)
    for name in registry.simulations(framework):
        assert f"simulation:{name}" in str(e.value)


@pytest.mark.parametrize("framework,name", NEW)
def test_measure_runs_each_drawing_simulation_in_a_worker(framework, name, capsys):
    strategy = f"simulation:{name}"
    args = ["measure", "--framework", framework, "--strategy", strategy, "--paths", "2000"]
    assert main([*args, "--steps", "8", "--repeats", "1", "--timeout", "120"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (row["strategy"], row["target"], row["status"]) == (strategy, "simulation", "ok")
    assert row["warm_n"] == 1 and row.get("ratio_median") is None
