"""JAX's generic records (strategies.generic.jax_records), each built from its source with a
reader's function and checked against closed forms: a tall per-row function, the same with a
shared weight, a wide function, a coupled one (where per-row records must differ) and, for the
Hessians, a quadratic plus sines. float64 runs under jax.enable_x64, a context: x64 is not left
on for the other tests."""

import ast

# Plain imports: JAX is pinned, and a broken install must fail here, not skip these tests.
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jacbench.strategies import generic

ORDER1 = generic.all_records("jax", 1)
ORDER2 = generic.all_records("jax", 2)
PER_ROW = [r for r in ORDER1 if r.per_row]
TOLERANCE = {"float32": 1e-4, "float64": 1e-9}
ROWS, WIDE_INPUTS, WIDE_OUTPUTS, HESSIAN_INPUTS = 200, 500, 3, 30
THETA = (100.0, 0.2)  # s0, sigma


def _ids(record) -> str:
    return f"{record.order}-{record.name}"


def relative_error(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def run(record, f, theta, data) -> np.ndarray:
    out = generic.build(record, f)(theta, data)
    assert isinstance(out, jax.Array)
    return np.asarray(out)


# --- reader functions and their closed forms ---------------------------------------------------


def lognormal(theta, z):
    """One step of a lognormal: y_i = s0 exp(-sigma^2 / 2 + sigma z_i), one output per row."""
    s0, sigma = theta[0], theta[1]
    return s0 * jnp.exp(-0.5 * sigma**2 + sigma * z)


def lognormal_jacobian(z, s0=THETA[0], sigma=THETA[1]):
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(-0.5 * sigma**2 + sigma * z)
    return np.stack([e, s0 * e * (z - sigma)], axis=1)


def weighted_lognormal(theta, data):
    """data = (z, w): w a scalar array every row shares."""
    z, w = data
    return w * lognormal(theta, z)


def dict_lognormal(theta, data):
    """data a dict with a non-array leaf and an array not led by the rows, both shared."""
    return data["scale"] * lognormal(theta, data["normals"]) + data["shift"].sum()


def coupled(theta, z):
    """y_i = x_i - mean(x): every output depends on every row."""
    x = theta[0] * jnp.exp(theta[1] * z)
    return x - jnp.mean(x)


def coupled_jacobian(z, s0=THETA[0], sigma=THETA[1]):
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(sigma * z)
    jx = np.stack([e, s0 * z * e], axis=1)
    return jx - jx.mean(axis=0)


def wide(theta, w):
    return jnp.tanh(w @ theta)


def quadratic_sines(theta, a):
    """0.5 theta' A theta + sum(sin(theta)): one output."""
    return 0.5 * theta @ (a @ theta) + jnp.sum(jnp.sin(theta))


def normals(n=ROWS, dtype="float32"):
    return np.random.default_rng(0).standard_normal(n).astype(dtype)


def tall_case(dtype):
    z = normals(dtype=dtype)
    return jnp.asarray(THETA, dtype=dtype), jnp.asarray(z), lognormal_jacobian(z)


# --- the metadata ------------------------------------------------------------------------------


def test_one_reference_per_order_and_unique_names():
    for order, records in ((1, ORDER1), (2, ORDER2)):
        assert records
        assert [r.name for r in records if r.reference] == [
            "vjp-loop" if order == 1 else "hessian-loop"
        ]
        assert generic.reference("jax", order).reference
        names = [r.name for r in records]
        assert len(names) == len(set(names))
    for r in ORDER1 + ORDER2:
        assert r.framework == "jax" and r.mode in generic.MODES
        assert r.compiled == (not r.reference)
        assert r.name == r.name.lower() and " " not in r.name and "_" not in r.name
        assert "\n" not in r.call and r.description.endswith(".")
        assert "\n" not in r.description
        assert generic.get("jax", r.name, r.order) is r
    assert PER_ROW and all(r.mode == "pathwise" and r.order == 1 for r in PER_ROW)
    assert not any(r.per_row for r in ORDER2)


@pytest.mark.parametrize("record", ORDER1 + ORDER2, ids=_ids)
def test_code_is_readable_source_defining_jacobian(record):
    compile(record.code, record.key, "exec")
    tree = ast.parse(record.code)
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "jacobian"]
    doc = ast.get_docstring(fn)
    assert doc and "\n" not in doc
    assert [a.arg for a in fn.args.args] == ["theta", "data"]
    # f is the reader's: called, never defined or assigned
    assert not any(isinstance(n, ast.FunctionDef) and n.name == "f" for n in ast.walk(tree))
    assert not any(isinstance(n, ast.Name) and n.id == "f" and isinstance(n.ctx, ast.Store)
                   for n in ast.walk(tree))  # fmt: skip
    assert "import jax" in record.code and "random" not in record.code
    if record.compiled:
        assert "jax.jit" in record.code
    for line in record.code.splitlines():
        assert len(line) <= 88, line
    assert not any(c in record.code for c in "\u2018\u2019\u201c\u201d")
    namespace = {"f": lognormal}
    exec(compile(record.code, record.key, "exec"), namespace)  # noqa: S102
    assert callable(namespace["jacobian"])


# --- order 1 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("record", ORDER1, ids=_ids)
def test_tall_per_row_function(record):
    theta, z, expected = tall_case("float32")
    jac = run(record, lognormal, theta, z)
    assert jac.dtype == np.float32
    assert relative_error(jac, expected) < TOLERANCE["float32"]


@pytest.mark.parametrize("record", ORDER1, ids=_ids)
def test_tall_per_row_function_float64(record):
    with jax.enable_x64(True):
        theta, z, expected = tall_case("float64")
        jac = run(record, lognormal, theta, z)
    assert jac.dtype == np.float64
    assert relative_error(jac, expected) < TOLERANCE["float64"]


def test_x64_is_left_as_it_was():
    before = jax.config.jax_enable_x64
    with jax.enable_x64(True):
        pass
    assert jax.config.jax_enable_x64 == before


@pytest.mark.parametrize("record", ORDER1, ids=_ids)
def test_shared_weight_is_passed_whole(record):
    theta, z, expected = tall_case("float32")
    jac = run(record, weighted_lognormal, theta, (z, jnp.asarray(3.0, dtype="float32")))
    assert relative_error(jac, 3.0 * expected) < TOLERANCE["float32"]


@pytest.mark.parametrize("record", ORDER1, ids=_ids)
def test_dict_data_with_shared_leaves(record):
    theta, z, expected = tall_case("float32")
    data = {"normals": z, "scale": 2.0, "shift": jnp.ones(3, dtype="float32")}
    jac = run(record, dict_lognormal, theta, data)
    assert relative_error(jac, 2.0 * expected) < TOLERANCE["float32"]


@pytest.mark.parametrize("record", [r for r in ORDER1 if not r.per_row], ids=_ids)
def test_wide_function(record):
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((WIDE_OUTPUTS, WIDE_INPUTS)) / np.sqrt(WIDE_INPUTS)).astype("float32")
    x = rng.standard_normal(WIDE_INPUTS).astype("float32")
    jac = run(record, wide, jnp.asarray(x), jnp.asarray(w))
    w64, x64 = w.astype(np.float64), x.astype(np.float64)
    expected = (1 - np.tanh(w64 @ x64) ** 2)[:, None] * w64
    assert jac.shape == (WIDE_OUTPUTS, WIDE_INPUTS)
    assert relative_error(jac, expected) < TOLERANCE["float32"]


def test_outputs_of_any_shape_are_flattened():
    """y (4, 50) is read as 200 outputs, row-major."""
    theta, z, expected = tall_case("float32")
    for record in [r for r in ORDER1 if not r.per_row]:
        jac = run(record, lognormal, theta, z.reshape(4, 50))
        assert relative_error(jac, expected) < TOLERANCE["float32"], record.name


@pytest.mark.parametrize("record", ORDER1, ids=_ids)
def test_coupled_rows(record):
    theta, z, _ = tall_case("float32")
    jac = run(record, coupled, theta, z)
    error = relative_error(jac, coupled_jacobian(z))
    if record.per_row:
        assert error > 1e-2  # what lets the advice refuse a per-row record here
    else:
        assert error < TOLERANCE["float32"]


# --- order 2 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("record", ORDER2, ids=_ids)
def test_hessian_of_quadratic_plus_sines(record):
    rng = np.random.default_rng(2)
    b = rng.standard_normal((HESSIAN_INPUTS, HESSIAN_INPUTS))
    a = b + b.T
    theta = rng.standard_normal(HESSIAN_INPUTS)
    with jax.enable_x64(True):
        hess = run(record, quadratic_sines, jnp.asarray(theta), jnp.asarray(a))
    assert hess.dtype == np.float64
    assert relative_error(hess, a - np.diag(np.sin(theta))) < TOLERANCE["float64"]


@pytest.mark.parametrize("record", ORDER2, ids=_ids)
def test_hessian_float32_and_a_one_element_output(record):
    """f returning one value as an array of shape (1,) is read as that value."""
    rng = np.random.default_rng(3)
    b = rng.standard_normal((HESSIAN_INPUTS, HESSIAN_INPUTS))
    a = (b + b.T).astype("float32")
    theta = rng.standard_normal(HESSIAN_INPUTS).astype("float32")

    def f(theta, a):
        return quadratic_sines(theta, a).reshape(1)

    hess = run(record, f, jnp.asarray(theta), jnp.asarray(a))
    assert hess.dtype == np.float32
    expected = a.astype(np.float64) - np.diag(np.sin(theta.astype(np.float64)))
    assert relative_error(hess, expected) < TOLERANCE["float32"]
