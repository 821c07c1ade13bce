"""The advice for a function of a batch (``--batch``), and the hint where a dense one is one.

With ``--batch`` the advice measures the batched records (strategies.generic.batched), each
giving the (B, m', d) per-sample Jacobians, and beside them the framework's plain reverse loop
over the flattened batch: the dense matrix a reader who flattens the batch into theta computes.
Without it, where the probe found the Jacobian block-diagonal (problems.batched), the summary
says so in one line.
"""

from __future__ import annotations

from typing import Any

from jacbench.strategies import generic


def records(framework: str) -> list[generic.Generic]:
    """What a batched request measures: the batched records, then the plain reverse loop."""
    return [*generic.all_records(framework, 1, batched=True), generic.reference(framework, 1)]


def fields(found: dict[str, Any]) -> dict[str, Any]:
    """What advice.json keeps of the probe's batch: B and a sample's inputs and outputs with
    --batch; without, the diagonal blocks the Jacobian was found to have (None: none)."""
    return {k: found.get(k) for k in ("batch", "blocks", "block_shape")}


def summary(advice: dict[str, Any]) -> list[str]:
    """The line that says a dense Jacobian is block-diagonal, and what to do instead."""
    count = advice.get("blocks")
    if not count:
        return []
    m, d = advice["block_shape"]
    return [
        f"the Jacobian at n={advice['sizes'][0]:,} is block-diagonal, {count:,} blocks of "
        f"{m:,}×{d:,}, so the dense strategies compute mostly zeros; rerun with --batch "
        f"(theta shaped ({count:,}, {d:,})) for per-sample Jacobians"
    ]
