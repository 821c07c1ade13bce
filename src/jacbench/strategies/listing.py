"""The registry as the command line lists it: a text table or JSON records (jacbench strategies)."""

from __future__ import annotations

import json
from dataclasses import asdict

from jacbench.strategies.registry import STRATEGIES, Strategy


def record(s: Strategy) -> dict:
    """Plain JSON-ready fields."""
    d = asdict(s)
    d["entries"] = {p: s.entry(p) for p in s.problems}
    d["dtypes"] = list(s.dtypes)
    d["problems"] = list(s.problems)
    d["memory"] = asdict(s.memory)
    return d


def listing(as_json: bool = False) -> str:
    """Every strategy as a text table (or JSON records): the strategies command."""
    if as_json:
        return json.dumps([record(s) for s in STRATEGIES], indent=2)
    rows = [("framework", "name", "form", "mode", "batching", "compiled", "dtypes", "description")]
    for s in STRATEGIES:
        compiled = s.engine if s.compiled else "no"
        rows.append((s.framework, s.name, s.form, s.mode, s.batching, compiled,
                     ",".join(s.dtypes), s.description))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(7)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[7] for r in rows
    )
