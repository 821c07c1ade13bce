"""Errors a user can cause; the command line turns them into one line and exit status 2."""


class UsageError(ValueError):
    """Bad input: an unknown name, a size out of range, an unsupported configuration."""


class UnsupportedConfiguration(UsageError):
    """A strategy that cannot run a given configuration (dtype, problem, size)."""
