"""A reader's own function as a problem: ``FUNCTION(theta, data) -> y`` and ``FACTORY(n)``.

The contract (what ``jacbench advise`` takes): theta is a 1-D floating tensor of the d inputs to
differentiate; data is anything passed through unchanged; y is a tensor of m outputs of any
shape, read flattened. ``FACTORY(n)`` builds ``(theta, data)`` at size n and gives the same values
on every call. Both are named ``module:function`` or ``path/to/file.py:function``.

The batched contract (``advise --batch``, problems.batched): theta is a (B, d) tensor of B
samples' inputs, y is led by B (sample b's m' outputs, any trailing shape, read flattened), and
sample b's outputs depend on theta[b] alone; the derivative is the (B, m', d) per-sample
Jacobians. ``FACTORY(n)`` then builds a batch of n samples.

Only :func:`parse_name` and :func:`check_findable` run in the parent (they import nothing of the
reader's); everything else runs in a worker, which imports the reader's module and with it the
framework. The checks here raise :class:`ContractError` with one line a reader can act on.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from jacbench.constants import DTYPES
from jacbench.errors import UsageError

FRAMEWORK_MODULES = {"torch": "torch", "jax": "jax", "jaxlib": "jax", "tensorflow": "tensorflow"}
# A finite-difference check in float64: directions tried (unit vectors while d is at most this),
# and the relative steps of central first and second differences (near eps^(1/3), eps^(1/4)).
FD_DIRECTIONS = 6
FD_STEP = {1: 6e-6, 2: 1e-4}
# An output's derivative agrees with its differences within this, relative to the largest.
FD_AGREE = 1e-3
# How far two calls on the same inputs may differ before the function counts as random.
DETERMINISM_RTOL = 1e-6


class ContractError(UsageError):
    """The reader's function or factory breaks the contract: one line saying how."""


@dataclass(frozen=True)
class Name:
    """A function named ``module:function`` or ``path/to/file.py:function``."""

    where: str  # the module's dotted name, or the file's path
    attr: str

    @property
    def is_file(self) -> bool:
        return self.where.endswith(".py")

    @property
    def text(self) -> str:
        return f"{self.where}:{self.attr}"

    @property
    def module(self) -> str:
        """The name the module is imported as (the file's stem for a path)."""
        return Path(self.where).stem if self.is_file else self.where


def parse_name(text: str, what: str = "FUNCTION") -> Name:
    """The name's parts; UsageError unless it reads module:function or file.py:function."""
    where, sep, attr = str(text).rpartition(":")
    if not (sep and where and attr and attr.isidentifier()):
        raise UsageError(
            f"{what} is named module:function or path/to/file.py:function, got {text!r}"
        )
    return Name(where, attr)


def check_findable(name: Name) -> None:
    """UsageError when the file or the module's top-level package is not there; imports
    nothing (the parent of the workers never imports the reader's framework)."""
    if name.is_file:
        if not Path(name.where).is_file():
            raise UsageError(f"no file {name.where!r} (from {name.text})")
        return
    top = name.where.split(".")[0]
    if not top.isidentifier() or importlib.util.find_spec(top) is None:
        raise UsageError(
            f"no module {name.where!r} (from {name.text}); run from the folder that holds "
            "it, or name the file: path/to/file.py:function"
        )


def load(name: Name) -> Any:
    """The named attribute, its module imported (a file's folder put on the path first, so
    that its own imports work); ContractError when it is not there or not callable."""
    try:
        if name.is_file:
            path = Path(name.where).resolve()
            sys.path.insert(0, str(path.parent))
            module = sys.modules.get(path.stem)
            if module is None or getattr(module, "__file__", None) != str(path):
                spec = importlib.util.spec_from_file_location(path.stem, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[path.stem] = module
                spec.loader.exec_module(module)
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(name.where)
    except ModuleNotFoundError as e:
        raise ContractError(f"{name.text}: {e}") from None
    except Exception as e:  # noqa: BLE001 - the reader's module failed as it imported
        raise ContractError(f"importing {name.where} failed: {type(e).__name__}: {e}") from None
    fn = getattr(module, name.attr, None)
    if fn is None:
        found = [a for a in vars(module) if callable(getattr(module, a)) and a[0] != "_"]
        raise ContractError(
            f"{name.where} has no {name.attr!r}"
            + (f"; its functions: {', '.join(sorted(found)[:8])}" if found else "")
        )
    if not callable(fn):
        raise ContractError(f"{name.text} is not a function but a {type(fn).__name__}")
    return fn


# --- tensors of any of the three frameworks, read without importing the others -----------------


def framework_of(x: Any) -> str | None:
    """torch, jax or tensorflow for a tensor of that framework; None for anything else."""
    top = type(x).__module__.split(".")[0]
    fw = FRAMEWORK_MODULES.get(top)
    if fw == "tensorflow" and not hasattr(x, "dtype"):
        return None  # a Variable or a module, not a tensor
    return fw


def dtype_name(x: Any) -> str:
    """A tensor's dtype as numpy names it (float32), whatever its framework's spelling."""
    text = str(x.dtype)
    match = re.search(r"(b?float\d+|u?int\d+|bool|complex\d+)", text)
    return match.group(1) if match else text


def to_numpy(x: Any) -> np.ndarray:
    """A tensor of any framework as a numpy array (waiting for asynchronous work)."""
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        return np.asarray(x.numpy())
    return np.asarray(x)


def leaves(tree: Any) -> list[Any]:
    """The leaves of nested tuples, lists and dicts, in order."""
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in leaves(tree[k])]
    if isinstance(tree, tuple | list):
        return [leaf for item in tree for leaf in leaves(item)]
    return [tree]


def _map(tree: Any, fn) -> Any:
    if isinstance(tree, dict):
        return {k: _map(v, fn) for k, v in tree.items()}
    if isinstance(tree, tuple | list):
        return type(tree)(_map(v, fn) for v in tree)
    return fn(tree)


def rows_of(data: Any) -> int | None:
    """The leading dimension of data's largest tensor (by entries, the first of those tied):
    its rows, the paths or samples, not the rows of a weight matrix passed beside them (None
    without a tensor of at least one dimension)."""
    tensors = [x for x in leaves(data) if framework_of(x) and len(tuple(x.shape)) >= 1]
    if not tensors:
        return None
    largest = max(tensors, key=lambda x: int(np.prod(tuple(x.shape))))
    return int(largest.shape[0])


def as_float64(tree: Any, framework: str) -> Any:
    """The tensors of tree whose dtype is floating, in float64 (the rest unchanged)."""

    def cast(x):
        if framework_of(x) is None or "float" not in str(x.dtype):
            return x
        if framework == "torch":
            return x.double()
        if framework == "jax":
            return x.astype("float64")
        import tensorflow as tf

        return tf.cast(x, tf.float64)

    return _map(tree, cast)


def shift(theta: Any, v: np.ndarray, h: float, framework: str) -> Any:
    """theta + h v, in theta's framework and dtype."""
    step = (h * v).astype(to_numpy(theta).dtype)
    if framework == "torch":
        import torch

        return theta + torch.as_tensor(step, device=theta.device)
    if framework == "jax":
        return theta + step
    return theta + step  # a tf.Tensor plus a numpy array of its dtype


# --- the case a worker measures ------------------------------------------------------------------


@dataclass(frozen=True)
class UserParams:
    """The reader's function and factory, the size n, and what is differentiated."""

    function: str = ""
    factory: str = ""
    n: int = 1000
    order: int = 1  # 1: the Jacobian; 2: the Hessian of a one-output function
    reference: str = ""  # a .npy of the reference derivative at this n, to check against
    dtype: str = "float32"  # theta's, as the probe found it (the tolerance of the checks)
    batch: bool = False  # theta (B, d) of B samples, the derivative (B, m', d) (problems.batched)

    def validate(self) -> UserParams:
        parse_name(self.function, "FUNCTION")
        parse_name(self.factory, "FACTORY")
        if self.n < 1:
            raise UsageError(f"a size n must be at least 1, got {self.n}")
        if self.order not in (1, 2):
            raise UsageError(f"order is 1 (Jacobian) or 2 (Hessian), got {self.order}")
        if self.dtype not in DTYPES:
            raise UsageError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.batch and self.order != 1:
            raise UsageError("--batch takes per-sample Jacobians, not Hessians (--hessian)")
        return self


@dataclass(frozen=True)
class UserCase:
    params: UserParams
    f: Any = field(repr=False)
    theta: Any = field(repr=False)
    data: Any = field(repr=False)
    framework: str = ""
    d: int = 0
    m: int = 0
    reference: np.ndarray | None = field(default=None, repr=False)
    batch: int = 0  # B, the samples of a batched function (d and m then a sample's); 0 if not

    problem = "user"

    @property
    def shape(self) -> tuple[int, ...]:
        """The derivative's shape: (m, d), (d, d) for a Hessian, (B, m, d) for a batch."""
        if self.batch:
            return (self.batch, self.m, self.d)
        return (self.d, self.d) if self.params.order == 2 else (self.m, self.d)


def example(params: UserParams) -> tuple[Any, Any, Any, str]:
    """(f, theta, data, framework) at the params' n, theta checked; ContractError if not."""
    f = load(parse_name(params.function, "FUNCTION"))
    factory = load(parse_name(params.factory, "FACTORY"))
    try:
        made = factory(params.n)
    except Exception as e:  # noqa: BLE001 - the reader's factory failed
        raise ContractError(f"FACTORY({params.n}) raised {type(e).__name__}: {e}") from None
    if not (isinstance(made, tuple | list) and len(made) == 2):
        got = f"a {type(made).__name__}" + (f" of {len(made)}" if hasattr(made, "__len__") else "")
        raise ContractError(f"FACTORY(n) must return (theta, data), got {got}")
    theta, data = made
    framework = framework_of(theta)
    if framework is None:
        raise ContractError(
            f"theta must be a torch, jax or tensorflow tensor, got a {type(theta).__name__}"
        )
    shape = tuple(theta.shape)
    if params.batch and len(shape) != 2:
        raise ContractError(
            f"with --batch, theta must be a 2-D tensor (B, d) of B samples' inputs, "
            f"got shape {shape}"
        )
    if not params.batch and len(shape) != 1:
        raise ContractError(
            f"theta must be a 1-D tensor of the inputs, got shape {shape}; "
            "for per-sample Jacobians of a batch, theta (B, d), pass --batch"
        )
    if dtype_name(theta) not in DTYPES:
        raise ContractError(f"theta must be {' or '.join(DTYPES)}, got {dtype_name(theta)}")
    return f, theta, data, framework


def fast(f: Any, framework: str) -> Any:
    """f as the checks call it: under jax.jit in JAX (an eager JAX function dispatches, and
    first compiles, each operation alone: a loop of 52 steps took a minute), f itself where
    jit cannot trace it; f itself elsewhere."""
    if framework != "jax":
        return f
    import jax

    compiled = jax.jit(f)

    def call(theta, data):
        try:
            return compiled(theta, data)
        except jax.errors.ConcretizationTypeError:  # a Python branch on a traced value
            return f(theta, data)

    return call


def evaluate(f: Any, theta: Any, data: Any) -> np.ndarray:
    """f(theta, data) flattened, as numpy; ContractError unless it is a finite tensor."""
    try:
        y = f(theta, data)
    except Exception as e:  # noqa: BLE001 - the reader's function failed
        raise ContractError(f"FUNCTION(theta, data) raised {type(e).__name__}: {e}") from None
    if framework_of(y) is None:
        raise ContractError(f"FUNCTION must return a tensor of outputs, got a {type(y).__name__}")
    out = to_numpy(y).reshape(-1)
    bad = int(np.sum(~np.isfinite(out)))
    if bad:
        raise ContractError(f"FUNCTION returned {bad} NaN or infinite values of {out.size}")
    return out


def make_case(params: UserParams, device: str = "cpu") -> UserCase:
    """The example at size n, ready to differentiate (the checks of :func:`probe` assumed)."""
    if device != "cpu":
        raise UsageError(f"a reader's function runs on the cpu only here, not {device}")
    f, theta, data, framework = example(params)
    batch = int(theta.shape[0]) if params.batch else 0
    d = int(theta.shape[-1])
    m = int(evaluate(f, theta, data).size) // max(batch, 1)
    ref = np.load(params.reference) if params.reference else None
    return UserCase(params, f, theta, data, framework, d, m, ref, batch)


def relative_error(result: np.ndarray, reference: np.ndarray) -> float:
    """Largest absolute difference over the largest entry of the reference."""
    scale = float(np.max(np.abs(reference))) or 1.0
    return float(np.max(np.abs(np.asarray(result, dtype=np.float64) - reference)) / scale)
