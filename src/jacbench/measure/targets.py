"""What a case measures, as a small typed value, and the one parser of its string form.

A results row names its target in the ``strategy`` column: a registered strategy ("jvp"), a
second-order method ("second:hessian"), a simulation baseline ("simulation:eager"), the machine's
limit ("limit:read", "limit:dispatch"), one mode of
the tall-to-wide crossover ("crossover:forward") or any callable
("callable:module:function"). :func:`parse` is the only place that reads those prefixes; every
other module asks the target it returns. Nothing here imports a framework.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from jacbench.errors import Unsupported, UsageError, device_refusal
from jacbench.second import registry as second
from jacbench.strategies import catalog, generic, registry
from jacbench.strategies.memory_model import MemoryModel

MODES = ("forward", "reverse")  # of the crossover


class _Target(Unsupported):
    """What every target answers; subclasses are frozen dataclasses."""

    kind: ClassVar[str]
    framework: str
    name: str

    @property
    def text(self) -> str:
        """The string form, as the results file's strategy column holds it."""
        return f"{self.kind}:{self.name}"

    @property
    def imports(self) -> str | None:
        """The framework the worker imports (with its thread pools fixed) before building."""
        return self.framework

    def memory(self, problem: str) -> MemoryModel | None:
        """The record's memory model, or None when the target has none."""
        return None

    def baseline(self, problem: str) -> SimulationTarget | None:
        """The simulation whose time the target's is measured against, side by side."""
        return None

    @property
    def streams(self) -> bool:
        """Whether the target draws the normals a block of paths at a time: its case then
        holds none (a path-blocked strategy or simulation)."""
        return False

    @property
    def compiles(self) -> bool:
        """Whether its first call compiles, so that its compile cost is measured apart
        (measure.compile_cost): a compiled strategy or simulation, a JAX second-order method."""
        return False

    @property
    def question_timed(self) -> bool:
        """Whether its calls are also timed as the second question timed them: the clock
        stopped when the call returns, without waiting for the GPU (the registry's role)."""
        return False

    def make_case(self, problem: str, params: dict[str, Any], device: str = "cpu"):
        """The case the target is measured on (streamed for a path-blocked target), for the
        device it computes on."""
        from jacbench.problems import make_case

        return make_case(problem, params, streamed=self.streams, device=device)

    def build(self, case) -> Callable[[], Any]:
        """A no-argument callable that computes the target's result from scratch."""
        raise NotImplementedError

    def error(self, case, result) -> float | None:
        """Largest relative error of a result against the closed form (None: nothing to check)."""
        return None


class _RecordTarget(_Target):
    """A target that is a registry record: it answers by asking the record."""

    @property
    def record(self):
        raise NotImplementedError

    def __post_init__(self):
        self.record  # noqa: B018 - looking it up is the check: UsageError names the choices

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        return self.record.unsupported(problem, dtype, device)

    def memory(self, problem: str) -> MemoryModel:
        return self.record.memory_for(problem)

    def build(self, case):
        return self.record.build(case)

    def error(self, case, result) -> float:
        return self.record.error(case, result)


@dataclass(frozen=True)
class StrategyTarget(_RecordTarget):
    """A registered Jacobian strategy, named as it is."""

    framework: str
    name: str
    kind: ClassVar[str] = "strategy"

    @property
    def text(self) -> str:
        return self.name

    @property
    def record(self) -> registry.Strategy:
        return registry.get(self.framework, self.name)

    @property
    def streams(self) -> bool:
        return self.record.blocked or self.record.drawn

    @property
    def question_timed(self) -> bool:
        return self.record.question_timed

    def baseline(self, problem: str) -> SimulationTarget | None:
        if problem != "gbm":
            return None
        return SimulationTarget(self.framework, self.record.execution)

    @property
    def compiles(self) -> bool:
        return self.record.compiled


@dataclass(frozen=True)
class SecondOrderTarget(_RecordTarget):
    """A registered second-order method (Hessians, HVPs, per-path Greeks)."""

    framework: str
    name: str
    kind: ClassVar[str] = "second"

    @property
    def record(self) -> second.Method:
        return second.get(self.framework, self.name)

    @property
    def compiles(self) -> bool:
        # JAX's are jitted once at import; jax.clear_caches empties them. TensorFlow's
        # tf.function objects are made once at import too, and a rebuild would find them traced.
        return self.framework == "jax"


@dataclass(frozen=True)
class SimulationTarget(_Target):
    """The simulation alone, no derivative, in one execution mode: the yardstick of ratios."""

    framework: str
    name: str  # the execution mode (eager, function, xla, jit, ...) or a drawing simulation
    kind: ClassVar[str] = "simulation"

    def __post_init__(self):
        registry.check_framework(self.framework)
        valid = registry.simulations(self.framework)
        if self.name not in valid:
            raise UsageError(
                f"unknown simulation {self.name!r} for {self.framework}; choose one of: "
                + ", ".join(f"simulation:{e}" for e in valid)
            )

    @property
    def compiles(self) -> bool:
        return registry.simulation_compiles(self.name)

    @property
    def streams(self) -> bool:
        # A simulation drawing its own normals needs none from the case either.
        return registry.is_blocked(self.name) or catalog.draws_own(self.name)

    def baseline(self, problem: str) -> SimulationTarget | None:
        # The path-returning simulation is timed against the terminal-only one of its mode.
        mode = registry.path_of(self.name)
        return None if mode is None or problem != "gbm" else SimulationTarget(self.framework, mode)

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        if refusal := device_refusal(f"{self.framework}/{self.text}", self.framework, device):
            return refusal
        if problem != "gbm":
            return f"simulation baselines exist for the gbm problem only, not {problem}"
        return None

    def build(self, case):
        return registry.simulation(self.framework, self.name)(case)


@dataclass(frozen=True)
class LimitTarget(_Target):
    """What the machine can do with a problem's inputs, no derivative (strategies.limits): one
    read of them, or an empty compiled call with them (the dispatch floor)."""

    framework: str
    name: str  # read or dispatch
    kind: ClassVar[str] = "limit"

    def __post_init__(self):
        from jacbench.strategies import limits

        registry.check_framework(self.framework)
        valid = [n for n in limits.LIMITS if self.framework in limits.HAS[n]]
        if self.name not in valid:
            raise UsageError(f"unknown limit {self.name!r} for {self.framework}; choose one "
                             "of: " + ", ".join(f"limit:{n}" for n in valid))  # fmt: skip

    @property
    def compiles(self) -> bool:
        return self.framework != "numpy"

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        if device != "cpu":
            return f"the limit is measured on the cpu only here, not {device}"
        if problem not in ("gbm", "moments"):
            return f"the limit is measured for the gbm and moments problems, not {problem}"
        return None

    def build(self, case):
        from jacbench.strategies import limits

        return limits.build(self.framework, self.name, case)

    def error(self, case, result) -> float | None:
        from jacbench.strategies import limits

        return limits.relative_error(case, result) if self.name == "read" else None


@dataclass(frozen=True)
class CrossoverTarget(_Target):
    """One mode of the tall-to-wide crossover: the Jacobian of tanh(W x) at one shape."""

    framework: str
    name: str  # forward or reverse
    kind: ClassVar[str] = "crossover"

    def __post_init__(self):
        registry.check_framework(self.framework)
        if self.name not in MODES:
            raise UsageError(f"unknown crossover mode {self.name!r}; choose one of: "
                             + ", ".join(MODES))  # fmt: skip

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        if device != "cpu":
            return f"the crossover runs on the cpu only, not {device}"
        if problem != "shapes":
            return f"crossover cases take the shapes problem, not {problem}"
        return None

    def build(self, case):
        from jacbench.strategies import shapes

        return shapes.build(self.framework, self.name, case)

    def error(self, case, result) -> float:
        from jacbench.problems import shapes

        return shapes.relative_error(result, shapes.jacobian_closed_form(case.w, case.x))


@dataclass(frozen=True)
class CallableTarget(_Target):
    """Any function, called with no arguments: to check the harness itself."""

    name: str  # module:function
    framework: str = "callable"
    kind: ClassVar[str] = "callable"

    def __post_init__(self):
        module, sep, func = self.name.partition(":")
        if not (module and sep and func):
            raise UsageError(f"a callable is named module:function, got {self.name!r}")

    @property
    def imports(self) -> str | None:
        return None

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        if device != "cpu":
            return f"a callable runs on the cpu only, not {device}"
        return None

    def build(self, case):
        module, _, func = self.name.partition(":")
        return getattr(importlib.import_module(module), func)


@dataclass(frozen=True)
class GenericTarget(_Target):
    """A generic strategy (strategies.generic) on a reader's function (the user problem)."""

    framework: str
    name: str
    kind: ClassVar[str] = "generic"

    def __post_init__(self):
        self.record  # noqa: B018 - looking it up is the check: UsageError names the choices

    @property
    def record(self) -> generic.Generic:
        return generic.find(self.framework, self.name)

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        if device != "cpu":
            return f"a reader's function runs on the cpu only here, not {device}"
        if problem != "user":
            return f"generic strategies take a reader's function (the user problem), not {problem}"
        return None

    def build(self, case):
        from jacbench.problems import batched, user

        theta, data, shape = case.theta, case.data, case.shape
        if self.name == generic.BASELINE:  # the function itself, as its checks call it
            call = user.fast(case.f, case.framework)
            return lambda: user.to_numpy(call(theta, data)).reshape(-1)
        if getattr(case, "batch", 0) and not self.record.batched:  # a dense record, beside
            return batched.dense_on_batch(lambda f: generic.build(self.record, f), case)
        jacobian = generic.build(self.record, case.f)
        return lambda: user.to_numpy(jacobian(theta, data)).reshape(shape)

    def error(self, case, result) -> float | None:
        from jacbench.problems import user

        if case.reference is None or self.name == generic.BASELINE:
            return None
        return user.relative_error(result, case.reference)


Target = (
    StrategyTarget
    | SecondOrderTarget
    | SimulationTarget
    | LimitTarget
    | CrossoverTarget
    | CallableTarget
    | GenericTarget
)
_BY_KIND = {
    t.kind: t
    for t in (SecondOrderTarget, SimulationTarget, LimitTarget, CrossoverTarget, GenericTarget)
}


def parse(framework: str, text: str) -> Target:
    """The target a results row or a profile names; UsageError for an unknown one."""
    kind, sep, rest = text.partition(":")
    if not sep:
        return StrategyTarget(framework, text)
    if kind == CallableTarget.kind:
        return CallableTarget(rest)
    if kind in _BY_KIND:
        return _BY_KIND[kind](framework, rest)
    raise UsageError(
        f"unknown target {text!r}: a strategy name, or one of "
        + ", ".join(f"{k}:NAME" for k in [*_BY_KIND, CallableTarget.kind])
    )
