"""Chapter 1's tables: each of the question's observations beside the same program measured
here, and the one-argument fix beside the program."""

from __future__ import annotations

import pandas as pd

from jacbench.report import formats
from jacbench.report.chapters.question.facts import ABOUT, ABOUT_MEMORY, REPORTED, Facts, Program


def outcome(p: Program | None) -> str:
    """A program's first call and peak, or what stopped it: '55.22 s, 259.2 MiB'."""
    if p is None:
        return formats.NOT_MEASURED
    if p.finished:
        return f"{formats.duration(p.first_s)}, {formats.size(p.peak)}"
    if p.status == "memory-cap":
        return f"stopped at {formats.size(p.cap)} after {formats.duration(p.ran_s)}"
    return p.status


def alike(
    measured: float | None, reported: float, less: str, more: str, within: float = ABOUT
) -> str:
    """'yes' where measured is within a factor of reported, else which way it is off; '–'."""
    if measured is None:
        return "–"
    if measured * within < reported:
        return less
    if measured > reported * within:
        return more
    return "yes"


def _memory(f: Facts, allocator: str) -> str:
    if f.stopped(allocator):
        return "grew to the cap"
    flat = f.flat(allocator)
    return "–" if flat is None else ("yes, flat" if flat else "grows")


def observations(f: Facts) -> pd.DataFrame:
    """One row per observation: what the question saw, what was measured here (first call and
    the process's peak, or what stopped it), and whether each is alike within ABOUT."""
    rows = []
    small = {
        "PyTorch": ("torch", f.torch_small.get("glibc")),
        "TensorFlow": ("tensorflow", f.tensorflow_small),
    }
    for name, (fw, p) in small.items():
        mb = REPORTED["small_mb"][fw]
        rows.append(
            {
                "program": f"{name}, N = {f.small_n:,}",
                "the question saw": f"about 1 s, {mb} MB",
                "measured here": outcome(p),
                "time alike?": alike(p and p.first_s, REPORTED["small_s"], "faster", "slower"),
                "memory alike?": alike(
                    p and p.peak and p.peak / 1e6, mb, "less", "more", ABOUT_MEMORY
                ),
            }
        )
    for allocator, p in f.torch.items():
        first = p.first_s if p is not None and p.finished else None
        rows.append(
            {
                "program": f"PyTorch, N = {f.n:,}, {allocator}",
                "the question saw": "about 1 min, memory flat",
                "measured here": outcome(p),
                "time alike?": alike(first, REPORTED["big_s"], "faster", "slower"),
                "memory alike?": _memory(f, allocator),
            }
        )
    rows.append(
        {
            "program": f"TensorFlow, N = {f.n:,}",
            "the question saw": f"out of {REPORTED['fail_gb']} GB after minutes",
            "measured here": outcome(f.tensorflow),
            "time alike?": "–",
            "memory alike?": "yes, out of memory" if f.tensorflow_out_of_memory else "no",
        }
    )
    return pd.DataFrame(rows)


def fix_beside(f: Facts) -> pd.DataFrame:
    """The one-argument fix beside the question's program under each allocator, at N: first
    call, warm call, peak beyond the inputs."""
    rows = [("the fix, glibc", f.fix)] + [(f"the program, {a}", p) for a, p in f.torch.items()]
    out = []
    for what, p in rows:
        done = p is not None and p.finished
        out.append(
            {
                "PyTorch": what,
                "first call": formats.duration(p.first_s) if done else outcome(p),
                "warm call": formats.duration(p.warm_s) if done else "–",
                "beyond the inputs": formats.size(p.beyond_inputs) if done else "–",
            }
        )
    return pd.DataFrame(out)
