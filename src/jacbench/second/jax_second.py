"""Second-order methods in JAX under jit, as builders: build_NAME(case) -> callable."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jacbench.problems import moments
from jacbench.problems.gbm import GBMCase
from jacbench.problems.moments import MomentsCase
from jacbench.strategies import devices, jax_gbm
from jacbench.strategies.jax_moments import f

jax.config.update("jax_enable_x64", True)

_hessian = jax.jit(jax.hessian(f))


def hvp_forward_over_reverse(x, v, fn=f):
    """H_k v for the three outputs at once, (3, n): jax.jvp of the vector function's jacrev."""
    return jax.jvp(jax.jacrev(fn), (x,), (v,))[1]


def hvp_reverse_over_reverse(x, v, fn=f):
    """H_k v as the reverse Jacobian of J(x) v, (3, n): a reverse pass over a reverse pass."""
    return jax.jacrev(lambda x: jax.jacrev(fn)(x) @ v)(x)


# Unit vectors pushed at a time by diagonal-hvps (lax.map's batch): (CHUNK, 3, n) at once.
CHUNK = 64


def diagonal_by_products(x, fn=f):
    """diag(H_k), (3, n), exactly for any f: the n products H_k e_i, CHUNK at a time, keeping
    entry i of each."""
    n = x.shape[-1]

    def entry(i):
        return hvp_forward_over_reverse(x, jax.nn.one_hot(i, n, dtype=x.dtype), fn)[:, i]

    return jax.lax.map(entry, jnp.arange(n), batch_size=CHUNK).T


def hutchinson(x, probes, fn=f):
    """Hutchinson's estimate of diag(H_k), (3, n): the mean of v * (H_k v) over the probes,
    one product at a time, summed as they come (the memory of one product, not of all)."""

    probes = jnp.asarray(probes)

    def add(i, total):
        return total + probes[i] * hvp_forward_over_reverse(x, probes[i], fn)

    first = probes[0] * hvp_forward_over_reverse(x, probes[0], fn)
    return jax.lax.fori_loop(1, len(probes), add, first) / len(probes)


_forward_over_reverse = jax.jit(hvp_forward_over_reverse)
_reverse_over_reverse = jax.jit(hvp_reverse_over_reverse)
_diagonal_by_products = jax.jit(diagonal_by_products)
_hutchinson = jax.jit(hutchinson)


def _output(case) -> Callable:
    """numpy on the CPU (the conversion blocks), the array left on a GPU (strategies.devices)."""
    return (lambda a: a) if devices.keeps_results(case.device) else np.asarray


def compiled_memory(n: int, dtype: str = "float32") -> dict[str, int]:
    """What XLA's compiled dense Hessian asks for at n before it runs (memory_analysis of the
    program jax.hessian builds under jit): its argument, output and temporary buffers, bytes."""
    found = _hessian.lower(jnp.zeros(n, dtype=dtype)).compile().memory_analysis()
    return {
        "argument": int(found.argument_size_in_bytes),
        "output": int(found.output_size_in_bytes),
        "temporary": int(found.temp_size_in_bytes),
    }


def diagonal_flops(n: int, dtype: str = "float32") -> float:
    """The floating-point operations XLA's compiled exact diagonal (diagonal-hvps) counts at n,
    before it runs (cost_analysis)."""
    found = _diagonal_by_products.lower(jnp.zeros(n, dtype=dtype)).compile().cost_analysis()
    found = found[0] if isinstance(found, list) else found
    return float(found["flops"])


def build_hessian(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, out = devices.jax_put(case.x, case.device), _output(case)
    return lambda: out(_hessian(x))


def _products(case: MomentsCase, jitted) -> Callable[[], np.ndarray]:
    x = devices.jax_put(case.x, case.device)
    v = devices.jax_put(moments.direction(case), case.device)
    out = _output(case)
    return lambda: out(jitted(x, v))


def build_hvp_forward_over_reverse(case: MomentsCase) -> Callable[[], np.ndarray]:
    return _products(case, _forward_over_reverse)


def build_hvp_reverse_over_reverse(case: MomentsCase) -> Callable[[], np.ndarray]:
    return _products(case, _reverse_over_reverse)


def build_diagonal_hvps(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, out = devices.jax_put(case.x, case.device), _output(case)
    return lambda: out(_diagonal_by_products(x))


def build_diagonal_hutchinson(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, out = devices.jax_put(case.x, case.device), _output(case)
    probes = devices.jax_put(moments.probes(case), case.device)
    return lambda: out(_hutchinson(x, probes))


def _greeks_of(spot, vol, z, t, drift):
    n = z.shape[1]

    def pathwise(sp, vp):
        return jax.grad(lambda a, b: jax_gbm.simulate(a, b, z, t, drift).sum(), argnums=(0, 1))(
            sp, vp
        )

    sp, vp = jnp.full((n,), spot), jnp.full((n,), vol)
    _, (d_spot_vol, d_vol_vol) = jax.jvp(
        pathwise, (sp, vp), (jnp.zeros_like(sp), jnp.ones_like(vp))
    )
    return jnp.stack([d_spot_vol, d_vol_vol], axis=1)


# jaxlib 0.10.2 hands the reductions over the time axis of the reverse pass to YNNPACK
# ("__ynn_fusion"). In float32 the one that sums an (M+1, N) array times two vectors of the time
# axis (the last step's cotangent and the time grid) stops scaling with N once the array
# outgrows the cache: 0.05 s at N = 10^5, 1.5 s at 2 x 10^5, 39 s at 10^6, where XLA's own loop
# emitter takes 0.01, 0.03 and 0.11 s (float64: 0.7 s against 0.25 s at 10^6). The Greeks took
# 36.6 s at 10^6 in float32, 4.3 s in float64. "greeks" is JAX as installed; "greeks-no-ynn"
# the same function compiled without YNNPACK (--xla_cpu_experimental_ynn_fusion_type=).
NO_YNN_FUSION = jax_gbm.NO_YNN_FUSION
_greeks = jax.jit(_greeks_of)
_greeks_no_ynn = jax.jit(_greeks_of, compiler_options=NO_YNN_FUSION)


def build_per_path_second(case: GBMCase) -> Callable[[], np.ndarray]:
    args, out = jax_gbm._args(case), _output(case)
    return lambda: out(_greeks(*args))


def build_per_path_second_no_ynn(case: GBMCase) -> Callable[[], np.ndarray]:
    args = jax_gbm._args(case)
    return lambda: np.asarray(_greeks_no_ynn(*args))
