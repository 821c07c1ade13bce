"""The machines a results file's rows were measured on, and the rule that a ratio or a ranking
reads rows of one machine only.

Every row carries its machine's fingerprint (the ``env`` column: a hash of the CPU, cores,
memory, GPU and library versions, measure.environment.fingerprint). The metadata sidecar
describes the machine of a local sweep at its top level and, after a sweep on a cluster, every
machine under ``machines`` (measure.cluster_sweep). A machine is named by its CPU, cores and
memory, and by its fingerprint where two share those.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from jacbench.errors import UsageError


class MixedMachines(UsageError):
    """Rows of two machines asked for in one ratio or ranking."""


def known(meta: Mapping) -> dict[str, Mapping]:
    """Each machine the sidecar describes, by fingerprint."""
    found: dict[str, Mapping] = dict(meta.get("machines") or {})
    if meta.get("environment_key"):
        found.setdefault(str(meta["environment_key"]), meta)
    return found


def describe(env: Mapping) -> str:
    """'AMD EPYC, 2 cores, 24 GiB' (and the GPU where there is one); '' where none is known."""
    parts = [str(env["cpu"])] if env.get("cpu") else []
    if env.get("cores"):
        parts.append(f"{env['cores']} cores")
    if env.get("ram_bytes"):
        parts.append(f"{int(env['ram_bytes']) / 2**30:.0f} GiB")
    if env.get("gpu"):
        parts.append(str(env["gpu"]))
    return ", ".join(parts)


def names(meta: Mapping, keys) -> dict[str, str]:
    """A name for each fingerprint in keys: its description, with the fingerprint in brackets
    where two machines share a description, or the fingerprint alone where none is known."""
    machines = known(meta)
    told = {k: describe(machines.get(k, {})) for k in keys}
    shared = {d for d in told.values() if list(told.values()).count(d) > 1}
    return {k: (f"{d} [{k}]" if d in shared else d) if d else k for k, d in told.items()}


def of(df: pd.DataFrame) -> list[str]:
    """The fingerprints of the machines the rows were measured on, in order of first row."""
    return list(dict.fromkeys(str(e) for e in df["env"].dropna()))


def one_machine(df: pd.DataFrame, what: str) -> None:
    """MixedMachines (one line naming the first two machines) where the rows come from more
    than one machine: what (a pick, a ratio) compares rows of one machine only."""
    keys = of(df)
    if len(keys) < 2:
        return
    named = names(df.attrs.get("meta") or {}, keys)
    more = f" and {len(keys) - 2} more" if len(keys) > 2 else ""
    raise MixedMachines(
        f"{what} compares rows of one machine, and these rows come from {named[keys[0]]} and "
        f"{named[keys[1]]}{more}: read one machine's rows (df[df['env'] == KEY])"
    )


def same_machine(a: pd.Series, b: pd.Series, what: str = "a comparison") -> None:
    """MixedMachines where two rows were measured on different machines."""
    x, y = a.get("env"), b.get("env")
    if pd.notna(x) and pd.notna(y) and x != y:
        raise MixedMachines(
            f"{what} compares rows of one machine, and these come from machine {x} and machine {y}"
        )
