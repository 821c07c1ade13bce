"""A worker's device side: the call it times on a device, and the device memory of each phase.

The device memory is read beside the resident memory (measure.memory), from the framework's
allocator (strategies.devices.DeviceMemory): what it has allocated before the first call, and the
peak of the cold and the warm phase. PyTorch's peak is reset at the start of each phase; JAX has
no reset, so its peak is the process's since it started (the cold phase's includes the inputs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jacbench.measure import heap
from jacbench.strategies import devices


def prepared(raw: Callable[[], Any], framework: str | None, device: str) -> Callable[[], Any]:
    """The call every timed call makes: waiting for the device where the result stays there,
    then trimming the heap where the allocator variant asks for it (heap.trimming)."""
    return heap.trimming(devices.synchronized(raw, framework, device))


def phase(fn: Callable[[], Any], gpu: devices.DeviceMemory | None) -> Callable[[], Any]:
    """fn with the device's peak memory reset first (where there is a device to reset)."""
    if gpu is None:
        return fn

    def run() -> Any:
        gpu.reset()
        return fn()

    return run


def fields(name: str, gpu: devices.DeviceMemory | None) -> dict[str, int]:
    """inputs_device_in_use: device memory allocated before the first call; cold_ and
    warm_device_peak: the peak of that phase. Empty on the CPU."""
    if gpu is None:
        return {}
    if name == "inputs":
        return {"inputs_device_in_use": gpu.in_use()}
    return {f"{name}_device_peak": gpu.peak()}
