"""The method chapter's tables: the harness's settings, the sessions, the margins, the
allocators, what glibc kept, what mappings cost, YNNPACK, and the machine."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jacbench.constants import FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.report import formats
from jacbench.report.chapters.method.facts import Facts

# The machine and software fields of a results file's metadata, as the table lists them.
MACHINE = (
    "python",
    "numpy",
    "torch",
    "tensorflow",
    "jax",
    "jaxlib",
    "cpu",
    "cpu_detail",
    "cores",
    "ram_bytes",
    "jemalloc",
    "git_commit",
    "date",
    "environment_key",
)


def settings(f: Facts) -> pd.DataFrame:
    """What the harness does with every case, and what it did to these rows."""
    s = f.settings
    sizes = formats.listing([formats.count(n) for n in s.worker_sizes])
    several = f"{s.workers}, at N = {sizes}" if s.worker_sizes else "1"
    long, within = formats.time(s.long_call_s), formats.time(s.pairs_within_s)
    rows = [
        ("memory cap of most workers", formats.size(s.mem_cap)),
        ("skipped when the model predicts more than", f"{s.skip_above:g}× the cap"),
        ("warm calls, at least", f"{s.min_calls}, unless a call takes {long}"),
        ("pairs, at least", f"{s.min_calls}, and {s.min_pairs} while they take under {within}"),
        ("a side of a pair settled below", formats.time(s.settle_below_s)),
        ("workers timing a ratio", several),
        ("more workers only for calls under", formats.time(s.several_below_s)),
        ("never ranked below", formats.time(s.floor_s)),
        ("cases skipped on the model's word", formats.count(s.skipped)),
        ("cases stopped by the cap", formats.count(s.capped)),
    ]
    return pd.DataFrame(rows, columns=["setting", "value"])


SESSION_NAMES = {
    "reference": "reference dataset",
    "this": "this build's",
    "second": "second",
    "third": "third",
}


def sessions(f: Facts) -> pd.DataFrame:
    """One row per measuring session."""
    rows = [
        {
            "session": SESSION_NAMES.get(s.which, s.which),
            "file": s.file,
            "finished": s.finished or "–",
            "rows": formats.count(s.rows),
            "N": formats.listing([formats.count(n) for n in s.sizes])
            if len(s.sizes) < 4
            else formats.span(s.sizes, formats.count),
            "processor": s.processor or "not recorded",
            "cases shared": formats.count(s.matched) if i else "–",
        }
        for i, s in enumerate(f.sessions)
    ]
    return pd.DataFrame(rows)


def margins(f: Facts) -> pd.DataFrame:
    """Per framework, how far each quantity moved between sessions: the margins."""
    m = f.margins
    rows = [
        {
            "framework": FRAMEWORK_NAMES[fw],
            "cases compared": formats.count(f.matched.get(fw, 0)),
            "ratio side by side": formats.times(m.ratio[fw], 2),
            "warm median": formats.times(m.warm[fw], 2),
            "first call": formats.times(m.cold[fw], 2),
        }
        for fw in FRAMEWORKS
    ]
    return pd.DataFrame(rows)


def _outcome(status: str, warm_s, cap) -> str:
    if status == "ok":
        return formats.time(warm_s)
    return f"cap ({formats.size(cap)})" if status == "memory-cap" else status


def allocators(f: Facts) -> pd.DataFrame:
    """PyTorch's strategies under each allocator, at the two sizes the chapter reads."""
    rows = [
        {
            "N": formats.count(r.paths),
            "strategy": r.strategy,
            "allocator": r.allocator,
            "warm call": _outcome(r.status, r.warm_s, r.cap),
            "beyond the inputs": formats.size(r.beyond_inputs),
        }
        for r in f.allocators.runs
    ]
    return pd.DataFrame(
        rows, columns=["N", "strategy", "allocator", "warm call", "beyond the inputs"]
    )


def experiment(f: Facts) -> pd.DataFrame:
    """What glibc's malloc held after the warm calls, under glibc and its two variants."""
    runs = f.experiment.runs if f.experiment is not None else ()
    rows = [
        {
            "N": formats.count(h.paths),
            "strategy": h.strategy,
            "allocator": h.allocator,
            "warm call": formats.time(h.warm_s),
            "beyond the inputs": formats.size(h.beyond_inputs),
            "in use after": formats.size(h.in_use),
            "freed and kept": formats.size(h.kept),
        }
        for h in runs
    ]
    return pd.DataFrame(rows)


def _pair(values, fmt) -> str:
    return " / ".join(fmt(v) for v in values)


def mapped(f: Facts) -> pd.DataFrame:
    """Each case under glibc beside the same case with no block a mapping of its own."""
    rows = [
        {
            "framework": FRAMEWORK_NAMES[m.framework],
            "case": f"{m.name} simulation" if m.simulation else m.name,
            "N": formats.count(m.paths),
            "warm call": _pair(m.warm_s, formats.time),
            "page faults a call": _pair(
                m.faults, lambda v: formats.count(None if v is None else round(v))
            ),
            "ratio side by side": _pair(m.ratio, lambda v: formats.times(v, 2)),
            "beyond the inputs": _pair(m.beyond_inputs, formats.size),
        }
        for m in f.faults.mapped
    ]
    return pd.DataFrame(rows)


def ynn(f: Facts) -> pd.DataFrame:
    """JAX's per-path second derivatives as installed and with YNNPACK's fusion off."""
    rows = f.ynn.rows if f.ynn is not None else ()
    out = [
        {
            "dtype": r.dtype,
            "N": formats.count(r.paths),
            "as installed": formats.time(r.warm_s[0]),
            "YNNPACK off": formats.time(r.warm_s[1]),
            "page faults, installed": formats.count(r.faults[0]),
            "page faults, off": formats.count(r.faults[1]),
        }
        for r in rows
    ]
    return pd.DataFrame(out)


def machine(meta: dict) -> pd.DataFrame:
    """The machine and software the metadata records; a library by its file name only."""
    values = [meta.get(k, "–") for k in MACHINE]
    values = [Path(v).name if isinstance(v, str) and v.startswith("/") else v for v in values]
    values = [
        formats.size(v) if k == "ram_bytes" and isinstance(v, int) else v
        for k, v in zip(MACHINE, values, strict=True)
    ]
    return pd.DataFrame({"field": MACHINE, "value": [str(v) for v in values]})
