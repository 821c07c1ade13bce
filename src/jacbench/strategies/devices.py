"""Where a strategy's arrays live: placing the inputs on a device, waiting for its queue, bringing
results to the host, and reading its memory.

On the CPU a builder's call returns numpy arrays, as every CPU row was measured: PyTorch's
``.numpy()`` shares the tensor's memory, and JAX's ``np.asarray`` waits for the result. On a GPU
the call leaves its result on the device (:func:`keeps_results`): a copy to the host would add
a transfer the strategy does not need to the time of every call. The worker then waits for the
device's queue inside the timed call (:func:`synchronized`) and brings the result to the host for
the closed-form check outside it (:func:`to_host`).

Nothing here imports a framework until a function that needs one is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jacbench.errors import check_device


def keeps_results(device: str) -> bool:
    """Whether a call on the device leaves its result there (the framework's arrays) instead of
    returning numpy arrays: everywhere but on the CPU."""
    check_device(device)
    return device != "cpu"


def torch_device(device: str):
    """The torch.device of a jacbench device name."""
    import torch

    check_device(device)
    return torch.device(device)


def torch_output(device: str) -> Callable[[Any], Any]:
    """How a PyTorch call hands back a tensor: as numpy on the CPU (sharing its memory), the
    tensor itself, left on the device, on a GPU (keeps_results)."""
    if keeps_results(device):
        return lambda t: t.detach()
    return lambda t: t.detach().numpy()


def jax_device(device: str):
    """The first JAX device of the platform: the CPU, or the first GPU for cuda."""
    import jax

    check_device(device)
    if device == "cpu":
        return jax.devices("cpu")[0]
    try:  # the platform's name, as JAX's CUDA plugin registers it; "gpu" is its older alias
        return jax.devices("cuda")[0]
    except RuntimeError:
        return jax.devices("gpu")[0]


def jax_put(array, device: str):
    """A numpy array (or scalar) as a JAX array on the device. On the CPU, jnp.asarray (on JAX's
    default device: see configure), waited for: the copy is dispatched asynchronously, and
    unwaited it lands in the first call, whose time and memory then hold the inputs' copy (one
    copy of the normals beyond the inputs at N = 10^7, measuring method 3); on a GPU, committed
    to it, so that jitted functions of it run there."""
    import jax
    import jax.numpy as jnp

    if device == "cpu":
        return jnp.asarray(array).block_until_ready()
    return jax.device_put(np.asarray(array), jax_device(device))


def configure(framework: str | None, device: str) -> None:
    """Make the CPU JAX's default device for a cpu case on a machine with a GPU (JAX's default
    there), so that its uncommitted arrays (jax_put) and jitted calls stay on the CPU. Nothing
    changes on a machine without a GPU, nor for a GPU case, whose arrays are committed to it."""
    check_device(device)
    if framework == "jax" and device == "cpu":
        import jax

        if jax.default_backend() != "cpu":
            jax.config.update("jax_default_device", jax_device("cpu"))


def to_host(value: Any) -> Any:
    """A result with every tensor or device array in it as numpy (tuples and NamedTuples kept
    as such); numpy arrays and anything else as they are."""
    if isinstance(value, tuple):
        items = [to_host(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [to_host(v) for v in value]
    if isinstance(value, np.ndarray) or np.isscalar(value) or value is None:
        return value
    if hasattr(value, "detach"):  # a torch.Tensor, on any device
        return value.detach().cpu().numpy()
    if hasattr(value, "block_until_ready"):  # a jax.Array
        return np.asarray(value)
    return value


def synchronizer(framework: str | None, device: str) -> Callable[[Any], None]:
    """What waits until the work that produced a call's result has finished on the device:
    torch.cuda.synchronize() on a GPU (PyTorch on the CPU computes before it returns), JAX's
    block_until_ready on the result (its dispatch is asynchronous on every device), nothing for
    the frameworks that return numpy."""
    check_device(device)
    if framework == "torch" and device != "cpu":
        import torch

        return lambda result: torch.cuda.synchronize()
    if framework == "jax":
        import jax

        return jax.block_until_ready
    return lambda result: None


def synchronized(call: Callable[[], Any], framework: str | None, device: str):
    """The call, waiting for the device before it returns where its result stays on the device
    (keeps_results); the call itself elsewhere, whose numpy result has waited already."""
    if not keeps_results(device):
        return call
    wait = synchronizer(framework, device)

    def synced() -> Any:
        result = call()
        wait(result)
        return result

    return synced


class DeviceMemory:
    """The device memory a worker's framework has allocated: in use now, and the peak since the
    last reset. PyTorch resets its peak (torch.cuda.reset_peak_memory_stats); JAX cannot, so
    its peak is the process's since it started (memory_stats()["peak_bytes_in_use"])."""

    def __init__(self, framework: str, device: str):
        self.framework = framework
        if framework == "torch":
            import torch

            self._cuda = torch.cuda
            self._index = torch_device(device)
        else:
            self._stats = jax_device(device).memory_stats

    @property
    def resets(self) -> bool:
        return self.framework == "torch"

    def reset(self) -> None:
        if self.framework == "torch":
            self._cuda.reset_peak_memory_stats(self._index)

    def in_use(self) -> int:
        if self.framework == "torch":
            return int(self._cuda.memory_allocated(self._index))
        return int((self._stats() or {}).get("bytes_in_use", 0))

    def peak(self) -> int:
        if self.framework == "torch":
            return int(self._cuda.max_memory_allocated(self._index))
        return int((self._stats() or {}).get("peak_bytes_in_use", 0))


def device_memory(framework: str | None, device: str) -> DeviceMemory | None:
    """The device memory of the framework on a GPU; None on the CPU (its memory is the host's,
    measured as resident memory) and for the frameworks that run on the CPU only."""
    check_device(device)
    if device == "cpu" or framework not in ("torch", "jax"):
        return None
    return DeviceMemory(framework, device)
