"""Chapter 3's tables: the ways to batch reverse mode and the calls that make them, what
vectorized reverse mode holds, what each way did at the question's N, the terminal-only forms
beside the path forms, and each loop against its vectorized form by the book's rule."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.problems.gbm import GBMParams
from jacbench.report import formats
from jacbench.report.chapters.vectorized.facts import (
    TERMINAL,
    Facts,
    LoopPair,
    Run,
    reverse_strategies,
)
from jacbench.strategies import registry

BATCHED = ("loop", "vectorized", "chunked")


def calls(chunk: int = GBMParams().chunk_size) -> pd.DataFrame:
    """One row per batched reverse-mode strategy of the registry (the question's programs and
    the terminal-only forms left out): framework, batching, label and the call it makes."""
    rows = []
    for fw in AD_FRAMEWORKS:
        for name in reverse_strategies(fw):
            s = registry.get(fw, name)
            if s.batching in BATCHED and not s.faithful and not name.endswith(TERMINAL):
                rows.append(
                    {
                        "framework": FRAMEWORK_NAMES[fw],
                        "batching": s.batching,
                        "strategy": name,
                        "call": s.labelled(chunk=chunk),
                    }
                )
    return pd.DataFrame(rows, columns=["framework", "batching", "strategy", "call"])


def held(f: Facts) -> pd.DataFrame:
    """What reverse mode holds at the question's N: one path array, N of them, a chunk of them,
    and the memory model's peak for TensorFlow's default."""
    h = f.held
    rows = [
        ("one path array: one cotangent", h.path_array),
        (f"a chunk of {h.chunk_size:,} path arrays", h.chunk_batch),
        (f"{h.paths:,} path arrays: vectorized", h.batch),
        ("tape.jacobian, predicted peak", h.pfor_predicted),
    ]
    return pd.DataFrame({"held": [r[0] for r in rows], "bytes": [formats.size(r[1]) for r in rows]})


def batches(alive_in_order: int, alive_when_ready: int, f: Facts) -> pd.DataFrame:
    """Batches of N path arrays TensorFlow's pfor holds at once: in two schedules of its traced
    program (strategies.pfor_anatomy), measured at its largest N, and in the memory model."""
    r = f.pfor_largest
    rows = [
        ("one operation at a time, in order", str(alive_in_order)),
        ("ready operations side by side", str(alive_when_ready)),
        (
            f"measured at N = {r.paths:,}" if r else "measured",
            formats.NOT_MEASURED if f.pfor_batches is None else f"{f.pfor_batches:.2f}",
        ),
        ("the memory model", f"{f.held.pfor_model_batches:g}"),
    ]
    return pd.DataFrame({"batches alive": [a for a, _ in rows], "at once": [b for _, b in rows]})


def _outcome(r: Run) -> str:
    """A run's memory beyond the inputs where it ran; else what stopped it."""
    if r.finished:
        return formats.size(r.beyond_inputs)
    if r.status == "skipped-predicted":
        return f"skipped: needs {formats.size(r.predicted)}"
    if r.status == "memory-cap":
        return f"stopped at the {formats.size(r.cap)} cap"
    return formats.NOT_MEASURED if r.status == "not measured" else r.status


def at_question(f: Facts) -> pd.DataFrame:
    """One row per framework and way of batching at the question's N: the strategy, its warm
    call and its memory beyond the inputs, or what stopped it."""
    rows = []
    for fw, runs in f.at_question.items():
        for way, r in runs.items():
            rows.append(
                {
                    "framework": FRAMEWORK_NAMES[fw],
                    "way": "terminal only" if way == "terminal" else way,
                    "strategy": r.name,
                    "warm call": formats.time(r.warm_s),
                    "memory": _outcome(r),
                }
            )
    return pd.DataFrame(rows, columns=["framework", "way", "strategy", "warm call", "memory"])


def terminal(f: Facts, from_n: int = 1000) -> pd.DataFrame:
    """The terminal-only forms beside the path forms at each N from from_n up: each one's
    memory beyond the inputs (or what stopped it) and how many times more the path form held."""
    rows = []
    for t in f.terminals:
        if t.paths >= from_n:
            rows.append(
                {
                    "framework": FRAMEWORK_NAMES[t.framework],
                    "N": formats.count(t.paths),
                    "with the path": _outcome(t.path),
                    "terminal only": _outcome(t.terminal),
                    "path over terminal": formats.times(t.memory_ratio),
                }
            )
    columns = ["framework", "N", "with the path", "terminal only", "path over terminal"]
    return pd.DataFrame(rows, columns=columns)


def _verdict(p: LoopPair, wanted: str) -> str:
    """'vectorized, 2.6×', 'loop, 1.9×' or 'tie', by the book's rule."""
    winner = p.winner(wanted)
    if winner is None:
        return "tie"
    c = p.repeated if wanted == "repeated" else p.one_call
    return f"{winner}, {formats.times(c.factor)}"


def loop_vs_vectorized(f: Facts) -> pd.DataFrame:
    """One row per loop and its vectorized form at each N where both ran: their warm calls,
    the rule's verdict for repeated calls and for one call, and the memory of the vectorized
    form over the loop's."""
    rows = []
    for p in f.loop_pairs:
        rows.append(
            {
                "framework": FRAMEWORK_NAMES[p.framework],
                "loop": p.loop.name,
                "vectorized": p.vectorized.name,
                "N": formats.count(p.paths),
                "warm calls": f"{formats.time(p.loop.warm_s)} / "
                f"{formats.time(p.vectorized.warm_s)}",
                "many calls": _verdict(p, "repeated"),
                "one call": _verdict(p, "cold"),
                "memory ×": formats.times(p.memory_ratio),
            }
        )
    return pd.DataFrame(rows)
