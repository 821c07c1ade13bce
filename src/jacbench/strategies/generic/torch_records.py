"""PyTorch's generic records: the ways torch (2.13, CPU) takes a reader's Jacobian or Hessian.

Each ``code`` is the source a reader pastes after importing their function as ``f``; the package
contract is in jacbench.strategies.generic. The per-row and functional sources are put together
from shared pieces below; each record's source still reads whole on its own.
"""

from __future__ import annotations

from jacbench.strategies.generic.record import Generic

# The per-row pieces: data's largest tensor sets the rows R; every tensor leaf with R leading
# rows is split (each row given back as a batch of one), every other leaf passed whole.
_ROW_HEADER = """\
import torch
import torch.func
from torch.utils._pytree import tree_flatten, tree_unflatten


def _one_row(theta, leaves, spec, split):
    \"\"\"f on one row of data, each split leaf given back as a batch of one.\"\"\"
    leaves = [x.unsqueeze(0) if s else x for x, s in zip(leaves, split)]
    return f(theta, tree_unflatten(leaves, spec)).reshape(())


def _per_row(theta, data):
    \"\"\"(R, d): the gradient of each row's output, vmapped over the rows.\"\"\"
    leaves, spec = tree_flatten(data)
    tensors = [x for x in leaves if isinstance(x, torch.Tensor) and x.ndim >= 1]
    sizes = [x.numel() for x in tensors]
    rows = tensors[sizes.index(max(sizes))].shape[0]  # the largest tensor's rows
    split = [
        isinstance(x, torch.Tensor) and x.ndim >= 1 and x.shape[0] == rows
        for x in leaves
    ]
    in_dims = (None, [0 if s else None for s in split], None, None)
    row_grad = torch.func.vmap(torch.func.grad(_one_row), in_dims=in_dims)
    return row_grad(theta, leaves, spec, split)
"""

_PER_ROW = (
    _ROW_HEADER
    + '''

def jacobian(theta, data):
    """Per-row reverse mode: torch.func.vmap over rows of torch.func.grad."""
    return _per_row(theta, data)
'''
)

_COMPILED_PER_ROW = (
    _ROW_HEADER
    + '''

# Compiled once, traced on the first call and again for each new shape or dtype.
_per_row_compiled = torch.compile(_per_row, dynamic=False)


def jacobian(theta, data):
    """Per-row reverse mode, compiled: torch.compile of vmap over rows of grad."""
    return _per_row_compiled(theta, data)
'''
)


def _functional(doc: str, options: str = "") -> str:
    """The source of torch.autograd.functional.jacobian with the given keyword options."""
    args = "lambda t: f(t, data), theta" + (f", {options}" if options else "")
    call = f"torch.autograd.functional.jacobian({args})"
    if len(call) > 80:  # the line as black would break it, within 88 characters
        call = f"torch.autograd.functional.jacobian(\n        {args}\n    )"
    return f'''\
import torch


def jacobian(theta, data):
    """{doc}"""
    j = {call}
    return j.reshape(-1, theta.numel())
'''


_JACREV = '''\
import torch.func


def jacobian(theta, data):
    """Reverse mode, vmapped over the outputs (torch.func.jacrev)."""
    return torch.func.jacrev(f)(theta, data).reshape(-1, theta.numel())
'''

_JACREV_CHUNKED = '''\
import torch.func

CHUNK_SIZE = 256  # outputs per vmapped backward pass: bounds the memory


def jacobian(theta, data):
    """Reverse mode in chunks of outputs (torch.func.jacrev with chunk_size)."""
    j = torch.func.jacrev(f, chunk_size=CHUNK_SIZE)(theta, data)
    return j.reshape(-1, theta.numel())
'''

_JACFWD = '''\
import torch.func


def jacobian(theta, data):
    """Forward mode, vmapped over the inputs (torch.func.jacfwd)."""
    return torch.func.jacfwd(f)(theta, data).reshape(-1, theta.numel())
'''

_COMPILED_JACFWD = '''\
import torch
import torch.func


def _jacfwd(theta, data):
    """(m, d) by forward mode, vmapped over the inputs."""
    return torch.func.jacfwd(f)(theta, data).reshape(-1, theta.numel())


# Compiled once, traced on the first call and again for each new shape or dtype.
_jacfwd_compiled = torch.compile(_jacfwd, dynamic=False)


def jacobian(theta, data):
    """Forward mode, compiled: torch.compile of torch.func.jacfwd."""
    return _jacfwd_compiled(theta, data)
'''

_HESSIAN_LOOP = '''\
import torch


def jacobian(theta, data):
    """The Hessian by a loop of backward passes (torch.autograd.functional.hessian)."""
    h = torch.autograd.functional.hessian(lambda t: f(t, data).reshape(()), theta)
    return h.reshape(theta.numel(), theta.numel())
'''

_FORWARD_OVER_REVERSE = '''\
import torch.func


def jacobian(theta, data):
    """The Hessian, forward over reverse: torch.func.jacfwd of torch.func.jacrev."""
    h = torch.func.jacfwd(torch.func.jacrev(f))(theta, data)
    return h.reshape(theta.numel(), theta.numel())
'''

_REVERSE_OVER_REVERSE = '''\
import torch.func


def jacobian(theta, data):
    """The Hessian, reverse over reverse: torch.func.jacrev of torch.func.jacrev."""
    h = torch.func.jacrev(torch.func.jacrev(f))(theta, data)
    return h.reshape(theta.numel(), theta.numel())
'''

_HVP_VMAP = '''\
import torch
import torch.func


def _value(theta, data):
    """f's one value as a scalar, as torch.func.grad needs it."""
    return f(theta, data).reshape(())


def _hvp(v, theta, data):
    """H v: forward mode (jvp) through the reverse-mode gradient."""

    def gradient(t):
        return torch.func.grad(_value)(t, data)

    return torch.func.jvp(gradient, (theta,), (v,))[1]


def jacobian(theta, data):
    """The Hessian, one Hessian-vector product per column, vmapped (jvp of grad)."""
    basis = torch.eye(theta.numel(), dtype=theta.dtype, device=theta.device)
    columns = torch.func.vmap(_hvp, in_dims=(0, None, None))(basis, theta, data)
    return columns.T
'''


RECORDS: tuple[Generic, ...] = (
    Generic(
        framework="torch",
        name="functional-loop",
        mode="reverse",
        call="torch.autograd.functional.jacobian(lambda t: f(t, data), theta)",
        description="PyTorch's classic Jacobian: one backward pass per output, in a Python loop.",
        code=_functional(
            "A loop of one backward pass per output (torch.autograd.functional.jacobian)."
        ),
        reference=True,
    ),
    Generic(
        framework="torch",
        name="functional-vectorized",
        mode="reverse",
        call="torch.autograd.functional.jacobian(lambda t: f(t, data), theta, vectorize=True)",
        description=(
            "The classic Jacobian with vectorize=True: the backward passes batched by vmap."
        ),
        code=_functional(
            "Reverse mode, the backward passes vmapped (vectorize=True).", "vectorize=True"
        ),
    ),
    Generic(
        framework="torch",
        name="functional-forward",
        mode="forward",
        call=(
            "torch.autograd.functional.jacobian(lambda t: f(t, data), theta,"
            ' vectorize=True, strategy="forward-mode")'
        ),
        description=(
            "The classic Jacobian in forward mode: one vmapped forward-mode pass per input."
        ),
        code=_functional(
            "Forward mode, vmapped over the inputs (strategy=forward-mode).",
            'vectorize=True, strategy="forward-mode"',
        ),
    ),
    Generic(
        framework="torch",
        name="jacrev",
        mode="reverse",
        call="torch.func.jacrev(f)(theta, data)",
        description="torch.func's reverse-mode Jacobian: vjps vmapped over all the outputs.",
        code=_JACREV,
    ),
    Generic(
        framework="torch",
        name="jacrev-chunked",
        mode="reverse",
        call="torch.func.jacrev(f, chunk_size=256)(theta, data)",
        description=(
            "torch.func.jacrev vmapping 256 outputs at a time, bounding memory for tall y."
        ),
        code=_JACREV_CHUNKED,
    ),
    Generic(
        framework="torch",
        name="jacfwd",
        answer="forward",
        mode="forward",
        call="torch.func.jacfwd(f)(theta, data)",
        description="torch.func's forward-mode Jacobian: jvps vmapped over the d inputs.",
        code=_JACFWD,
    ),
    Generic(
        framework="torch",
        name="per-row",
        answer="pathwise",
        mode="pathwise",
        call="torch.func.vmap(torch.func.grad(one_row))(theta, rows)",
        description=(
            "The gradient of each row's own output, vmapped over the rows of data:"
            " right only when the rows are independent."
        ),
        code=_PER_ROW,
        per_row=True,
    ),
    Generic(
        framework="torch",
        name="compiled-jacfwd",
        mode="forward",
        call="torch.compile(torch.func.jacfwd(f), dynamic=False)(theta, data)",
        description=(
            "torch.func.jacfwd compiled whole by torch.compile (one graph, inductor,"
            " dynamic=False): the first call, and each new shape or dtype, compiles."
        ),
        code=_COMPILED_JACFWD,
        compiled=True,
    ),
    Generic(
        framework="torch",
        name="compiled-per-row",
        mode="pathwise",
        call="torch.compile(torch.func.vmap(torch.func.grad(one_row)), dynamic=False)(theta, rows)",
        description=(
            "The per-row gradients, row splitting and vmap included, compiled whole by"
            " torch.compile (dynamic=False): the first call, and each new shape, compiles."
        ),
        code=_COMPILED_PER_ROW,
        per_row=True,
        compiled=True,
    ),
    Generic(
        framework="torch",
        name="hessian-loop",
        mode="reverse",
        call="torch.autograd.functional.hessian(lambda t: f(t, data), theta)",
        description=(
            "PyTorch's classic Hessian: a backward pass through the gradient per input,"
            " in a Python loop."
        ),
        code=_HESSIAN_LOOP,
        order=2,
        reference=True,
    ),
    Generic(
        framework="torch",
        name="forward-over-reverse",
        mode="forward",
        call="torch.func.jacfwd(torch.func.jacrev(f))(theta, data)",
        description=(
            "The Jacobian of the gradient in forward mode, as torch.func.hessian computes it."
        ),
        code=_FORWARD_OVER_REVERSE,
        order=2,
    ),
    Generic(
        framework="torch",
        name="reverse-over-reverse",
        mode="reverse",
        call="torch.func.jacrev(torch.func.jacrev(f))(theta, data)",
        description="The Jacobian of the gradient in reverse mode, vmapped vjps of vjps.",
        code=_REVERSE_OVER_REVERSE,
        order=2,
    ),
    Generic(
        framework="torch",
        name="hvp-vmap",
        mode="forward",
        call="torch.func.vmap(hvp)(torch.eye(d), theta, data)",
        description=(
            "One Hessian-vector product (jvp of grad) per unit vector, vmapped over the d columns."
        ),
        code=_HVP_VMAP,
        order=2,
    ),
)
