"""Profiles: YAML files that name groups of cases; expanded, with overrides, into cases.

A profile is checked whole before anything runs: unknown keys, frameworks, problems and
strategies, and unreadable YAML, are one UsageError naming what is wrong and what is valid.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from jacbench.constants import AD_FRAMEWORKS, DTYPES, FRAMEWORKS, PATH_PROBLEMS, PROBLEMS
from jacbench.errors import UsageError, check_device, device_refusal
from jacbench.measure import harness
from jacbench.measure.case import Case
from jacbench.measure.targets import CallableTarget, Target, parse
from jacbench.problems.shapes import SHAPE_DEFAULTS
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


# A crossover entry's values where the profile gives none (measure.crossover.cases says what
# side means).
CROSSOVER_DEFAULTS = {**SHAPE_DEFAULTS, "repeats": 5, "warm_budget_s": 2.0, "threads": 1,
                      "timeout": 300, "jobs": 1, "frameworks": list(AD_FRAMEWORKS)}  # fmt: skip


@dataclass(frozen=True)
class Group:
    """One group of a profile, its defaults merged in, every value parsed: sizes as numbers,
    strategies None for all of the problem's, mem_cap None for the machine's default."""

    problem: str
    frameworks: tuple[str, ...]
    strategies: tuple[str, ...] | None
    exclude: tuple[str, ...]
    paths: tuple[int, ...]
    inputs: tuple[int, ...]
    batch: tuple[int, ...]  # (0,) but for moments-batch
    dtypes: tuple[str, ...]
    allocators: tuple[str, ...]
    steps: int
    chunk_size: int
    threads: int
    mem_cap: int | None
    timeout: float
    repeats: int
    warm_budget_s: float
    ratio_processes: int
    run_despite_model: bool
    device: str


@dataclass(frozen=True)
class Crossover:
    """A profile's tall-to-wide crossover (measure.crossover), CROSSOVER_DEFAULTS filled in."""

    frameworks: tuple[str, ...]
    total: int
    steps: int
    side: int | None
    repeats: int
    warm_budget_s: float
    threads: int
    mem_cap: int | None
    timeout: float
    jobs: int


@dataclass(frozen=True)
class Profile:
    """A profile read from YAML, checked and parsed once (load_profile): its defaults as a
    group of their own (what a case measured by hand takes), its groups and its crossover."""

    name: str
    jobs: int
    defaults: Group
    groups: tuple[Group, ...]
    crossover: Crossover


def profile_names() -> list[str]:
    files = resources.files("jacbench") / "profiles"
    return sorted(p.name[:-5] for p in files.iterdir() if p.name.endswith(".yaml"))


def load_profile(name_or_path: str) -> Profile:
    """A profile by name (shipped with jacbench) or by path to a YAML file, checked and parsed
    (parse_profile): read once, here; everything downstream reads the Profile."""
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
    return parse_profile(data, name_or_path)


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

    c = {**SHAPE_DEFAULTS, **entry}
    try:
        side = None if c["side"] is None else int(c["side"])
        shapes.shapes(int(c["total"]), int(c["steps"]), side)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: total, steps and side must be integers") from None
    except UsageError as e:
        raise UsageError(f"{where}: {e}") from None


def _group(raw: dict, defaults: dict, where: str) -> Group:
    """One group, its defaults merged in, checked and parsed: UsageError for the first unknown
    key, framework, problem, strategy or size."""
    _unknown_keys(where, raw, GROUP_KEYS)
    g = {**defaults, **raw}
    problem = g.get("problem", "gbm")
    if problem not in PROBLEMS:
        raise UsageError(f"{where} names unknown problem {problem!r}; choose one of: "
                         f"{', '.join(PROBLEMS)}")  # fmt: skip
    named = _as_list(g.get("frameworks"))
    frameworks = named or list(FRAMEWORKS)
    _check_frameworks(where, frameworks)
    device = str(g.get("device", "cpu"))
    check_device(device)
    for fw in named:  # those named: a group that names one means it
        if refusal := device_refusal(fw, fw, device):
            raise UsageError(f"{where}: {refusal}")
    spec = g.get("strategies")
    strategies = None if spec in (None, "all") else tuple(str(n) for n in _as_list(spec))
    for name in strategies or ():
        if not any(_target(fw, name, problem) for fw in frameworks):
            raise UsageError(
                f"{where}: strategy {name!r} exists in none of {', '.join(frameworks)} for "
                f"problem {problem}; see 'jacbench strategies'"
            )
    cap = g.get("mem_cap")
    return Group(
        problem=problem,
        frameworks=tuple(frameworks),
        strategies=strategies,
        exclude=tuple(_as_list(g.get("exclude"))),
        paths=tuple(parse_size(n, "paths") for n in _as_list(g.get("paths", [1000]))),
        inputs=tuple(parse_size(n, "inputs") for n in _as_list(g.get("inputs", [1000]))),
        batch=tuple(parse_size(b, "batch") for b in _as_list(g.get("batch", [8])))
        if problem == "moments-batch" else (0,),
        dtypes=tuple(_as_list(g.get("dtypes", ["float32"]))),
        allocators=tuple(_as_list(g.get("allocators", "glibc"))),
        steps=parse_size(g.get("steps", 52), "steps"),
        chunk_size=parse_size(g.get("chunk_size", 256), "chunk_size"),
        threads=int(g.get("threads", 1)),
        mem_cap=None if cap in (None, "") else parse_bytes(cap),
        timeout=float(g.get("timeout", 300)),
        repeats=parse_size(g.get("repeats", 5), "repeats"),
        warm_budget_s=float(g.get("warm_budget_s", 10)),
        ratio_processes=parse_size(g.get("ratio_processes", 1), "ratio_processes"),
        run_despite_model=_run_despite_model(g, where),
        device=device,
    )  # fmt: skip


def _crossover(raw: dict, where: str) -> Crossover:
    """The profile's crossover entry, checked and parsed, CROSSOVER_DEFAULTS filled in."""
    _unknown_keys(where, raw, CROSSOVER_KEYS)
    _check_frameworks(where, _as_list(raw.get("frameworks")))
    _check_crossover_shapes(where, raw)
    c = {**CROSSOVER_DEFAULTS, **raw}
    cap = c.get("mem_cap")
    return Crossover(
        frameworks=tuple(_as_list(c["frameworks"])),
        total=int(c["total"]),
        steps=int(c["steps"]),
        side=None if c["side"] is None else int(c["side"]),
        repeats=int(c["repeats"]),
        warm_budget_s=float(c["warm_budget_s"]),
        threads=int(c["threads"]),
        mem_cap=None if cap in (None, "") else parse_bytes(cap),
        timeout=float(c["timeout"]),
        jobs=int(c["jobs"]),
    )


def parse_profile(data: dict, label: str) -> Profile:
    """A profile's YAML data, checked whole and parsed once: UsageError for the first unknown
    key, framework, problem, strategy or size, naming where it is."""
    _unknown_keys(f"profile {label!r}", data, TOP_KEYS)
    raw_defaults = data.get("defaults") or {}
    where = f"profile {label!r} defaults"
    _unknown_keys(where, raw_defaults, GROUP_KEYS)
    crossover = _crossover(data.get("crossover") or {}, f"profile {label!r} crossover")
    groups = tuple(_group(g, raw_defaults, f"profile {label!r} group {i}")
                   for i, g in enumerate(data["groups"], 1))  # fmt: skip
    return Profile(
        name=str(data.get("name") or Path(label).stem),
        jobs=int(data.get("jobs", 1)),
        defaults=_group({}, raw_defaults, where),
        groups=groups,
        crossover=crossover,
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


def _targets(framework: str, names: tuple[str, ...] | None, problem: str) -> list[Target]:
    """The group's targets that exist in this framework for the problem (None: every
    registered strategy of the problem)."""
    if names is None:
        names = tuple(s.name for s in registry.by_framework(framework, problem))
    return [t for t in (_target(framework, n, problem) for n in names) if t is not None]


def _sizes(g: Group, overrides: dict) -> list[dict[str, int]]:
    """The group's sizes as Case fields: paths for gbm, inputs (and batch) for moments."""
    if g.problem in PATH_PROBLEMS:
        return [{"paths": n} for n in overrides.get("paths") or g.paths]
    inputs = overrides.get("inputs") or g.inputs
    return [{"inputs": n, "batch": b} for n in inputs for b in g.batch]


def _settings(g: Group, overrides: dict, ram: int | None = None) -> dict[str, Any]:
    """The Case fields a group sets besides target and size (a case without a cap of its own
    gets harness.default_mem_cap of the RAM given, else of this machine's)."""
    cap = overrides.get("mem_cap") or g.mem_cap
    return {
        "steps": g.steps,
        "chunk_size": g.chunk_size,
        "threads": int(overrides.get("threads") or g.threads),
        "mem_cap": parse_bytes(cap) if cap else harness.default_mem_cap(ram),
        "timeout": float(overrides.get("timeout") or g.timeout),
        "repeats": g.repeats,
        "warm_budget_s": g.warm_budget_s,
        "ratio_processes": g.ratio_processes,
        "run_despite_model": g.run_despite_model,
        "device": str(overrides.get("device") or g.device),
    }


def _group_cases(g: Group, o: dict, ram: int | None = None) -> list[Case]:
    """The cases of one group, overrides applied."""
    frameworks = [fw for fw in g.frameworks if not o.get("frameworks") or fw in o["frameworks"]]
    settings = _settings(g, o, ram)
    allocators = o.get("allocators") or g.allocators
    cases = []
    for fw in frameworks:
        targets = [t for t in _targets(fw, g.strategies, g.problem)
                   if f"{fw}/{t.text}" not in g.exclude
                   and (not o.get("strategies") or t.text in o["strategies"])]  # fmt: skip
        for target, size, dtype, alloc in itertools.product(
            targets, _sizes(g, o), g.dtypes, allocators
        ):
            if target.unsupported(g.problem, dtype, settings["device"]) is None:
                cases.append(Case(framework=fw, strategy=target.text, problem=g.problem,
                                  dtype=dtype, allocator=alloc, **size, **settings))  # fmt: skip
    return cases


def expand(profile: Profile, overrides: dict | None = None, ram: int | None = None) -> list[Case]:
    """Every case of a profile, once each, with command-line overrides applied to all groups;
    the default caps are those of a machine with ram bytes of RAM (default: this one)."""
    o = check_overrides(overrides or {})
    cases: dict[Case, None] = {}
    for g in profile.groups:
        if not o.get("problems") or g.problem in o["problems"]:
            cases.update(dict.fromkeys(_group_cases(g, o, ram)))
    return list(cases)
