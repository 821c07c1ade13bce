"""Errors a user can cause; the command line turns them into one line and exit status 2."""


class UsageError(ValueError):
    """Bad input: an unknown name, a size out of range, an unsupported configuration."""


class UnsupportedConfiguration(UsageError):
    """A strategy that cannot run a given configuration (dtype, problem, size)."""


class Unsupported:
    """What can refuse a problem or dtype (a strategy, a second-order method, a measured target):
    ``unsupported`` says why, ``check`` raises it as UnsupportedConfiguration."""

    def unsupported(self, problem: str, dtype: str) -> str | None:
        """Why this cannot run the problem in the dtype, or None when it can."""
        return None

    def check(self, problem: str, dtype: str) -> None:
        """Raise UnsupportedConfiguration when this cannot run the problem in the dtype."""
        reason = self.unsupported(problem, dtype)
        if reason:
            raise UnsupportedConfiguration(reason)


class BuildStopped(RuntimeError):
    """Building the book stopped: a notebook failed, jupyter-book reported warnings, or a page
    did not render for the PDF; the command line prints it as one line and exits with 1."""
