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


@jax.jit
def _hvp(x, v):
    return jnp.stack([jax.jvp(jax.grad(lambda x, k=k: f(x)[k]), (x,), (v,))[1] for k in range(3)])


def _output(case) -> Callable:
    """numpy on the CPU (the conversion blocks), the array left on a GPU (strategies.devices)."""
    return (lambda a: a) if devices.keeps_results(case.device) else np.asarray


def build_hessian(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, out = devices.jax_put(case.x, case.device), _output(case)
    return lambda: out(_hessian(x))


def build_hvp(case: MomentsCase) -> Callable[[], np.ndarray]:
    x = devices.jax_put(case.x, case.device)
    v = devices.jax_put(moments.direction(case), case.device)
    out = _output(case)
    return lambda: out(_hvp(x, v))


def build_diagonal(case: MomentsCase) -> Callable[[], np.ndarray]:
    x, out = devices.jax_put(case.x, case.device), _output(case)
    ones = jnp.ones_like(x)
    return lambda: out(_hvp(x, ones))


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
NO_YNN_FUSION = {"xla_cpu_experimental_ynn_fusion_type": ""}
_greeks = jax.jit(_greeks_of)
_greeks_no_ynn = jax.jit(_greeks_of, compiler_options=NO_YNN_FUSION)


def build_greeks(case: GBMCase) -> Callable[[], np.ndarray]:
    args, out = jax_gbm._args(case), _output(case)
    return lambda: out(_greeks(*args))


def build_greeks_no_ynn(case: GBMCase) -> Callable[[], np.ndarray]:
    args = jax_gbm._args(case)
    return lambda: np.asarray(_greeks_no_ynn(*args))
