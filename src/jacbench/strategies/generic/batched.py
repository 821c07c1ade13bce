"""The batched records: per-sample Jacobians of a function of a batch (``advise --batch``).

The batched contract (problems.user): theta is a (B, d) tensor of B samples' inputs, y is led by
B, and sample b's outputs depend on theta[b] alone. The full Jacobian of the flattened problem is
then block-diagonal, and only its B diagonal blocks are worth computing. Each record's ``code``
defines ``jacobian(theta, data)`` returning them, (B, m', d), m' a sample's outputs flattened.

The JAX and PyTorch records differentiate one sample, ``single(t, data) = f(t[None], data)[0]``,
and map that over the batch with vmap. TensorFlow's ``tape.batch_jacobian`` does the same from
the batch's tape. The records are chosen only for a batched request (advise.batched).
"""

from __future__ import annotations

from jacbench.strategies.generic.record import Generic

# --- JAX: jit with data as an argument (a jit closing over arrays constant-folds them) --------

_JAX = '''\
import jax


def _single(t, data):
    """One sample's outputs, flattened: f on a batch of one."""
    return f(t[None], data)[0].reshape(-1)


@jax.jit
def jacobian(theta, data):
    """{doc}"""
    return jax.vmap(jax.{transform}(_single), in_axes=(0, None))(theta, data)
'''

# --- PyTorch: torch.func, eager or compiled whole -------------------------------------------

_TORCH_SINGLE = '''\
import torch
import torch.func


def _single(t, data):
    """One sample's outputs, flattened: f on a batch of one."""
    return f(t.unsqueeze(0), data)[0].reshape(-1)
'''

_TORCH = (
    _TORCH_SINGLE
    + '''

def jacobian(theta, data):
    """{doc}"""
    per_sample = torch.func.{transform}(_single)
    return torch.func.vmap(per_sample, in_dims=(0, None))(theta, data)
'''
)

_TORCH_COMPILED = (
    _TORCH_SINGLE
    + '''

def _batched(theta, data):
    """(B, m', d): one sample's Jacobian, vmapped over the batch."""
    per_sample = torch.func.jacrev(_single)
    return torch.func.vmap(per_sample, in_dims=(0, None))(theta, data)


# Compiled once, traced on the first call and again for each new shape or dtype.
_batched_compiled = torch.compile(_batched, dynamic=False)


def jacobian(theta, data):
    """Reverse mode per sample, compiled: torch.compile of vmap of torch.func.jacrev."""
    return _batched_compiled(theta, data)
'''
)

# --- TensorFlow: GradientTape.batch_jacobian, eager or under XLA ------------------------------

_TENSORFLOW = '''\
import tensorflow as tf


{decorator}def jacobian(theta, data):
    """Per-sample Jacobians by tape.batch_jacobian{doc}."""
    with tf.GradientTape() as tape:
        tape.watch(theta)
        y = f(theta, data)
        y = tf.reshape(y, [tf.shape(y)[0], -1])  # each sample's outputs, flattened
    return tape.batch_jacobian(y, theta)
'''


# Per framework: the vmapped call's template, the record's source template, whether it compiles.
_VMAPPED = {
    "jax": ("jax.jit(jax.vmap(jax.{t}(single), in_axes=(0, None)))(theta, data)", "jax", True),
    "torch": ("torch.func.vmap(torch.func.{t}(single), in_dims=(0, None))(theta, data)",
              "torch.func", False),
}  # fmt: skip
_MODES = {"jacrev": "reverse", "jacfwd": "forward"}


def _vmapped(framework: str, transform: str) -> Generic:
    """The record of the framework's vmap over one sample's transform (jacrev or jacfwd)."""
    call, api, compiled = _VMAPPED[framework]
    mode = _MODES[transform]
    what = f"{mode.capitalize()} mode per sample: {api}.{transform} of one sample, vmapped"
    done = ", compiled." if compiled else "."
    return Generic(
        framework=framework,
        name=f"batched-{transform}",
        mode=mode,
        call=call.format(t=transform),
        description=f"{what} over the batch{done}",
        code=(_JAX if framework == "jax" else _TORCH).format(transform=transform, doc=what + done),
        compiled=compiled,
        batched=True,
    )


def _tensorflow(suffix: str, decorator: str, doc: str, call: str, description: str) -> Generic:
    return Generic(
        framework="tensorflow",
        name="batch-jacobian" + suffix,
        mode="reverse",
        call="tape.batch_jacobian(y, theta)" + call,
        description="GradientTape.batch_jacobian: the per-sample Jacobians, its backward "
        "passes vectorized by pfor over a sample's outputs" + description,
        code=_TENSORFLOW.format(decorator=decorator, doc=doc),
        compiled=bool(suffix),
        batched=True,
    )


RECORDS: tuple[Generic, ...] = (
    *(_vmapped(fw, t) for fw in ("jax", "torch") for t in ("jacrev", "jacfwd")),
    Generic(
        framework="torch",
        name="compiled-batched-jacrev",
        mode="reverse",
        call="torch.compile(torch.func.vmap(torch.func.jacrev(single)), dynamic=False)"
        "(theta, data)",
        description="The per-sample reverse mode compiled whole by torch.compile (inductor, "
        "dynamic=False): the first call, and each new shape or dtype, compiles.",
        code=_TORCH_COMPILED,
        compiled=True,
        batched=True,
    ),
    _tensorflow("", "", " (eager)", "", "."),
    _tensorflow(
        "-xla",
        "@tf.function(jit_compile=True)\n",
        " (XLA)",
        " inside tf.function(jit_compile=True)",
        ", inside tf.function(jit_compile=True) (XLA).",
    ),
)
