"""Chapter 2's tables: the teaching example's tape, and each framework's forward mode beside
its reverse mode at one N."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.report import formats
from jacbench.report.chapters.modes.facts import Facts, Pair
from jacbench.strategies import registry
from jacbench.teaching import tape


def _longer(p: Pair) -> str:
    """How many times longer reverse mode took ('152×'), 'tie', or why there is no figure."""
    if p.comparison is None:
        return formats.NOT_MEASURED
    if p.comparison.tied:
        return "tie"
    return formats.fold(p.comparison.factor) if p.forward_wins else "reverse faster"


def costs(f: Facts) -> pd.DataFrame:
    """One row per framework: its forward and reverse calls, their warm times, how many times
    longer reverse mode took (by the book's rule) and that against N/2, and the memory each
    held beyond the inputs."""
    rows = []
    for fw, p in f.pairs.items():
        share = None if p.factor is None else p.factor / f.half_n
        rows.append(
            {
                "framework": FRAMEWORK_NAMES[fw],
                "forward mode": registry.get(fw, p.forward.name).labelled(),
                "reverse mode": registry.get(fw, p.reverse.name).labelled(),
                "warm, forward / reverse": f"{formats.time(p.forward.warm_s)} / "
                f"{formats.time(p.reverse.warm_s)}",
                "reverse took": _longer(p),
                "against N/2": formats.times(share, digits=2),
                "memory, forward / reverse": f"{formats.size(p.forward.beyond_inputs)} / "
                f"{formats.size(p.reverse.beyond_inputs)}",
            }
        )
    return pd.DataFrame(rows)


def tape_entries(t: tape.Tape, inputs: tuple[str, ...] = ("S0", "σ")) -> pd.DataFrame:
    """One row per operation a tape recorded: its name, the inputs its output depends on (named
    in the order the function takes them), its output's shape and the bytes of local
    derivatives kept for the backward pass."""
    depends = tape.depends_on(t)
    rows = [
        {
            "#": i + 1,
            "operation": op,
            "depends on": ", ".join(inputs[int(x[1:])] for x in depends[i]) or "–",
            "output shape": str(np.shape(out.value)),
            "bytes kept": sum(np.asarray(local).nbytes for _, local in parents),
        }
        for i, (op, out, parents) in enumerate(t.entries)
    ]
    columns = ["#", "operation", "depends on", "output shape", "bytes kept"]
    return pd.DataFrame(rows, columns=columns)
