"""TensorFlow's generic records (strategies.generic.tensorflow_records), each built from its
source with a reader's function and checked against closed forms: a tall per-row function, the
same with a shared weight, a wide function, a coupled one (where per-row records must differ)
and, for the Hessians, a quadratic plus sines."""

import ast
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# A plain import: TensorFlow is pinned, and a broken install must fail here, not skip.
import tensorflow as tf  # noqa: E402

from jacbench.strategies import generic  # noqa: E402

ORDER1 = generic.all_records("tensorflow", 1)
ORDER2 = generic.all_records("tensorflow", 2)
PER_ROW = [r for r in ORDER1 if r.per_row]
TOLERANCE = {"float32": 1e-4, "float64": 1e-9}
ROWS, WIDE_INPUTS, WIDE_OUTPUTS, HESSIAN_INPUTS = 200, 500, 3, 30
THETA = (100.0, 0.2)  # s0, sigma


def _name(record) -> str:
    return record.name


def relative_error(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def run(record, f, theta, data):
    return generic.build(record, f)(theta, data).numpy()


# --- reader functions and their closed forms ---------------------------------------------------


def lognormal(theta, z):
    """One step of a lognormal: y_i = s0 exp(-sigma^2 / 2 + sigma z_i), one output per row."""
    s0, sigma = theta[0], theta[1]
    return s0 * tf.exp(-0.5 * sigma**2 + sigma * z)


def lognormal_jacobian(z, s0=THETA[0], sigma=THETA[1]):
    e = np.exp(-0.5 * sigma**2 + sigma * z)
    return np.stack([e, s0 * e * (z - sigma)], axis=1)


def weighted_lognormal(theta, data):
    """data = (z, w): w a scalar tensor every row shares."""
    z, w = data
    return w * lognormal(theta, z)


def coupled(theta, z):
    """y_i = x_i - mean(x): every output depends on every row."""
    x = theta[0] * tf.exp(theta[1] * z)
    return x - tf.reduce_mean(x)


def coupled_jacobian(z, s0=THETA[0], sigma=THETA[1]):
    e = np.exp(sigma * z)
    jx = np.stack([e, s0 * z * e], axis=1)
    return jx - jx.mean(axis=0)


def wide(theta, w):
    return tf.tanh(tf.linalg.matvec(w, theta))


def quadratic_sines(theta, a):
    """0.5 theta' A theta + sum(sin(theta)): one output."""
    return 0.5 * tf.tensordot(theta, tf.linalg.matvec(a, theta), 1) + tf.reduce_sum(tf.sin(theta))


def normals(n=ROWS, dtype="float32"):
    return np.random.default_rng(0).standard_normal(n).astype(dtype)


def tall_case(dtype):
    z = normals(dtype=dtype)
    return tf.constant(THETA, dtype=dtype), tf.constant(z), lognormal_jacobian(z)


# --- the metadata ------------------------------------------------------------------------------


def test_one_reference_per_order_and_unique_names():
    for order, records in ((1, ORDER1), (2, ORDER2)):
        assert records
        assert [r.name for r in records if r.reference] == [
            "tape-jacobian-loop" if order == 1 else "hessian-loop"
        ]
        assert generic.reference("tensorflow", order).reference
        names = [r.name for r in records]
        assert len(names) == len(set(names))
    for r in ORDER1 + ORDER2:
        assert r.framework == "tensorflow" and r.mode in generic.MODES
        assert r.compiled == (r.name.endswith("-function") or r.name.endswith("-xla"))
        assert r.name == r.name.lower() and " " not in r.name and "_" not in r.name
        assert "\n" not in r.call and r.description.endswith(".")
        assert generic.get("tensorflow", r.name, r.order) is r
    assert PER_ROW and all(r.mode == "pathwise" and r.order == 1 for r in PER_ROW)


@pytest.mark.parametrize("record", ORDER1 + ORDER2, ids=lambda r: f"{r.order}-{r.name}")
def test_code_is_readable_source_defining_jacobian(record):
    compile(record.code, record.key, "exec")
    tree = ast.parse(record.code)
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "jacobian"]
    doc = ast.get_docstring(fn)
    assert doc and "\n" not in doc
    assert [a.arg for a in fn.args.args] == ["theta", "data"]
    # f is the reader's: called, never defined
    assert not any(isinstance(n, ast.FunctionDef) and n.name == "f" for n in ast.walk(tree))
    assert "f(theta" in record.code and "import tensorflow as tf" in record.code
    assert "random" not in record.code
    for line in record.code.splitlines():
        assert len(line) <= 88, line
    assert not any(c in record.code for c in "\u2018\u2019\u201c\u201d")


# --- order 1 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("record", ORDER1, ids=_name)
def test_tall_per_row_function(record, dtype):
    theta, z, expected = tall_case(dtype)
    jac = run(record, lognormal, theta, z)
    assert jac.dtype == dtype
    assert relative_error(jac, expected) < TOLERANCE[dtype]


@pytest.mark.parametrize("record", ORDER1, ids=_name)
def test_shared_weight_is_passed_whole(record):
    theta, z, expected = tall_case("float32")
    jac = run(record, weighted_lognormal, theta, (z, tf.constant(3.0)))
    assert relative_error(jac, 3.0 * expected) < TOLERANCE["float32"]


@pytest.mark.parametrize("record", PER_ROW, ids=_name)
def test_per_row_splits_by_the_first_tensor_leaf(record):
    """A dict whose first leaf (by sorted key) is a Python float and whose vector of another
    length passes whole: rows follow z, the first (and largest) tensor."""
    theta, z, expected = tall_case("float32")
    shift = tf.constant([1.0, 2.0, 3.0])

    def f(theta, data):
        return data["a_scale"] * lognormal(theta, data["b_z"]) + tf.reduce_sum(data["c_shift"])

    data = {"a_scale": 2.0, "b_z": z, "c_shift": shift}
    assert relative_error(run(record, f, theta, data), 2.0 * expected) < TOLERANCE["float32"]


@pytest.mark.parametrize("record", [r for r in ORDER1 if not r.per_row], ids=_name)
def test_wide_function(record):
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((WIDE_OUTPUTS, WIDE_INPUTS)) / np.sqrt(WIDE_INPUTS)).astype("f4")
    theta = rng.standard_normal(WIDE_INPUTS).astype("float32")
    expected = (1 - np.tanh(w @ theta) ** 2)[:, None] * w
    jac = run(record, wide, tf.constant(theta), tf.constant(w))
    assert relative_error(jac, expected) < TOLERANCE["float32"]


@pytest.mark.parametrize("record", ORDER1, ids=_name)
def test_coupled_rows_only_full_jacobians_match(record):
    z = normals()
    jac = run(record, coupled, tf.constant(THETA), tf.constant(z))
    error = relative_error(jac, coupled_jacobian(z))
    if record.per_row:
        assert error > 1e-2  # row by row, x_i - mean(x) is 0: what lets the advice refuse it
    else:
        assert error < TOLERANCE["float32"]


# --- order 2 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("record", ORDER2, ids=_name)
def test_hessian(record):
    rng = np.random.default_rng(2)
    b = rng.standard_normal((HESSIAN_INPUTS, HESSIAN_INPUTS))
    a = (b + b.T) / 2
    theta = rng.standard_normal(HESSIAN_INPUTS)
    hessian = run(record, quadratic_sines, tf.constant(theta), tf.constant(a))
    assert hessian.dtype == "float64"
    assert relative_error(hessian, a - np.diag(np.sin(theta))) < TOLERANCE["float64"]
