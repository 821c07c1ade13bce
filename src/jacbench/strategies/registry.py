"""The registry: every Jacobian strategy as one record of data, and the lookups over them.

Tests, the command line, sweeps and the book all read this table, so adding a strategy is one
row in strategies.catalog and one builder function in its framework's module. Importing this
module never imports torch, tensorflow or jax: a record names its builder as "module:function"
and loads it only when built.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from jacbench.constants import DTYPES, FRAMEWORKS, PATH_PROBLEMS
from jacbench.errors import Unsupported, UsageError, device_refusal
from jacbench.strategies import catalog, catalog_steps
from jacbench.strategies.memory_model import MemoryModel

MODES = ("forward", "reverse", "none")
BATCHINGS = ("loop", "vectorized", "chunked", "single-pass")
FORMS = catalog.FORMS
# One strategy of each AD framework has each of these roles: the pathwise gradient and forward
# mode for the tall Jacobian, reverse mode for the wide one.
ANSWERS = ("pathwise", "forward", "wide")
# What the answer's snippets run, in each AD framework: the tall Jacobian as the snippet first
# calls it and, where it shows one, compiled; where another wins one call, that one on its own
# (tall-once); the wide Jacobian.
SNIPPETS = ("tall", "tall-compiled", "tall-once", "wide")
BLOCKED = catalog.BLOCKED


def is_blocked(execution: str) -> bool:
    """Whether an execution mode runs one block of paths at a time (strategies.blocked)."""
    return execution.startswith(BLOCKED)


class JacobianResult(NamedTuple):
    """What every strategy returns: the Jacobian and the function's value, as numpy arrays (on
    a GPU, the framework's arrays left there: strategies.devices.to_host makes them numpy).

    GBM: J (N, 2) and S_T (N,). Moments: J (3, n) and f(X) (3,); batched, (B, 3, n) and (B, 3).
    """

    jacobian: np.ndarray
    terminal: np.ndarray


@dataclass(frozen=True)
class Strategy(Unsupported):
    """One way to compute the Jacobian, described as data: what it does, and the roles the
    chapters, figures and tests read (never a list of names kept elsewhere)."""

    framework: str
    name: str
    mode: str
    batching: str
    compiled: bool
    execution: str  # eager, function, xla, jit, inductor, numpy: matches a simulation baseline
    description: str
    # How the simulation it differentiates is written (FORMS): "array", the whole-array form
    # (a cumulative sum over the steps), or "steps", a loop over the time steps. Its execution
    # then names the loop's simulation ("steps-jit", "drawn-function"; catalog.FORMS says more).
    form: str = "array"
    # The API call it makes, as the glossary shows it: f the function, x its inputs, y = f(x),
    # v a tangent, xs one copy of the inputs per path ("torch.func.jacfwd(f, argnums=(0, 1))").
    call: str = ""
    # How a chapter's table names the call, as a reader would type it ("torch.func.jacrev";
    # {chunk}: the chunk size), or (problem, label) pairs where the call differs by problem;
    # "" where the table shows the call itself.
    label: str | tuple[tuple[str, str], ...] = ""
    dtypes: tuple[str, ...] = DTYPES
    problems: tuple[str, ...] = ("gbm",)
    faithful: bool = False  # the question's own program: draws its own random numbers
    memory: MemoryModel = MemoryModel()  # predicted working memory (strategies.memory_model)
    # The same for the moments problems, one "path array" being the inputs (peak_moments)
    memory_moments: MemoryModel = MemoryModel(arrays=8, fixed_mib=20)
    # --- roles ---
    # The framework's own Jacobian call with its defaults (torch.autograd.functional.jacobian,
    # GradientTape.jacobian, jax.jacrev): what a user reaches for first.
    default: bool = False
    # A compiled or path-blocked variant: the strategy whose differentiation it runs, compiled
    # (torch.compile, tf.function, XLA) or one block of paths at a time.
    variant_of: str = ""
    # Vectorized reverse mode: the loop of the same VJPs that it batches (one per loop).
    vectorizes: str = ""
    # Whether a recommendation may pick it; False for what the book shows only for its cost (the
    # question's programs, a loop recording a graph it never uses).
    candidate: bool = True
    # The framework's strategy of a role of ANSWERS (its pathwise gradient, its forward mode,
    # its wide Jacobian), or "".
    answer: str = ""
    # The answer's snippet (book/snippets/FRAMEWORK_SHAPE.py) runs it: one of SNIPPETS, or "".
    snippet: str = ""
    # The allocator its memory model was fitted under (and is checked under by the tests).
    memory_fitted_under: str = "glibc"
    # The second question timed it as time.time() around the call, never waiting for the GPU:
    # the worker times its calls that way too, beside the synchronised ones (unsynced_median_s).
    question_timed: bool = False
    # What it is to the questions, one of QUESTION_ROLES or "": the first question's one-argument
    # fix ("fix"), the second question's two solutions ("solution-1", "solution-2").
    question: str = ""
    # The framework's floor: S_T and both derivatives written by hand in one compiled pass, no
    # AD (catalog.FLOOR). How far a Jacobian is from it is what automatic differentiation costs
    # beyond the arithmetic.
    floor: bool = False
    # A build-setting experiment: the same differentiation compiled another way (JAX's pathwise
    # gradient with YNNPACK's fusion off: "ynnpack"), "" for none. The chapters that list the
    # ways to differentiate leave it out; the cost tables show it beside its twin.
    experiment: str = ""

    @property
    def key(self) -> str:
        return f"{self.framework}/{self.name}"

    @property
    def blocked(self) -> bool:
        """One block of paths at a time, the normals drawn per block (strategies.blocked)."""
        return is_blocked(self.execution)

    @property
    def engine(self) -> str:
        """The execution without the blocking, form or loop: eager, function, xla, jit,
        inductor, numpy."""
        return catalog.engine(self.execution)

    @property
    def drawn(self) -> bool:
        """Whether it draws its own normals inside the loop (catalog.DRAWN): its case holds
        none, and its check reads the closed form off its own S_T."""
        return self.execution.startswith(catalog.DRAWN)

    @property
    def blocks(self) -> str:
        """A path-blocked strategy's unblocked twin, the strategy it runs block by block; ""."""
        return self.variant_of if self.blocked else ""

    @property
    def eager_twin(self) -> str | None:
        """The same differentiation run eagerly, for a compiled variant of an eager strategy
        ('compiled-jvp' -> 'jvp', 'pathwise-function' -> 'pathwise'); None otherwise (JAX is
        jitted throughout; a blocked variant blocks a compiled one)."""
        if not (self.compiled and self.variant_of):
            return None
        twin = get(self.framework, self.variant_of)
        return twin.name if twin.engine == "eager" else None

    def labelled(self, problem: str = "gbm", chunk: int | None = None) -> str:
        """The call as a table of a problem names it (its label, the chunk size filled in),
        else the call."""
        label = self.label if isinstance(self.label, str) else dict(self.label).get(problem, "")
        return label.format(chunk=chunk) if label else self.call

    def entry(self, problem: str = "gbm") -> str:
        """The builder, "module:function": one module per framework and problem (the batched
        moments problem shares the moments module), and one per framework for the simulation
        written over the steps, which also holds every Asian payoff's builder."""
        if self.form == "steps" or problem == "asian":
            module = f"jacbench.strategies.{self.framework}_steps"
        else:
            module = f"jacbench.strategies.{self.framework}_{problem.split('-')[0]}"
        return f"{module}:build_{self.name.replace('-', '_')}"

    def unsupported(self, problem: str, dtype: str, device: str = "cpu") -> str | None:
        """Why this strategy cannot run the problem in the dtype on the device, or None."""
        if refusal := device_refusal(f"strategy {self.key}", self.framework, device):
            return refusal
        if problem not in self.problems:
            valid = ", ".join(s.name for s in by_framework(self.framework, problem))
            return f"strategy {self.key} does not support the {problem} problem" + (
                f"; choose one of: {valid}" if valid else ""
            )
        if dtype not in self.dtypes:
            return (
                f"strategy {self.key} supports dtype {', '.join(self.dtypes)} only, not {dtype}"
                + (" (it is the question's program as written)" if self.faithful else "")
            )
        return None

    def memory_for(self, problem: str) -> MemoryModel:
        """The memory model of the problem: GBM's (the Asian payoff's too), or the moments
        problems'."""
        return self.memory if problem in PATH_PROBLEMS else self.memory_moments

    def build(self, case) -> Callable[[], JacobianResult]:
        """Prepare the strategy for a case; calling the result computes J from scratch."""
        self.check(case.problem, case.params.dtype, case.device)
        return _load(self.entry(case.problem))(case)

    def error(self, case, result: JacobianResult) -> float:
        """Largest error of the result's Jacobian against the closed form, per output scaled by
        its magnitude. The question's programs draw their own normals: their reference is the
        closed form recovered from their own terminal values."""
        from jacbench.problems import gbm, moments
        from jacbench.strategies.devices import to_host

        result = to_host(result)
        if case.problem == "asian":
            from jacbench.problems import asian

            return asian.error(case, result.jacobian, result.terminal)
        if case.problem != "gbm":
            return moments.relative_error(result.jacobian, moments.jacobian_closed_form(case.x))
        if self.drawn:  # its own normals: the closed form from its own S_T, a block at a time
            return gbm.jacobian_error_from_terminal(case.params, result.jacobian, result.terminal)
        if self.faithful:
            reference = gbm.jacobian_from_terminal(case.params, result.terminal)
            return gbm.relative_error(result.jacobian, reference)
        # A block of paths at a time: at N = 10^7 the whole float64 closed form, path and all,
        # would take 8 GB beside the normals; streamed, N may be 10^8.
        return gbm.jacobian_error(case, result.jacobian)


def _load(entry: str) -> Callable:
    module, _, func = entry.partition(":")
    return getattr(importlib.import_module(module), func)


STRATEGIES: tuple[Strategy, ...] = tuple(
    Strategy(**row) for row in (*catalog.ROWS, *catalog_steps.ROWS)
)


def by_framework(framework: str, problem: str | None = None) -> list[Strategy]:
    """The strategies of a framework, optionally only those that support a problem."""
    return [
        s
        for s in STRATEGIES
        if s.framework == framework and (problem is None or problem in s.problems)
    ]


def check_framework(framework: str) -> None:
    """UsageError naming the frameworks unless this is one of them."""
    if framework not in FRAMEWORKS:
        raise UsageError(f"unknown framework {framework!r}; choose one of: {', '.join(FRAMEWORKS)}")


def get(framework: str, name: str) -> Strategy:
    """Look up one strategy; UsageError lists the valid choices."""
    check_framework(framework)
    for s in by_framework(framework):
        if s.name == name:
            return s
    valid = ", ".join(s.name for s in by_framework(framework))
    raise UsageError(f"unknown strategy {name!r} for {framework}; choose one of: {valid}")


def default(framework: str) -> Strategy | None:
    """The framework's own Jacobian call with its defaults (None: numpy has none)."""
    return next((s for s in by_framework(framework) if s.default), None)


QUESTION_ROLES = ("fix", "solution-1", "solution-2")


def question_role(framework: str, role: str) -> Strategy:
    """A framework's strategy of a role of QUESTION_ROLES; UsageError where none has it."""
    if role not in QUESTION_ROLES:
        raise UsageError(f"unknown question role {role!r}; choose one of: "
                         + ", ".join(QUESTION_ROLES))  # fmt: skip
    found = next((s for s in by_framework(framework) if s.question == role), None)
    if found is None:
        raise UsageError(f"no {framework} strategy has the question role {role!r}")
    return found


def answer(framework: str, role: str) -> Strategy | None:
    """A framework's strategy of a role of ANSWERS."""
    return next((s for s in by_framework(framework) if s.answer == role), None)


def floor(framework: str) -> Strategy | None:
    """A framework's hand-fused floor (Strategy.floor), or None."""
    return next((s for s in by_framework(framework, "gbm") if s.floor), None)


def snippet(framework: str, role: str) -> Strategy | None:
    """The strategy a framework's snippet runs in a role of SNIPPETS (None: it shows none)."""
    return next((s for s in by_framework(framework) if s.snippet == role), None)


def compiled_variants(framework: str) -> list[tuple[str, str | None]]:
    """(compiled GBM strategy, its eager twin or None), in the registry's order."""
    return [(s.name, s.eager_twin) for s in by_framework(framework, "gbm") if s.compiled]


def blocked_pairs(framework: str) -> list[tuple[str, str]]:
    """(path-blocked GBM strategy, the strategy it runs block by block), in the registry's
    order."""
    return [(s.name, s.blocks) for s in by_framework(framework, "gbm") if s.blocked]


def executions(framework: str) -> list[str]:
    """The execution modes of a framework's GBM strategies: each has a simulation baseline."""
    return sorted({s.execution for s in by_framework(framework, "gbm")})


def simulations(framework: str) -> list[str]:
    """Every simulation of a framework: one baseline per execution mode, the same returning
    the whole path for each whole-array mode not blocked (catalog.PATH), the loop constructs
    measured as simulations only (catalog.OTHER_LOOPS), then the ones that measure drawing the
    random numbers (strategies.draws, catalog.DRAWS)."""
    modes = executions(framework)
    others = list(catalog.OTHER_LOOPS.get(framework, ()))
    return modes + path_simulations(framework) + others + catalog.draw_names(framework, modes)


def path_simulations(framework: str) -> list[str]:
    """The simulations returning the whole path, one per whole-array execution mode not
    blocked (numpy's simulation builds its path whatever it returns: it has none)."""
    return [m + catalog.PATH for m in executions(framework)
            if not is_blocked(m) and m != "numpy" and catalog.form_of(m) == "array"]  # fmt: skip


def simulation_compiles(name: str) -> bool:
    """Whether a simulation's first call compiles: its mode, blocked, written over the steps or
    returning the path, is a compiled one, or it is a TensorFlow simulation drawing inside a
    tf.function."""
    return catalog.engine(path_of(name) or name) in catalog.COMPILED or (
        name in catalog.TENSORFLOW_DRAWS
    )


def path_of(name: str) -> str | None:
    """The execution mode whose terminal-only simulation a path-returning one pairs with
    ("jit-path" -> "jit"); None for any other simulation."""
    return name.removesuffix(catalog.PATH) if name.endswith(catalog.PATH) else None


def simulation(framework: str, execution: str) -> Callable:
    """Builder of the simulation alone (no derivative), in a framework and execution mode.

    Baseline for the Jacobian-to-simulation cost ratio: it returns a callable giving S_T, or,
    for a drawing simulation (strategies.draws), what that one returns.
    """
    module = f"jacbench.strategies.{framework}_gbm"
    if (mode := path_of(execution)) is not None:
        return functools.partial(_load(f"{module}:build_simulation_path"), execution=mode)
    entry = catalog.simulation_entry(framework, execution)
    builder = _load(entry or f"{module}:build_simulation")
    return functools.partial(builder, execution=execution)
