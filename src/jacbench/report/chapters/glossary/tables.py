"""The glossary's tables, read from the registries: a label, what it computes, its call."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES
from jacbench.second import registry as second
from jacbench.strategies import registry

# What a strategy computes, by the problems it runs, and a second-order method, by its kind.
PROBLEMS = {"gbm": "tall", "moments": "wide", "moments-batch": "per sample",
            "asian": "tall (an Asian call)"}  # fmt: skip
KINDS = {
    "dense": "Hessian",
    "hvp": "Hessian-vector products",
    "diagonal": "Hessian diagonal",
    "greeks": "second derivatives per path",
}


def strategies(framework: str) -> pd.DataFrame:
    """A framework's Jacobian strategies in the registry's order: label, the Jacobians it
    computes (tall, wide, per sample) and the call it makes."""
    rows = [
        {
            "label": s.name,
            "Jacobian": ", ".join(PROBLEMS[p] for p in s.problems),
            "call": s.call,
        }
        for s in registry.by_framework(framework)
    ]
    return pd.DataFrame(rows, columns=["label", "Jacobian", "call"])


def second_order() -> pd.DataFrame:
    """Every second-order method in the registry's order: framework, label, what it computes
    and the call it makes."""
    rows = [
        {
            "framework": FRAMEWORK_NAMES[m.framework],
            "label": m.name,
            "computes": KINDS[m.kind],
            "call": m.call,
        }
        for m in second.METHODS
    ]
    return pd.DataFrame(rows, columns=["framework", "label", "computes", "call"])
