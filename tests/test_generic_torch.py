"""PyTorch's generic records (strategies.generic.torch_records), each built from its own source
and checked against closed forms: tall per-row functions, a wide one, a coupled one whose rows
the per-row records must get wrong, and a Hessian."""

import ast
import re

import pytest
import torch

from jacbench.strategies import generic

# Inductor's own lowering calls a deprecated torch helper while compiling; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:`torch._prims_common.check`:FutureWarning")

FLOAT32_TOL, FLOAT64_TOL = 1e-4, 1e-9
ROWS = 200


def _params(order: int) -> list:
    """Every torch record of the order, the compiled ones marked slow (each build compiles)."""
    return [
        pytest.param(r, id=r.name, marks=[pytest.mark.slow] if r.compiled else [])
        for r in generic.all_records("torch", order)
    ]


ORDER1, ORDER2 = _params(1), _params(2)


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    """max|a - b| / max|b|, in float64."""
    a, b = a.detach().double(), b.detach().double()
    return ((a - b).abs().max() / b.abs().max()).item()


def theta_for(dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor([100.0, 0.2], dtype=dtype)  # s0, sigma


def normals(dtype: torch.dtype, rows: int = ROWS) -> torch.Tensor:
    return torch.randn(rows, generator=torch.Generator().manual_seed(7), dtype=dtype)


def lognormal(theta, z):
    """One step of a lognormal: y_i = s0 exp(-sigma^2 / 2 + sigma z_i)."""
    return theta[0] * torch.exp(-0.5 * theta[1] ** 2 + theta[1] * z)


def lognormal_jacobian(theta, z) -> torch.Tensor:
    """(R, 2): d y_i / d s0 and d y_i / d sigma."""
    e = torch.exp(-0.5 * theta[1] ** 2 + theta[1] * z)
    return torch.stack([e, theta[0] * e * (z - theta[1])], dim=1)


def run(record, f, theta, data) -> torch.Tensor:
    """The record's jacobian of f, built from its source; a compiled one must compile into
    graphs without a break (a break would run part of it eagerly)."""
    if not record.compiled:
        return generic.build(record, f)(theta, data)
    from torch._dynamo.utils import counters

    breaks, graphs = sum(counters["graph_break"].values()), counters["stats"]["unique_graphs"]
    j = generic.build(record, f)(theta, data)
    assert sum(counters["graph_break"].values()) == breaks, dict(counters["graph_break"])
    assert counters["stats"]["unique_graphs"] > graphs
    return j


# -- order 1 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("record", ORDER1)
def test_tall_lognormal(record, dtype):
    """Case 1: data a tensor of R normals, one output per row."""
    theta, z = theta_for(dtype), normals(dtype)
    j = run(record, lognormal, theta, z)
    assert j.shape == (ROWS, 2)
    assert j.dtype == dtype
    tol = FLOAT32_TOL if dtype == torch.float32 else FLOAT64_TOL
    assert rel_err(j, lognormal_jacobian(theta, z)) < tol


@pytest.mark.parametrize("record", ORDER1)
def test_tall_tuple_with_shared_weight(record):
    """Case 2: data a tuple (z, w), w a 0-d tensor passed whole to every row."""
    theta, z, w = theta_for(torch.float32), normals(torch.float32), torch.tensor(1.5)

    def f(theta, data):
        z, w = data
        return w * lognormal(theta, z)

    j = run(record, f, theta, (z, w))
    assert j.shape == (ROWS, 2)
    assert rel_err(j, 1.5 * lognormal_jacobian(theta, z)) < FLOAT32_TOL


@pytest.mark.parametrize("record", ORDER1)
def test_tall_dict_with_non_tensor_leaves(record):
    """Data a dict holding a float, a string and a tensor of another leading size: only z, the
    first and largest tensor, is split by row; the rest pass whole."""
    theta, z = theta_for(torch.float32), normals(torch.float32)
    data = {"z": z, "scale": 2.0, "label": "paths", "shift": torch.tensor([1.0, 2.0, 3.0])}

    def f(theta, data):
        assert data["label"] == "paths" and data["shift"].shape == (3,)
        return data["scale"] * lognormal(theta, data["z"]) + data["shift"].sum()

    j = run(record, f, theta, data)
    assert j.shape == (ROWS, 2)
    assert rel_err(j, 2.0 * lognormal_jacobian(theta, z)) < FLOAT32_TOL


@pytest.mark.parametrize("record", [p for p in ORDER1 if not p.values[0].per_row])
def test_wide_tanh(record):
    """Case 3: y = tanh(W theta), 3 outputs of 500 inputs; W comes in data (no per-row record:
    those need one output per row of data)."""
    gen = torch.Generator().manual_seed(11)
    w = torch.randn(3, 500, generator=gen) / 500**0.5
    theta = torch.randn(500, generator=gen)

    def f(theta, w):
        return torch.tanh(w @ theta)

    j = run(record, f, theta, w)
    assert j.shape == (3, 500)
    expected = (1 - torch.tanh(w @ theta) ** 2)[:, None] * w
    assert rel_err(j, expected) < FLOAT32_TOL


@pytest.mark.parametrize("record", ORDER1)
def test_coupled_rows(record):
    """Case 4: y_i = x_i - mean(x), x_i = s0 exp(sigma z_i). The full records match the closed
    form; the per-row ones see a mean of one row and must be far off (the advice refuses them
    on that difference)."""
    theta, z = theta_for(torch.float32), normals(torch.float32)

    def f(theta, z):
        x = theta[0] * torch.exp(theta[1] * z)
        return x - x.mean()

    e = torch.exp(theta[1] * z)
    expected = torch.stack([e - e.mean(), theta[0] * (z * e - (z * e).mean())], dim=1)
    j = run(record, f, theta, z)
    assert j.shape == (ROWS, 2)
    if record.per_row:
        assert rel_err(j, expected) > 1e-2
    else:
        assert rel_err(j, expected) < FLOAT32_TOL


# -- order 2 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (1,)], ids=["0-d", "1-element"])
@pytest.mark.parametrize("record", ORDER2)
def test_hessian_quadratic_plus_sin(record, shape):
    """Case 5: f = theta' A theta / 2 + sum(sin theta), d = 30, float64: H = A - diag(sin)."""
    gen = torch.Generator().manual_seed(3)
    b = torch.randn(30, 30, generator=gen, dtype=torch.float64)
    a = (b + b.T) / 2
    theta = torch.randn(30, generator=gen, dtype=torch.float64)

    def f(theta, a):
        return (0.5 * theta @ a @ theta + torch.sin(theta).sum()).reshape(shape)

    h = run(record, f, theta, a)
    assert h.shape == (30, 30)
    assert rel_err(h, a - torch.diag(torch.sin(theta))) < FLOAT64_TOL


# -- the records as data -----------------------------------------------------------------------


def test_metadata():
    records = generic.all_records("torch")
    assert records, "no torch records"
    names = [r.name for r in records]
    assert len(names) == len(set(names))
    for order in (1, 2):
        assert sum(r.reference for r in generic.all_records("torch", order)) == 1
        assert generic.reference("torch", order).mode == "reverse"
    assert generic.reference("torch", 1).name == "functional-loop"
    assert generic.reference("torch", 2).name == "hessian-loop"
    for r in records:
        assert r.framework == "torch"
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), r.name
        assert r.mode in generic.MODES, r.name
        assert r.order in (1, 2), r.name
        assert "\n" not in r.call and "\n" not in r.description, r.name
        assert r.description.endswith("."), r.name
        if r.per_row:
            assert r.mode == "pathwise" and r.order == 1, r.name
        assert r.compiled == ("torch.compile" in r.code), r.name
        assert r.compiled == r.name.startswith("compiled-"), r.name


@pytest.mark.parametrize("record", [*ORDER1, *ORDER2])
def test_code_is_pasteable(record):
    code = record.code
    compile(code, record.key, "exec")
    assert not re.search("[\u2018\u2019\u201c\u201d]", code), "curly quotes"
    assert max(len(line) for line in code.splitlines()) <= 88
    assert "rand" not in code and "manual_seed" not in code, "draws random numbers"
    tree = ast.parse(code)
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "jacobian"]
    assert [a.arg for a in fn.args.args] == ["theta", "data"]
    doc = ast.get_docstring(fn)
    assert doc and "\n" not in doc
    # f is the reader's: called, never defined or bound here.
    bound = {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert "f" not in bound | defined
    assert any(isinstance(n, ast.Name) and n.id == "f" for n in ast.walk(tree))
    if record.compiled:  # compiled once, at module level, not in each call
        assert not _compiles(fn)
        assert any(_compiles(s) for s in tree.body if isinstance(s, ast.Assign))


def _compiles(node: ast.AST) -> bool:
    """Whether the node calls torch.compile."""
    return any(
        isinstance(n, ast.Call) and ast.unparse(n.func) == "torch.compile" for n in ast.walk(node)
    )
