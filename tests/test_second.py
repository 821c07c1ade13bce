"""Second-order methods against the closed forms: Hessians of the moments problem, per-path
second-order Greeks of the GBM simulation. Parametrized over the second-order registry."""

import numpy as np
import pytest

from jacbench.constants import TOLERANCE
from jacbench.errors import UnsupportedConfiguration, UsageError
from jacbench.measure.targets import parse
from jacbench.problems import gbm, moments
from jacbench.second import registry

MOMENTS = {d: moments.make_case(moments.MomentsParams(inputs=40, dtype=d)) for d in moments.DTYPES}
GBM = {d: gbm.make_case(gbm.GBMParams(paths=1000, dtype=d)) for d in gbm.DTYPES}
PAIRS = [(m, d) for m in registry.METHODS for d in ("float32", "float64")]


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{m.key}-{d}" for m, d in PAIRS])
def test_method_matches_the_closed_form(pair):
    method, dtype = pair
    case = (GBM if method.problem == "gbm" else MOMENTS)[dtype]
    out = method.build(case)()
    expected = method.reference(case)
    assert out.shape == expected.shape
    assert method.error(case, out) < TOLERANCE[dtype]


def test_dense_hessian_is_the_diagonal_matrix():
    case = MOMENTS["float64"]
    h = registry.get("torch", "func-hessian").build(case)()
    np.testing.assert_allclose(np.diagonal(h, axis1=1, axis2=2), moments.hessian_diagonal(case.x))
    off = h - np.stack([np.diag(np.diagonal(k)) for k in h])
    assert np.abs(off).max() == 0.0


def test_the_checks_can_fail():
    case = MOMENTS["float64"]
    method = registry.get("jax", "hvp-forward-over-reverse")
    out = method.build(case)().copy()
    out[1, 7] *= 1.01
    assert method.error(case, out) > 1e-4
    greeks = registry.get("jax", "per-path-second")
    wrong = gbm.hessian_closed_form(GBM["float64"])[:, :2]  # the wrong columns
    assert greeks.error(GBM["float64"], wrong) > 0.1


def test_hvp_direction_is_fixed_by_the_seed():
    a, b = (moments.make_case(moments.MomentsParams(inputs=10, seed=s)) for s in (1, 1))
    np.testing.assert_array_equal(moments.direction(a), moments.direction(b))
    c = moments.make_case(moments.MomentsParams(inputs=10, seed=2))
    assert not np.array_equal(moments.direction(a), moments.direction(c))


def test_every_framework_has_dense_hvp_and_greeks():
    for fw in ("torch", "tensorflow", "jax"):
        kinds = {m.kind for m in registry.METHODS if m.framework == fw}
        assert {"dense", "hvp", "greeks"} <= kinds, fw


def test_a_method_refuses_the_other_problem():
    with pytest.raises(UnsupportedConfiguration, match="takes the gbm problem"):
        registry.get("torch", "per-path-second").build(MOMENTS["float32"])


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(UsageError, match="jax/hvp-forward-over-reverse"):
        registry.get("jax", "newton")
    method = registry.get("jax", "hvp-forward-over-reverse")
    assert parse("jax", "second:hvp-forward-over-reverse").record is method


def test_jax_greeks_as_installed_use_ynnpack_and_the_variant_does_not():
    # In float32 YNNPACK's reduction over the time axis stops scaling past the cache (36.6 s
    # at N = 10^6 against 4.3 s in float64); see jax_second. Both compile float32 code only.
    from jacbench.second import jax_second
    from jacbench.strategies import jax_gbm

    args = jax_gbm._args(GBM["float32"])
    assert {a.dtype for a in args} == {np.dtype("float32")}
    installed = jax_second._greeks.lower(*args).compile().as_text()
    variant = jax_second._greeks_no_ynn.lower(*args).compile().as_text()
    assert "__ynn_fusion" in installed and "__ynn_fusion" not in variant
    assert "f64[" not in installed and "f64[" not in variant


# --- Hessian-vector products and diagonals on a function whose Hessians are not diagonal ------
#
# The moments problem's Hessians are diagonal, so a product with a vector of ones, or one
# Rademacher probe, already gives their diagonal. These check the methods where that fails: two
# outputs of n inputs coupling neighbours, with H_k computed densely by the framework itself.


def _coupled_torch(x):
    import torch

    near = x[:-1] * x[1:]
    return torch.stack([(near**2).sum() + (x**3).sum(), torch.sin(x).sum() * x.sum()])


def _coupled_jax(x):
    import jax.numpy as jnp

    near = x[:-1] * x[1:]
    return jnp.stack([(near**2).sum() + (x**3).sum(), jnp.sin(x).sum() * x.sum()])


def _coupled_tensorflow(x):
    import tensorflow as tf

    near = x[:-1] * x[1:]
    return tf.stack([tf.reduce_sum(near**2) + tf.reduce_sum(x**3),
                     tf.reduce_sum(tf.sin(x)) * tf.reduce_sum(x)])  # fmt: skip


def _coupled_hessians(x: np.ndarray) -> np.ndarray:
    """The coupled function's two Hessians (2, n, n), by hand. f0 = sum (x_i x_{i+1})^2 +
    sum x_i^3: H0_kk = 2 (x_{k-1}^2 + x_{k+1}^2) + 6 x_k (the neighbours that exist),
    H0_{k,k+1} = 4 x_k x_{k+1}. f1 = S T with S = sum sin x_i, T = sum x_i:
    H1_kj = cos x_k + cos x_j - delta_kj T sin x_k."""
    n = len(x)
    h0 = np.diag(6 * x)
    for k in range(n - 1):
        h0[k, k] += 2 * x[k + 1] ** 2
        h0[k + 1, k + 1] += 2 * x[k] ** 2
        h0[k, k + 1] = h0[k + 1, k] = 4 * x[k] * x[k + 1]
    c = np.cos(x)
    h1 = c[:, None] + c[None, :] - np.diag(x.sum() * np.sin(x))
    return np.stack([h0, h1])


def _coupled(framework: str, n: int = 30):
    """x, v, the coupled function, its dense Hessians (2, n, n) in float64 from their closed
    form, and the framework's second-order module."""
    import importlib

    rng = np.random.default_rng(3)
    x, v = rng.uniform(0.5, 1.5, n), rng.standard_normal(n)
    module = importlib.import_module(f"jacbench.second.{framework}_second")
    fn = globals()[f"_coupled_{framework}"]
    dense = _coupled_hessians(x)
    if framework == "torch":
        import torch

        x, v = torch.from_numpy(x), torch.from_numpy(v)
    elif framework == "tensorflow":
        import tensorflow as tf

        x, v = tf.constant(x), tf.constant(v)
    return x, v, fn, dense, module


def test_the_closed_form_hessians_are_the_frameworks_own():
    import jax

    x = np.random.default_rng(5).uniform(0.5, 1.5, 12)
    np.testing.assert_allclose(np.asarray(jax.hessian(_coupled_jax)(x)), _coupled_hessians(x),
                               rtol=1e-12, atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("framework", ["torch", "jax", "tensorflow"])
def test_both_products_are_h_times_v_where_h_is_not_diagonal(framework):
    x, v, fn, dense, module = _coupled(framework)
    expected = dense @ np.asarray(v)
    assert np.abs(dense[0] - np.diag(np.diagonal(dense[0]))).max() > 1.0  # not diagonal
    for product in (module.hvp_forward_over_reverse, module.hvp_reverse_over_reverse):
        np.testing.assert_allclose(np.asarray(product(x, v, fn)), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_the_diagonal_from_n_products_is_exact_where_ones_are_not(framework):
    x, _, fn, dense, module = _coupled(framework, n=150)  # more than two chunks of unit vectors
    diagonal = np.diagonal(dense, axis1=1, axis2=2)
    np.testing.assert_allclose(np.asarray(module.diagonal_by_products(x, fn)), diagonal,
                               rtol=1e-10, atol=1e-10)  # fmt: skip
    ones = np.asarray(module.hvp_forward_over_reverse(x, x * 0 + 1, fn))  # the row sums
    assert np.abs(ones - diagonal).max() > 1.0


@pytest.mark.parametrize("framework", ["torch", "jax", "tensorflow"])
def test_hutchinson_error_falls_with_samples_as_the_off_diagonal_predicts(framework):
    x, _, fn, dense, module = _coupled(framework)
    diagonal = np.diagonal(dense, axis1=1, axis2=2)
    # With Rademacher probes entry i's estimate has variance sum_{j != i} H_ij^2 per probe.
    off = np.sqrt((dense**2).sum(axis=2) - diagonal**2)
    rng = np.random.default_rng(11)
    rms = {}
    estimate_of = module.hutchinson
    if framework == "tensorflow":  # traced once: eagerly, pfor traces every product again
        import tensorflow as tf

        estimate_of = tf.function(module.hutchinson)
    for samples in (4, 256):
        probes = 2.0 * rng.integers(0, 2, (samples, len(diagonal[0]))) - 1.0
        if framework == "torch":
            import torch

            probes = torch.from_numpy(probes)
        estimate = np.asarray(estimate_of(x, probes, fn))
        rms[samples] = float(np.sqrt(np.mean(((estimate - diagonal) / off) ** 2)))
    # The standardized error is about 1/sqrt(samples): 0.5 at 4, 0.06 at 256.
    assert 0.25 < rms[4] < 1.0 and 0.03 < rms[256] < 0.12


def test_jax_says_what_its_dense_hessian_asks_for_before_running():
    # Compiled, not run: the output is the three n x n Hessians, and no temporary beyond them.
    from jacbench.second import jax_second

    found = jax_second.compiled_memory(10_000)
    assert found["output"] == moments.dense_hessian_bytes(10_000, "float32")
    assert found["argument"] == 10_000 * 4
    assert found["temporary"] < found["output"] / 100
