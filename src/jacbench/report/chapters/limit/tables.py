"""Chapter 5's tables: one read of the normals by N, each framework's fastest Jacobian of each
form against it, every way to differentiate the loop, what the compilers make of each form,
the loops that draw their own normals, and the Asian payoff."""

from __future__ import annotations

import pandas as pd

from jacbench.constants import AD_FRAMEWORKS, FRAMEWORK_NAMES
from jacbench.report import formats
from jacbench.report.chapters.limit.facts import HELD_N, TABLE_N, Facts
from jacbench.strategies import registry

FORM_NAMES = {"array": "whole array", "steps": "loop over the steps"}


def _fold(x: float | None) -> str:
    return "–" if formats.missing(x) else formats.fold(x)


def reads(f: Facts) -> pd.DataFrame:
    """One read of the normals at each N: numpy's sum over the steps (the limit) and each
    framework's own compiled sum."""
    ns = sorted(f.reads)
    table = {
        "paths N": [formats.count(n) for n in ns],
        "numpy (the limit)": [formats.time(f.reads[n]) for n in ns],
    }
    for fw in AD_FRAMEWORKS:
        own = [f.own_reads.get((fw, n)) for n in ns]
        table[FRAMEWORK_NAMES[fw]] = ["–" if s is None else formats.time(s) for s in own]
    return pd.DataFrame(table)


def forms(f: Facts, n: int = TABLE_N) -> pd.DataFrame:
    """Each framework's fastest Jacobian of each form at N: time, times one read, first call
    and memory beyond the inputs."""
    rows = [
        b for fw in AD_FRAMEWORKS for form in registry.FORMS if (b := f.of(fw, form, n)) is not None
    ]
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[b.framework] for b in rows],
            "form": [FORM_NAMES[b.form] for b in rows],
            "fastest": [b.name for b in rows],
            "warm call": [formats.time(b.warm_s) for b in rows],
            "× one read": [_fold(b.over_read) for b in rows],
            "first call": [formats.time(b.cold_s) for b in rows],
            "beyond the inputs": [formats.size(b.beyond_inputs) for b in rows],
        }
    )


def steps(f: Facts) -> pd.DataFrame:
    """Every strategy and simulation over the steps at TABLE_N: how it runs, its time against
    one read and (a strategy) against its loop's simulation, side by side."""
    order = lambda s: (AD_FRAMEWORKS.index(s.framework), s.target != "simulation", s.warm_s)  # noqa: E731
    rows = sorted(f.steps, key=order)
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[s.framework] for s in rows],
            "strategy": [
                s.name if s.target == "strategy" else f"simulation {s.name}" for s in rows
            ],
            "compiled": ["yes" if s.compiled else "no" for s in rows],
            "warm call": [formats.time(s.warm_s) for s in rows],
            "× one read": [_fold(s.over_read) for s in rows],
            "× its loop": [_fold(s.ratio) for s in rows],
            "first call": [formats.time(s.cold_s) for s in rows],
            "beyond the inputs": [formats.size(s.beyond_inputs) for s in rows],
        }
    )


def anatomy(programs) -> pd.DataFrame:
    """What each framework's compiler makes of forward mode of each form (form_anatomy): the
    arrays of N values or more its program allocates, and how many hold a path's worth."""
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[p.framework] for p in programs],
            "strategy": [p.strategy for p in programs],
            "arrays of N values or more": [len(p.arrays) for p in programs],
            "of them, M × N or more": [p.path_arrays for p in programs],
            "largest (values)": [formats.count(p.largest) for p in programs],
        }
    )


def drawn(f: Facts, n: int) -> pd.DataFrame:
    """The loops drawing their own normals at N: the Jacobian's call, its first call and the
    whole process's peak."""
    rows = f.drawn_at(n)
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[d.framework] for d in rows],
            "strategy": [d.name for d in rows],
            "warm call": [formats.time(d.warm_s) for d in rows],
            "peak, whole process": [formats.size(d.peak) for d in rows],
        }
    )


def asian(f: Facts) -> pd.DataFrame:
    """The Asian call's fastest Jacobian of each form in each framework at TABLE_N."""
    keys = [(fw, form) for fw in AD_FRAMEWORKS for form in registry.FORMS if (fw, form) in f.asian]
    rows = [f.asian[k] for k in keys]
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[fw] for fw, _ in keys],
            "form": [FORM_NAMES[form] for _, form in keys],
            "strategy": [s.name for s in rows],
            "warm call": [formats.time(s.warm_s) for s in rows],
            "beyond the inputs": [formats.size(s.beyond_inputs) for s in rows],
        }
    )


def held(f: Facts, carries: dict[str, str]) -> pd.DataFrame:
    """Each framework's carried tangent at HELD_N: a warm call's own peak, the first call's
    peak beyond the inputs, its growth a path from TABLE_N, and the framework's copy of the
    normals made with the inputs (what making the inputs took)."""
    rows = [(fw, name, f.step(fw, name, HELD_N)) for fw, name in carries.items()]
    return pd.DataFrame(
        {
            "framework": [FRAMEWORK_NAMES[fw] for fw, _, _ in rows],
            "strategy": [name for _, name, _ in rows],
            "a warm call holds": [formats.size(t and t.call_held) for *_, t in rows],
            "first call, beyond the inputs": [
                formats.size(t and t.beyond_inputs) for *_, t in rows
            ],
            "first call's growth, bytes a path": [
                formats.decimal(f.per_path(fw, name)) for fw, name, _ in rows
            ],
            "making the inputs took": [formats.size(t and t.inputs_held) for *_, t in rows],
        }
    )
