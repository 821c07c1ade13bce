"""The advice for a function of a batch (``--batch``), and the hint where a dense one is one.

With ``--batch`` the advice measures the batched records (strategies.generic.batched), each
giving the (B, m', d) per-sample Jacobians, and beside them the framework's plain reverse loop
over the flattened batch: the dense matrix a reader who flattens the batch into theta computes.
Without it, where the probe found the Jacobian block-diagonal (problems.batched), the summary
says so in one line.
"""

from __future__ import annotations

from collections.abc import Mapping

from jacbench.report.advice import Advice, Batch
from jacbench.strategies import generic


def records(framework: str) -> list[generic.Generic]:
    """What a batched request measures: the batched records, then the plain reverse loop."""
    return [*generic.all_records(framework, 1, batched=True), generic.reference(framework, 1)]


def fields(found: Mapping) -> tuple[Batch | None, int | None, tuple[int, int] | None]:
    """What advice.json keeps of the probe's batch (batch, blocks, block_shape): B and a
    sample's inputs and outputs with --batch; without, the diagonal blocks the Jacobian was
    found to have (None: none)."""
    batch, shape = found.get("batch"), found.get("block_shape")
    return (None if batch is None else Batch.from_json(batch), found.get("blocks"),
            None if shape is None else tuple(shape))  # fmt: skip


def summary(advice: Advice) -> list[str]:
    """The line that says a dense Jacobian is block-diagonal, and what to do instead."""
    count = advice.blocks
    if not count:
        return []
    m, d = advice.block_shape
    return [
        f"the Jacobian at n={advice.sizes[0]:,} is block-diagonal, {count:,} blocks of "
        f"{m:,}×{d:,}, so the dense strategies compute mostly zeros; rerun with --batch "
        f"(theta shaped ({count:,}, {d:,})) for per-sample Jacobians"
    ]
