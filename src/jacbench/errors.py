"""Errors a user can cause; the command line turns them into one line and exit status 2."""

from jacbench.constants import DEVICES, FRAMEWORK_NAMES, GPU_FRAMEWORKS


class UsageError(ValueError):
    """Bad input: an unknown name, a size out of range, an unsupported configuration."""


class UnsupportedConfiguration(UsageError):
    """A strategy that cannot run a given configuration (dtype, problem, size)."""


class Unsupported:
    """What can refuse a problem, dtype or device (a strategy, a second-order method, a measured
    target): ``unsupported`` says why, ``check`` raises it as UnsupportedConfiguration."""

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        """Why this cannot run the problem in the dtype on the device, or None when it can."""
        return None

    def check(self, problem: str, dtype: str, device: str = "cpu") -> None:
        """Raise UnsupportedConfiguration when this cannot run the problem in the dtype on the
        device."""
        reason = self.unsupported(problem, dtype, device)
        if reason:
            raise UnsupportedConfiguration(reason)


def check_device(device: str) -> None:
    """UsageError naming the devices unless this is one of them."""
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r}; choose one of: {', '.join(DEVICES)}")


def device_refusal(what: str, framework: str, device: str) -> str | None:
    """Why what (a strategy's key, a target's name) of the framework cannot run on the device,
    or None when it can: PyTorch and JAX run on a GPU, TensorFlow and numpy on the CPU only."""
    check_device(device)
    if device == "cpu" or framework in GPU_FRAMEWORKS:
        return None
    name = FRAMEWORK_NAMES.get(framework, framework)
    gpu = " and ".join(FRAMEWORK_NAMES[f] for f in GPU_FRAMEWORKS)
    return (
        f"{what} runs on the cpu only, not {device}: jacbench runs {gpu} on a GPU, "
        f"{name} on the CPU only"
    )


class BuildStopped(RuntimeError):
    """Building the book stopped: a notebook failed, jupyter-book reported warnings, or a page
    did not render for the PDF; the command line prints it as one line and exits with 1."""
