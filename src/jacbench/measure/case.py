"""One measurement: a target at a size, with its threads, allocator, caps and repeats."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any

from jacbench.constants import ALL_ALLOCATORS, PATH_PROBLEMS
from jacbench.errors import UsageError, check_device
from jacbench.measure import harness, heap
from jacbench.measure.targets import Target, parse
from jacbench.problems import PARAMS, SIZE
from jacbench.problems.gbm import GBMParams
from jacbench.units import parse_bytes

# The problem's own defaults, written once in its parameters (a case's key hashes these values).
_GBM = GBMParams()


@dataclass(frozen=True)
class Case:
    """One measurement. ``strategy`` is the target's string form (see measure.targets), parsed
    once, when the case is made: an unknown name or an unsupported problem or dtype is a
    UsageError here, before anything runs."""

    framework: str
    strategy: str
    paths: int = _GBM.paths  # gbm: N paths
    inputs: int = 0  # moments: n inputs; shapes: n
    batch: int = 0  # moments-batch: B rows
    outputs: int = 0  # shapes: m outputs
    steps: int = _GBM.steps
    dtype: str = _GBM.dtype
    chunk_size: int = _GBM.chunk_size
    threads: int = 1
    spot: float = _GBM.spot
    vol: float = _GBM.vol
    drift: float = _GBM.drift
    maturity: float = _GBM.maturity
    seed: int = _GBM.seed
    allocator: str = "glibc"
    # Where the target computes: the CPU, or a CUDA GPU (PyTorch and JAX only).
    device: str = "cpu"
    mem_cap: int = None  # type: ignore[assignment] - bytes; None: harness.default_mem_cap()
    timeout: float = 300.0
    repeats: int = 5
    warm_budget_s: float = 10.0
    # Worker processes that time the target against its simulation baseline, interleaved.
    ratio_processes: int = 1
    # Run even where the memory model predicts a peak far above the cap (the runner otherwise
    # skips such a case): to record how long it ran and what it held when the cap stopped it.
    run_despite_model: bool = False
    problem: str = "gbm"
    target: Target = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        target = parse(self.framework, self.strategy)
        if self.problem not in PARAMS:
            valid = ", ".join(PARAMS)
            raise UsageError(f"unknown problem {self.problem!r}; choose one of: {valid}")
        check_device(self.device)
        target.check(self.problem, self.dtype, self.device)
        # A cap may be given as text ("8GiB") or left out; it is kept as bytes.
        cap = harness.default_mem_cap() if self.mem_cap is None else parse_bytes(self.mem_cap)
        object.__setattr__(self, "mem_cap", cap)
        if self.allocator not in ALL_ALLOCATORS:
            valid = ", ".join(ALL_ALLOCATORS)
            raise UsageError(f"unknown allocator {self.allocator!r}; choose one of: {valid}")
        for name in ("threads", "repeats", "ratio_processes"):
            if getattr(self, name) < 1:
                raise UsageError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.timeout > 0:
            raise UsageError(f"timeout must be positive, got {self.timeout}")
        if not isinstance(self.run_despite_model, bool):
            given = self.run_despite_model
            raise UsageError(f"run_despite_model must be true or false, got {given!r}")
        object.__setattr__(self, "target", target)

    @property
    def steady_heap(self) -> bool:
        """Whether its workers run plain glibc with its thresholds fixed (heap.steadies)."""
        return heap.steadies(self.allocator, self.ratio_processes)

    @property
    def baseline(self) -> Target | None:
        return self.target.baseline(self.problem)

    def model_params(self) -> dict[str, Any]:
        """The problem's parameters, as the worker builds its case."""
        return {f.name: getattr(self, f.name) for f in fields(PARAMS[self.problem])}

    def spec_row(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "framework": self.framework,
            "strategy": self.strategy,
            "target": self.target.kind,
            **self.model_params(),
            "threads": self.threads,
            "allocator": self.allocator,
            # Only where it is not the CPU: a CPU row's device is blank, as in every file from
            # before the column, and its key is what it was.
            **({} if self.device == "cpu" else {"device": self.device}),
            "mem_cap": self.mem_cap,
            "timeout": self.timeout,
            "repeats": self.repeats,
            "ratio_processes": self.ratio_processes,
        }

    def key(self, env: str) -> str:
        spec = self.spec_row()
        if self.run_despite_model:  # in the key only when set: every other key is unchanged
            spec["run_despite_model"] = True
        text = json.dumps([spec, env], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def size(self) -> int:
        return getattr(self, SIZE[self.problem])

    def label(self) -> str:
        if self.problem in PATH_PROBLEMS:
            size = f"N={self.paths:,}"
        elif self.problem == "shapes":
            size = f"{self.outputs}x{self.inputs}"
        else:
            size = f"n={self.inputs:,}" + (f" B={self.batch}" if self.batch else "")
        what = "" if self.problem == "gbm" else f"{self.problem} "
        where = "" if self.device == "cpu" else f" {self.device}"
        return f"{what}{self.framework}/{self.strategy} {size} {self.dtype} {self.allocator}{where}"

    def worker_spec(self, extra: bool = False) -> dict:
        """What the worker process is told: the target in its string form, parsed there by
        the same parser; for an extra worker, only the warm calls and the pairs."""
        baseline = self.baseline
        return {
            "target": {"framework": self.framework, "name": self.strategy},
            "baseline": baseline.text if baseline else None,
            "extra": extra,
            "problem": self.problem,
            "params": self.model_params(),
            "threads": self.threads,
            "device": self.device,
            "repeats": self.repeats,
            "warm_budget_s": self.warm_budget_s,
        }
