"""The device setting: PyTorch and JAX strategies through the device's code path on the CPU,
TensorFlow and numpy refusing a GPU, and the helpers that place, wait for and fetch results."""

from typing import NamedTuple

import numpy as np
import pytest
from conftest import LOOP_STEPS

from jacbench.cli import main
from jacbench.constants import GPU_FRAMEWORKS, TOLERANCE
from jacbench.errors import UnsupportedConfiguration, UsageError
from jacbench.measure.case import Case
from jacbench.problems import gbm, make_case
from jacbench.second import registry as second
from jacbench.strategies import devices, registry

# Every PyTorch and JAX strategy and problem it runs, and every second-order method of theirs.
ON_GPU = [(s, p) for s in registry.STRATEGIES if s.framework in GPU_FRAMEWORKS
          for p in s.problems]  # fmt: skip
METHODS = [m for m in second.METHODS if m.framework in GPU_FRAMEWORKS and not m.cpu_only]
SIZES = {
    "gbm": {"paths": 300},
    "asian": {"paths": 300},
    "moments": {"inputs": 500},
    "moments-batch": {"inputs": 200, "batch": 3},
}


def _case(problem: str, blocked: bool = False, device: str = "cpu", steps: int | None = None):
    more = {} if steps is None else {"steps": steps}
    return make_case(problem, {**SIZES[problem], **more}, streamed=blocked, device=device)


def _strategy_case(strategy, problem: str, device: str = "cpu"):
    """The case a strategy is checked on: a loop over the steps runs a short loop (conftest)."""
    steps = LOOP_STEPS if strategy.form == "steps" else None
    return _case(problem, strategy.blocked, device=device, steps=steps)


def _check(strategy, problem, result) -> None:
    case = _case(problem, strategy.blocked)
    assert strategy.error(case, result) < TOLERANCE["float32"]


def _ids(pairs):
    return [f"{s.key}-{p}" for s, p in pairs]


@pytest.mark.parametrize("pair", ON_GPU, ids=_ids(ON_GPU))
def test_device_cpu_named_explicitly_agrees_with_the_closed_form(pair):
    strategy, problem = pair
    case = _strategy_case(strategy, problem, device="cpu")
    result = strategy.build(case)()
    assert isinstance(result.jacobian, np.ndarray)  # on the CPU, numpy as the rows were timed
    assert strategy.error(case, result) < TOLERANCE["float32"]


@pytest.fixture
def keeping(monkeypatch):
    """The GPU's path on the CPU: every call leaves its result as the framework's arrays."""
    monkeypatch.setattr(devices, "keeps_results", lambda device: True)


@pytest.mark.parametrize("pair", ON_GPU, ids=_ids(ON_GPU))
def test_the_gpu_path_leaves_results_to_the_framework_and_they_check(pair, keeping):
    strategy, problem = pair
    case = _strategy_case(strategy, problem)
    call = devices.synchronized(strategy.build(case), strategy.framework, case.device)
    result = call()
    # Blocked strategies, and those drawing their own normals a block at a time, write their
    # blocks into host arrays whatever the device.
    assert strategy.blocked or strategy.drawn or not isinstance(result.jacobian, np.ndarray)
    assert isinstance(devices.to_host(result), registry.JacobianResult)
    assert isinstance(devices.to_host(result).jacobian, np.ndarray)
    assert strategy.error(case, result) < TOLERANCE["float32"]


@pytest.mark.parametrize("method", METHODS, ids=[m.key for m in METHODS])
def test_second_order_methods_on_the_gpu_path_check(method, keeping):
    case = _case(method.problem)
    if method.kind == "dense":
        case = make_case("moments", {"inputs": 50})
    result = method.build(case)()
    assert not isinstance(result, np.ndarray)
    assert method.error(case, result) < 1e-4


@pytest.mark.parametrize("framework,name", [("tensorflow", "pathwise"), ("numpy", "analytic")])
def test_tensorflow_and_numpy_refuse_cuda_with_one_clear_line(framework, name, capsys):
    reason = registry.get(framework, name).unsupported("gbm", "float32", "cuda")
    assert "runs on the cpu only, not cuda" in reason and "PyTorch and JAX" in reason
    with pytest.raises(UnsupportedConfiguration, match="cpu only"):
        Case(framework=framework, strategy=name, device="cuda")
    for command in ("measure", "jacobian"):
        args = [command, "--framework", framework, "--strategy", name, "--device", "cuda"]
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "cpu only, not cuda" in err


def test_every_gpu_framework_target_accepts_cuda_and_the_rest_refuse():
    for s in registry.STRATEGIES:
        accepted = s.unsupported(s.problems[0], s.dtypes[0], "cuda") is None
        assert accepted == (s.framework in GPU_FRAMEWORKS), s.key
    refused = [m.key for m in second.METHODS if m.unsupported(m.problem, "float32", "cuda")]
    tensorflow = [m.key for m in second.METHODS if m.framework == "tensorflow"]
    assert refused == [*tensorflow, "jax/per-path-second-no-ynn"]
    for text in ("simulation:eager", "simulation:blocked-draws"):
        assert Case(framework="torch", strategy=text, device="cuda").device == "cuda"
    with pytest.raises(UnsupportedConfiguration, match="cpu only"):
        Case(framework="tensorflow", strategy="simulation:xla", device="cuda")
    with pytest.raises(UnsupportedConfiguration, match="cpu only"):
        Case(framework="callable", strategy="callable:jacbench.measure.probes:nap", device="cuda")


def test_an_unknown_device_names_the_valid_ones(capsys):
    with pytest.raises(UsageError, match="choose one of: cpu, cuda"):
        Case(framework="torch", strategy="pathwise", device="gpu")
    with pytest.raises(UsageError, match="cpu, cuda"):
        gbm.make_case(gbm.GBMParams(paths=10), device="tpu")
    assert main(["jacobian", "--framework", "torch", "--strategy", "jvp", "--device", "mps"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_cpu_case_keeps_its_key_and_a_gpu_case_has_its_own():
    cpu = Case(framework="torch", strategy="jvp")
    gpu = Case(framework="torch", strategy="jvp", device="cuda")
    # A CPU case's row has no device (blank, as in every file from before the column), so its
    # key is the one it had then; a GPU case's row and key name its device.
    assert "device" not in cpu.spec_row() and gpu.spec_row()["device"] == "cuda"
    assert gpu.key("env") != cpu.key("env") and gpu.worker_spec()["device"] == "cuda"
    assert cpu.worker_spec()["device"] == "cpu"
    assert "cuda" in gpu.label() and "cuda" not in cpu.label()


class _Pair(NamedTuple):
    a: object
    b: object


def test_to_host_converts_framework_arrays_in_tuples_and_keeps_the_rest():
    import jax.numpy as jnp
    import torch

    value = _Pair(torch.ones(2, requires_grad=True) * 2, (jnp.arange(3), np.zeros(1), None))
    out = devices.to_host(value)
    assert isinstance(out, _Pair) and isinstance(out.a, np.ndarray)
    np.testing.assert_array_equal(out.a, [2.0, 2.0])
    np.testing.assert_array_equal(out.b[0], [0, 1, 2])
    assert out.b[2] is None and devices.to_host(1.5) == 1.5


def test_the_stream_drawn_on_threads_is_the_same_stream():
    p = gbm.GBMParams(paths=100_000, steps=3)
    one = gbm.stream_normals(p, 5, 70_000)
    np.testing.assert_array_equal(gbm.stream_normals(p, 5, 70_000, threads=4), one)
    # A GPU case draws its stream on every core; a CPU case on one, as its rows were measured.
    on_gpu = gbm.make_case(p, streamed=True, device="cuda")
    assert gbm.make_case(p, streamed=True).draw_threads == 1
    np.testing.assert_array_equal(on_gpu.block_normals(5, 70_000), one)


def test_the_cpu_path_waits_for_nothing_and_measures_no_device_memory():
    call = registry.get("torch", "jvp").build(_case("gbm"))
    assert devices.synchronized(call, "torch", "cpu") is call
    assert devices.device_memory("torch", "cpu") is None
    assert devices.device_memory("numpy", "cuda") is None


def test_the_questions_program_on_a_device_is_the_program_as_posted():
    from jacbench.strategies import torch_gbm, torch_question

    # Its GPU form run on the CPU (a CPU generator seeded the same way): the same normals, so
    # the same paths and Jacobian as the program as posted.
    case = _case("gbm")
    posted = torch_gbm.build_question(case)()
    on_device = devices.to_host(torch_question.question_on_device(case)())
    np.testing.assert_array_equal(on_device.terminal, posted.terminal)
    np.testing.assert_array_equal(on_device.jacobian, posted.jacobian)
    assert registry.get("torch", "question").error(case, on_device) < TOLERANCE["float32"]
