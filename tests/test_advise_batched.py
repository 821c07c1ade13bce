"""jacbench advise on a function of a batch: per-sample Jacobians (--batch), and the hint that
a dense Jacobian is block-diagonal.

The reader's function is a one-layer tanh network applied to each sample of a batch, y_b = W2
tanh(W1 x_b + b1), x_b a row of theta (B, 16), the weights in data, 4 outputs a sample. Its
per-sample Jacobian has a closed form, W2 diag(1 - tanh^2(W1 x_b + b1)) W1, which the printed
code must give. As in tests/test_advise.py, each scenario writes the reader's module into a
temporary folder and runs the advice at small sizes; what is asserted is what the advice decides,
never how fast this machine is.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from jacbench import advise
from jacbench.advise import output
from jacbench.advise.run import Request
from jacbench.cli import main
from jacbench.constants import TOLERANCE
from jacbench.problems import batched, user
from jacbench.report.advice import Advice, Batch
from jacbench.strategies import generic

SAMPLES, INPUTS, HIDDEN, OUTPUTS = 8, 16, 8, 4

# The weights and the samples, drawn by numpy: each framework's module, and the closed form
# here, read the same values.
WEIGHTS = f"""
import numpy as np

D, H, M = {INPUTS}, {HIDDEN}, {OUTPUTS}


def weights():
    rng = np.random.default_rng(4)
    w1 = rng.standard_normal((H, D)) / 4
    return w1, rng.standard_normal(H) / 2, rng.standard_normal((M, H)) / 3


def samples(n):
    return np.random.default_rng(5).standard_normal((n, D))
"""
_DRAWS: dict = {}
exec(WEIGHTS, _DRAWS)  # noqa: S102 - the reader's draws, as their modules make them

JAX_MODULE = (
    WEIGHTS
    + '''
import jax.numpy as jnp


def mlp(theta, data):
    """Per sample: y_b = W2 tanh(W1 x_b + b1), x_b the row b of theta (B, 16)."""
    w1, b1, w2 = data
    return jnp.tanh(theta @ w1.T + b1) @ w2.T


def example(n):
    as_f32 = lambda a: jnp.asarray(a, jnp.float32)
    return as_f32(samples(n)), tuple(map(as_f32, weights()))


def flat_mlp(theta, data):
    """The same batch flattened into a 1-D theta, as the reader of the report had it."""
    return mlp(theta.reshape(-1, D), data)


def flat_example(n):
    theta, data = example(n)
    return theta.reshape(-1), data
'''
)

TORCH_MODULE = (
    WEIGHTS
    + '''
import torch


def mlp(theta, data):
    """Per sample: y_b = W2 tanh(W1 x_b + b1), x_b the row b of theta (B, 16)."""
    w1, b1, w2 = data
    return torch.tanh(theta @ w1.T + b1) @ w2.T


def example(n):
    as_f32 = lambda a: torch.tensor(a, dtype=torch.float32)
    return as_f32(samples(n)), tuple(map(as_f32, weights()))


def coupled(theta, data):
    """Not a batch: sample 0's outputs read sample 1's first input."""
    first = (torch.arange(theta.shape[0]) == 0)[:, None]
    return mlp(theta, data) + first * theta[1, 0]
'''
)

TF_MODULE = (
    WEIGHTS
    + '''
import tensorflow as tf


def mlp(theta, data):
    """Per sample: y_b = W2 tanh(W1 x_b + b1), x_b the row b of theta (B, 16)."""
    w1, b1, w2 = data
    return tf.tanh(theta @ tf.transpose(w1) + b1) @ tf.transpose(w2)


def example(n):
    as_f32 = lambda a: tf.constant(a, dtype=tf.float32)
    return as_f32(samples(n)), tuple(map(as_f32, weights()))
'''
)

MODULES = {"jax": "mlp_jax.py", "torch": "mlp_torch.py", "tensorflow": "mlp_tf.py"}

# Each worker makes its fewest calls: these tests read what advise decides from the rows.
FEWEST = {"repeats": 3, "warm_budget_s": 0.05, "threads": 1}


@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> Path:
    """A reader's folder holding one module a framework (a worker imports only its own)."""
    folder = tmp_path_factory.mktemp("batched_reader")
    for text, name in ((JAX_MODULE, "jax"), (TORCH_MODULE, "torch"), (TF_MODULE, "tensorflow")):
        (folder / MODULES[name]).write_text(textwrap.dedent(text))
    return folder


def _advise(reader: Path, framework: str, function: str, out: Path, factory="example", **kw):
    module = reader / MODULES[framework]
    req = Request(f"{module}:{function}", f"{module}:{factory}", **{**FEWEST, **kw})
    return advise.advise(req, out, progress=lambda line: None)


def closed_form(x: np.ndarray) -> np.ndarray:
    """(B, 4, 16): per sample, W2 diag(1 - tanh^2(W1 x_b + b1)) W1."""
    w1, b1, w2 = _DRAWS["weights"]()
    slope = 1 - np.tanh(x @ w1.T + b1) ** 2  # (B, H)
    return np.einsum("mh,bh,hd->bmd", w2, slope, w1)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


# --- no worker: the records, the rows, the blocks ---------------------------------------------


def test_the_closed_form_is_not_the_linear_one():
    # The check the code tests make is able to fail: without tanh's slope the blocks are W2 W1.
    x = _DRAWS["samples"](SAMPLES)
    w1, _, w2 = _DRAWS["weights"]()
    assert _relative(np.broadcast_to(w2 @ w1, closed_form(x).shape), closed_form(x)) > 0.1


@pytest.mark.parametrize("record", generic.all_records(batched=True), ids=lambda r: r.key)
def test_batched_records_are_pasteable_and_listed_apart(record):
    tree = ast.parse(record.code)
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "jacobian"]
    assert [a.arg for a in fn.args.args] == ["theta", "data"]
    assert ast.get_docstring(fn) and "\n" not in ast.get_docstring(fn)
    assert all(len(line) <= 88 for line in record.code.splitlines())
    assert record.order == 1 and record.mode in generic.MODES and not record.per_row
    assert record not in generic.all_records(record.framework, 1)  # never on a dense request
    assert generic.find(record.framework, record.name) is record


def test_rows_are_counted_from_the_data_not_a_weight_matrix():
    import torch

    w, x = torch.ones(16, 4), torch.ones(100, 4)
    assert user.rows_of((w, x)) == 100  # the first tensor, W, has 16
    assert user.rows_of({"x": x, "w": w}) == 100
    assert user.rows_of((2.0, torch.tensor(1.0))) is None


def _block_diagonal(blocks: int, height: int, width: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    jac = np.zeros((blocks * height, blocks * width))
    for b in range(blocks):
        jac[b * height : (b + 1) * height, b * width : (b + 1) * width] = rng.uniform(
            1, 2, (height, width)
        )
    return jac


def test_blocks_are_found_and_an_entry_off_them_undoes_it():
    jac = _block_diagonal(5, 4, 16)
    assert batched.blocks(jac) == {"blocks": 5, "block_shape": [4, 16]}
    assert np.array_equal(batched.diagonal_blocks(jac, 5)[2], jac[8:12, 32:48])
    coupled = jac.copy()
    coupled[0, 20] = 1e-3  # sample 0's first output reads sample 1's inputs
    assert batched.blocks(coupled) == {"blocks": None, "block_shape": None}
    with pytest.raises(user.ContractError, match="sample 0's outputs depend on sample 1's"):
        batched.diagonal_blocks(coupled, 5)
    assert batched.blocks(np.zeros((20, 80)))["blocks"] is None  # no entry on the blocks


# --- the advice on a batch ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax_batch(reader, tmp_path_factory) -> Advice:
    out = tmp_path_factory.mktemp("jax_batch")
    return _advise(reader, "jax", "mlp", out, sizes=(SAMPLES, 2 * SAMPLES), batch=True)


@pytest.fixture(scope="module")
def torch_batch(reader, tmp_path_factory) -> Advice:
    out = tmp_path_factory.mktemp("torch_batch")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JACBENCH_COMPILE_COST", "skip")  # no second compile: nothing reads it here
        return _advise(reader, "torch", "mlp", out, sizes=(SAMPLES, 2 * SAMPLES), batch=True)


@pytest.mark.slow  # advise's worker processes: 10 to 60 s
@pytest.mark.parametrize("framework", ["jax", "torch"])
def test_a_batch_gets_a_batched_pick_checked_against_the_blocks(framework, request):
    found = request.getfixturevalue(f"{framework}_batch")
    assert found.batch == Batch(samples=SAMPLES, inputs=INPUTS, outputs=OUTPUTS)
    assert {s.status for s in found.strategies} == {"ok"}, found.strategies
    names = {s.name for s in found.strategies}
    assert {r.name for r in generic.all_records(framework, 1, batched=True)} < names
    # The plain loop over the flattened batch, beside: its diagonal blocks agree too.
    assert generic.reference(framework, 1).name in names
    assert all(s.rows[0].max_rel_error < 1e-5 for s in found.strategies)
    assert generic.find(framework, found.pick.strategy).batched


@pytest.mark.slow  # advise's worker processes: 10 to 60 s
@pytest.mark.parametrize("framework", ["jax", "torch"])
def test_printed_code_gives_the_closed_form(framework, request, reader, tmp_path):
    found = request.getfixturevalue(f"{framework}_batch")
    (tmp_path / "jacobian.py").write_text(found.code)
    module = MODULES[framework].removesuffix(".py")
    script = (
        f"import numpy as np, runpy, sys\n"
        f"ns = runpy.run_path('jacobian.py')\n"
        f"sys.path.insert(0, {str(reader)!r})\n"
        f"from {module} import example\n"
        f"theta, data = example(5)\n"
        f"j = ns['jacobian'](theta, data)\n"
        f"np.save('j.npy', np.asarray(j.detach() if hasattr(j, 'detach') else j))\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path)
    j = np.load(tmp_path / "j.npy")
    x = _DRAWS["samples"](5)
    assert j.shape == (5, OUTPUTS, INPUTS)
    assert _relative(j, closed_form(x)) < 1e-5


@pytest.mark.slow  # advise's worker processes: 10 to 60 s
def test_tensorflow_batch_jacobian_passes_its_check(reader, tmp_path):
    found = _advise(reader, "tensorflow", "mlp", tmp_path, sizes=(SAMPLES,), batch=True,
                    strategies=("batch-jacobian", "batch-jacobian-xla"))  # fmt: skip
    for s in found.strategies:
        assert s.status == "ok", s
        assert s.rows[0].max_rel_error < TOLERANCE["float32"]
    assert found.pick.strategy in ("batch-jacobian", "batch-jacobian-xla")


@pytest.mark.slow  # advise's worker processes: 5 to 20 s
def test_a_flattened_batch_is_found_block_diagonal(reader, tmp_path):
    found = _advise(reader, "jax", "flat_mlp", tmp_path, "flat_example", sizes=(SAMPLES,),
                    strategies=("jacrev",))  # fmt: skip
    assert (found.inputs, found.outputs) == (SAMPLES * INPUTS, SAMPLES * OUTPUTS)
    assert found.blocks == SAMPLES and found.block_shape == (OUTPUTS, INPUTS)
    assert found.batch is None
    said = output.summary(found)
    assert f"block-diagonal, {SAMPLES} blocks of {OUTPUTS}×{INPUTS}" in said
    assert "rerun with --batch" in said


# --- what is not a batch: one line, exit status 2, nothing written ----------------------------

NOT_A_BATCH = {
    "coupled": ("coupled", ["--batch"], "sample 0's outputs depend on sample 1's inputs"),
    "2-D theta without --batch": ("mlp", [], "pass --batch"),
}


@pytest.mark.slow  # a probe worker: 3 to 10 s
@pytest.mark.parametrize("case", list(NOT_A_BATCH))
def test_not_a_batch_exits_2_with_one_line(case, reader, tmp_path, capsys, monkeypatch):
    function, flags, said = NOT_A_BATCH[case]
    monkeypatch.chdir(reader)
    out = tmp_path / "advice"
    rc = main(["advise", f"mlp_torch.py:{function}", "--example", "mlp_torch.py:example",
               "--sizes", "4", "--out", str(out), *flags])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert said in err[-1] and err[-1].startswith("jacbench: error:")
    assert not out.exists()
