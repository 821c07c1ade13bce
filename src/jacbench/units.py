"""Reading sizes and byte counts as a user writes them: 1e4, 10000, 10_000; 8GiB, 512MiB."""

from __future__ import annotations

from jacbench.errors import UsageError


def parse_size(text: str | int | float, what: str = "size", minimum: int = 1) -> int:
    """A whole number at least minimum, written 10000, 10_000, 1e4 or 1.5e3; UsageError
    otherwise."""
    if isinstance(text, bool):
        raise UsageError(f"{what} must be a whole number like 1e4 or 10000, got {text!r}")
    if isinstance(text, int):
        value = text
    else:
        s = str(text).strip()
        try:
            value = int(s)
        except ValueError:
            try:
                number = float(s)
            except ValueError:
                number = float("nan")
            if not number.is_integer():
                raise UsageError(
                    f"{what} must be a whole number like 1e4 or 10000, got {text!r}"
                ) from None
            value = int(number)
    if value < minimum:
        raise UsageError(f"{what} must be at least {minimum}, got {text!r}")
    return value


def parse_sizes(text: str | None, what: str) -> list[int] | None:
    """A comma-separated list of sizes (None for no text)."""
    if not text:
        return None
    values = [x.strip() for x in str(text).split(",") if x.strip()]
    return [parse_size(v, what) for v in values] or None


_UNITS = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "k": 10**3, "m": 10**6, "g": 10**9}
_UNITS.update({"kb": 10**3, "mb": 10**6, "gb": 10**9, "b": 1})


def parse_bytes(text: str | int) -> int:
    """'8GiB', '512MiB', '1.5G', '1e9' or an int -> bytes; UsageError otherwise."""
    if isinstance(text, int):
        return text
    low = str(text).strip().lower()
    for suffix in sorted(_UNITS, key=len, reverse=True):
        if low.endswith(suffix):
            number, scale = low[: -len(suffix)], _UNITS[suffix]
            break
    else:
        number, scale = low, 1
    try:
        value = float(number) * scale
    except ValueError:
        raise UsageError(f"cannot read {text!r} as a size (try 8GiB, 512MiB)") from None
    if not value > 0:
        raise UsageError(f"size must be positive, got {text!r}")
    return int(value)
