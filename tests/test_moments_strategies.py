"""Every strategy registered for the moments problem against its closed-form Jacobian."""

import numpy as np
import pytest

from jacbench.cli import main
from jacbench.errors import UnsupportedConfiguration
from jacbench.problems import gbm, moments
from jacbench.strategies import registry

TOLERANCE = {"float32": 1e-5, "float64": 1e-12}
MOMENTS = [s for s in registry.STRATEGIES if "moments" in s.problems]
CASES = [(s, d) for s in MOMENTS for d in s.dtypes]


@pytest.fixture(scope="module")
def cases():
    return {
        d: moments.make_case(moments.MomentsParams(inputs=1000, dtype=d)) for d in moments.DTYPES
    }


@pytest.mark.parametrize("pair", CASES, ids=[f"{s.key}-{d}" for s, d in CASES])
def test_wide_jacobian_matches_closed_form(pair, cases):
    strategy, dtype = pair
    case = cases[dtype]
    out = strategy.build(case)()
    assert out.jacobian.shape == (3, 1000)
    np.testing.assert_allclose(out.terminal, moments.evaluate(case.x.astype(np.float64)), rtol=1e-5)
    error = gbm.relative_error(out.jacobian.T, moments.jacobian_closed_form(case.x).T)
    assert error < TOLERANCE[dtype]


def test_the_question_solutions_are_registered():
    names = {s.name for s in registry.by_framework("torch", "moments")}
    assert {"grad-loop", "grad-loop-create-graph", "batched-backward", "functional-loop",
            "functional-vectorized", "jacrev", "jacfwd"} <= names  # fmt: skip
    assert {"tape-jacobian-pfor", "batch-jacobian"} <= {
        s.name for s in registry.by_framework("tensorflow", "moments")
    }
    assert {"jacrev", "jacfwd"} <= {s.name for s in registry.by_framework("jax", "moments")}


def test_gbm_only_strategy_refuses_the_moments_problem(cases):
    with pytest.raises(UnsupportedConfiguration, match="does not support the moments problem"):
        registry.get("torch", "pathwise").build(cases["float32"])


def test_cli_writes_the_wide_jacobian(tmp_path, capsys):
    out = tmp_path / "m.npz"
    args = ["jacobian", "--problem", "moments", "--framework", "numpy", "--strategy", "analytic"]
    assert main([*args, "--inputs", "500", "--dtype", "float64", "--output", str(out)]) == 0
    data = np.load(out)
    assert data["jacobian"].shape == (3, 500) and data["x"].shape == (500,)
    np.testing.assert_allclose(data["jacobian"], moments.jacobian_closed_form(data["x"]))
    assert "max relative error" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,word",
    [
        (["--framework", "torch", "--strategy", "pathwise"], "grad-loop-create-graph"),
        (["--framework", "numpy", "--strategy", "analytic", "--inputs", "0"], "--inputs"),
    ],
)
def test_cli_moments_bad_input_exits_2(args, word, capsys):
    assert main(["jacobian", "--problem", "moments", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err


def test_records_list_their_problems(capsys):
    import json

    assert main(["strategies", "--json"]) == 0
    records = {(r["framework"], r["name"]): r for r in json.loads(capsys.readouterr().out)}
    assert records[("torch", "jacrev")]["problems"] == ["gbm", "moments"]
    assert records[("torch", "pathwise")]["problems"] == ["gbm"]
    assert records[("tensorflow", "batch-jacobian")]["problems"] == ["moments", "moments-batch"]


BATCHED = [s for s in registry.STRATEGIES if "moments-batch" in s.problems]


@pytest.mark.parametrize("strategy", BATCHED, ids=lambda s: s.key)
@pytest.mark.parametrize("dtype", moments.DTYPES)
def test_per_sample_jacobians_match_closed_form(strategy, dtype):
    case = moments.make_case(moments.MomentsParams(inputs=200, batch=7, dtype=dtype))
    assert case.problem == "moments-batch"
    out = strategy.build(case)()
    assert out.jacobian.shape == (7, 3, 200)
    np.testing.assert_allclose(out.terminal, moments.evaluate(case.x.astype(np.float64)), rtol=1e-5)
    error = moments.relative_error(out.jacobian, moments.jacobian_closed_form(case.x))
    assert error < TOLERANCE[dtype]


def test_the_per_sample_answer_is_registered_in_each_framework():
    for fw in ("torch", "tensorflow", "jax", "numpy"):
        assert registry.by_framework(fw, "moments-batch"), fw


def test_a_single_x_strategy_refuses_a_batch():
    case = moments.make_case(moments.MomentsParams(inputs=10, batch=2))
    with pytest.raises(
        UnsupportedConfiguration,
        match="does not support the moments-batch problem; choose one of: vmap-jacrev",
    ):
        registry.get("torch", "grad-loop").build(case)
