"""Profiles: YAML files that name groups of cases; expanded, with overrides, into cases.

A profile is checked whole before anything runs: unknown keys, frameworks, problems and
strategies, and unreadable YAML, are one UsageError naming what is wrong and what is valid.
"""

from __future__ import annotations

import itertools
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from jacbench.constants import DTYPES, FRAMEWORKS, PROBLEMS
from jacbench.errors import UsageError, check_device, device_refusal
from jacbench.measure import harness
from jacbench.measure.case import Case
from jacbench.measure.targets import CallableTarget, Target, parse
from jacbench.strategies import registry
from jacbench.units import parse_bytes, parse_size

CALLABLE = CallableTarget.kind  # the "framework" of a group of callables
# What each part of a profile may hold.
TOP_KEYS = ("name", "jobs", "defaults", "groups", "crossover")
GROUP_KEYS = ("problem", "frameworks", "strategies", "exclude", "paths", "inputs", "batch",
              "steps", "dtypes", "chunk_size", "threads", "allocators", "mem_cap", "timeout",
              "repeats", "warm_budget_s", "ratio_processes", "run_despite_model",
              "device")  # fmt: skip
CROSSOVER_KEYS = ("total", "steps", "side", "repeats", "warm_budget_s", "threads", "frameworks",
                  "mem_cap", "timeout", "jobs")  # fmt: skip
OVERRIDE_KEYS = ("frameworks", "strategies", "paths", "inputs", "problems", "allocators",
                 "mem_cap", "timeout", "threads", "device")  # fmt: skip


def profile_names() -> list[str]:
    files = resources.files("jacbench") / "profiles"
    return sorted(p.name[:-5] for p in files.iterdir() if p.name.endswith(".yaml"))


def load_profile(name_or_path: str) -> dict:
    """A profile by name (shipped with jacbench) or by path to a YAML file, checked."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        text = path.read_text()
    elif name_or_path in profile_names():
        text = (resources.files("jacbench") / "profiles" / f"{name_or_path}.yaml").read_text()
    else:
        raise UsageError(
            f"unknown profile {name_or_path!r}; choose one of: {', '.join(profile_names())} "
            "or give a path to a .yaml file"
        )
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(e, "problem", None) or type(e).__name__
        raise UsageError(f"profile {name_or_path!r} is not valid YAML{where}: {what}") from None
    if not isinstance(data, dict) or not isinstance(data.get("groups"), list):
        raise UsageError(f"profile {name_or_path!r} has no 'groups' list")
    check_profile(data, name_or_path)
    return data


def _unknown_keys(where: str, given: dict, valid: tuple[str, ...]) -> None:
    if not isinstance(given, dict):
        raise UsageError(f"{where} must be a mapping of keys to values")
    extra = [k for k in given if k not in valid]
    if extra:
        raise UsageError(f"{where} has unknown key {extra[0]!r}; valid keys: {', '.join(valid)}")


def _as_list(value: Any) -> list:
    return [value] if isinstance(value, str | int | float) else list(value or [])


def _check_frameworks(where: str, names: list) -> None:
    for fw in names:
        if fw not in (*FRAMEWORKS, CALLABLE):
            raise UsageError(f"{where} names unknown framework {fw!r}; choose one of: "
                             f"{', '.join((*FRAMEWORKS, CALLABLE))}")  # fmt: skip


def _target(framework: str, name: str, problem: str) -> Target | None:
    """The target the name is in this framework if it can run the problem, else None."""
    try:
        target = parse(framework, str(name))
    except UsageError:
        return None
    runs = any(target.unsupported(problem, d) is None for d in DTYPES)
    return target if target.framework == framework and runs else None


def _check_crossover_shapes(where: str, entry: dict) -> None:
    """UsageError, before any case runs, where the crossover's total, steps and side give no
    shapes (the crossover is measured after the sweep)."""
    from jacbench.problems import shapes

    c = {**shapes.SHAPE_DEFAULTS, **entry}
    try:
        side = None if c["side"] is None else int(c["side"])
        shapes.shapes(int(c["total"]), int(c["steps"]), side)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: total, steps and side must be integers") from None
    except UsageError as e:
        raise UsageError(f"{where}: {e}") from None


def check_profile(data: dict, label: str) -> None:
    """UsageError for the first unknown key, framework, problem or strategy in a profile."""
    _unknown_keys(f"profile {label!r}", data, TOP_KEYS)
    _unknown_keys(f"profile {label!r} defaults", data.get("defaults") or {}, GROUP_KEYS)
    _unknown_keys(f"profile {label!r} crossover", data.get("crossover") or {}, CROSSOVER_KEYS)
    _check_frameworks(f"profile {label!r} crossover", _as_list((data.get("crossover") or {})
                                                                .get("frameworks")))  # fmt: skip
    _check_crossover_shapes(f"profile {label!r} crossover", data.get("crossover") or {})
    defaults = data.get("defaults") or {}
    for i, group in enumerate(data["groups"], 1):
        where = f"profile {label!r} group {i}"
        _unknown_keys(where, group, GROUP_KEYS)
        g = {**defaults, **group}
        problem = g.get("problem", "gbm")
        if problem not in PROBLEMS:
            raise UsageError(f"{where} names unknown problem {problem!r}; choose one of: "
                             f"{', '.join(PROBLEMS)}")  # fmt: skip
        frameworks = _as_list(g.get("frameworks")) or list(FRAMEWORKS)
        _check_frameworks(where, frameworks)
        _run_despite_model(g, where)
        device = str(g.get("device", "cpu"))
        check_device(device)
        for fw in _as_list(g.get("frameworks")):  # those named: a group that names one means it
            if refusal := device_refusal(fw, fw, device):
                raise UsageError(f"{where}: {refusal}")
        spec = g.get("strategies")
        if spec in (None, "all"):
            continue
        for name in _as_list(spec):
            if not any(_target(fw, name, problem) for fw in frameworks):
                raise UsageError(
                    f"{where}: strategy {name!r} exists in none of {', '.join(frameworks)} for "
                    f"problem {problem}; see 'jacbench strategies'"
                )


def _run_despite_model(g: dict, where: str) -> bool:
    """The group's run_despite_model: true runs its cases even where the memory model predicts
    a peak far above the cap (to record how long they ran and what they held when stopped)."""
    value = g.get("run_despite_model", False)
    if not isinstance(value, bool):
        raise UsageError(f"{where}: run_despite_model must be true or false, got {value!r}")
    return value


def check_overrides(overrides: dict) -> dict:
    """The command line's overrides, checked: UsageError names the first bad one."""
    o = {k: v for k, v in overrides.items() if v is not None}
    _unknown_keys("overrides", o, OVERRIDE_KEYS)
    _check_frameworks("--frameworks", o.get("frameworks", []))
    for p in o.get("problems", []):
        if p not in PROBLEMS:
            raise UsageError(f"unknown problem {p!r}; choose one of: {', '.join(PROBLEMS)}")
    for name in o.get("strategies", []):
        if not any(_target(fw, name, p) for fw in (*FRAMEWORKS, CALLABLE) for p in PROBLEMS):
            raise UsageError(f"unknown strategy {name!r}; see 'jacbench strategies'")
    for a in o.get("allocators", []):
        harness.allocator_environment(a)  # UsageError if unknown or missing
    if "mem_cap" in o:
        parse_bytes(o["mem_cap"])
    if "timeout" in o and not float(o["timeout"]) > 0:
        raise UsageError(f"--timeout must be positive, got {o['timeout']}")
    if "threads" in o and int(o["threads"]) < 1:
        raise UsageError(f"--threads must be at least 1, got {o['threads']}")
    if "device" in o:
        check_device(o["device"])
    return o


def _targets(framework: str, spec: Any, problem: str) -> list[Target]:
    """The group's targets that exist in this framework for the problem ("all": every
    registered strategy of the problem)."""
    if spec in (None, "all"):
        names = [s.name for s in registry.by_framework(framework, problem)]
    else:
        names = _as_list(spec)
    return [t for t in (_target(framework, n, problem) for n in names) if t is not None]


def _sizes(g: dict, problem: str, overrides: dict) -> list[dict[str, int]]:
    """The group's sizes as Case fields: paths for gbm, inputs (and batch) for moments."""
    if problem == "gbm":
        paths = overrides.get("paths") or [parse_size(n, "paths") for n in g.get("paths", [1000])]
        return [{"paths": n} for n in paths]
    inputs = overrides.get("inputs") or [parse_size(n, "inputs") for n in g.get("inputs", [1000])]
    if problem == "moments-batch":
        batches = [parse_size(b, "batch") for b in g.get("batch", [8])]
    else:
        batches = [0]
    return [{"inputs": n, "batch": b} for n in inputs for b in batches]


def _settings(g: dict, overrides: dict, ram: int | None = None) -> dict[str, Any]:
    """The Case fields a group sets besides target and size (a case without a cap of its own
    gets harness.default_mem_cap of the RAM given, else of this machine's)."""
    return {
        "steps": parse_size(g.get("steps", 52), "steps"),
        "chunk_size": parse_size(g.get("chunk_size", 256), "chunk_size"),
        "threads": int(overrides.get("threads") or g.get("threads", 1)),
        "mem_cap": parse_bytes(
            overrides.get("mem_cap") or g.get("mem_cap") or harness.default_mem_cap(ram)
        ),
        "timeout": float(overrides.get("timeout") or g.get("timeout", 300)),
        "repeats": parse_size(g.get("repeats", 5), "repeats"),
        "warm_budget_s": float(g.get("warm_budget_s", 10)),
        "ratio_processes": parse_size(g.get("ratio_processes", 1), "ratio_processes"),
        "run_despite_model": _run_despite_model(g, "a profile group"),
        "device": str(overrides.get("device") or g.get("device", "cpu")),
    }


def _group_cases(g: dict, o: dict, ram: int | None = None) -> list[Case]:
    """The cases of one group (defaults merged in), overrides applied."""
    problem = g.get("problem", "gbm")
    frameworks = _as_list(g.get("frameworks")) or list(FRAMEWORKS)
    if o.get("frameworks"):
        frameworks = [fw for fw in frameworks if fw in o["frameworks"]]
    excluded = _as_list(g.get("exclude"))
    settings = _settings(g, o, ram)
    sizes = _sizes(g, problem, o)
    dtypes = _as_list(g.get("dtypes", ["float32"]))
    allocators = o.get("allocators") or _as_list(g.get("allocators", "glibc"))
    cases = []
    for fw in frameworks:
        targets = _targets(fw, g.get("strategies"), problem)
        targets = [t for t in targets if f"{fw}/{t.text}" not in excluded]
        if o.get("strategies"):
            targets = [t for t in targets if t.text in o["strategies"]]
        for target, size, dtype, alloc in itertools.product(targets, sizes, dtypes, allocators):
            if target.unsupported(problem, dtype, settings["device"]) is None:
                cases.append(Case(framework=fw, strategy=target.text, problem=problem,
                                  dtype=dtype, allocator=alloc, **size, **settings))  # fmt: skip
    return cases


def expand(profile: dict, overrides: dict | None = None, ram: int | None = None) -> list[Case]:
    """Every case of a profile, once each, with command-line overrides applied to all groups;
    the default caps are those of a machine with ram bytes of RAM (default: this one)."""
    o = check_overrides(overrides or {})
    defaults = dict(profile.get("defaults") or {})
    cases: dict[Case, None] = {}
    for group in profile["groups"]:
        g = {**defaults, **group}
        if o.get("problems") and g.get("problem", "gbm") not in o["problems"]:
            continue
        cases.update(dict.fromkeys(_group_cases(g, o, ram)))
    return list(cases)
