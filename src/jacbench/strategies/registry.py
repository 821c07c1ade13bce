"""The registry: every Jacobian strategy as one record of data.

Tests, the command line, sweeps and the book all read this table, so adding a strategy is one
record here and one builder function in its framework's module. Importing this module never
imports torch, tensorflow or jax: a record names its builder as "module:function" and loads it
only when built.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from jacbench.constants import DTYPES, FRAMEWORKS
from jacbench.errors import Unsupported, UsageError
from jacbench.strategies.memory_model import MemoryModel
from jacbench.strategies.memory_model import MemoryModel as M

MODES = ("forward", "reverse", "none")
BATCHINGS = ("loop", "vectorized", "chunked", "single-pass")
# The answer code (chapter 6) prints one builder of each AD framework for each of these: the
# pathwise gradient and forward mode for the tall Jacobian, reverse mode for the wide one.
ANSWERS = ("pathwise", "forward", "wide")
# The execution of a path-blocked strategy is its framework's execution with this prefix
# ("blocked-jit"): its simulation baseline is the same simulation, blocked the same way.
BLOCKED = "blocked-"


def is_blocked(execution: str) -> bool:
    """Whether an execution mode runs one block of paths at a time (strategies.blocked)."""
    return execution.startswith(BLOCKED)


class JacobianResult(NamedTuple):
    """What every strategy returns as numpy arrays: the Jacobian and the function's value.

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
    # The answer code prints its builder: one of ANSWERS, or "".
    answer: str = ""
    # The allocator its memory model was fitted under (and is checked under by the tests).
    memory_fitted_under: str = "glibc"

    @property
    def key(self) -> str:
        return f"{self.framework}/{self.name}"

    @property
    def blocked(self) -> bool:
        """One block of paths at a time, the normals drawn per block (strategies.blocked)."""
        return is_blocked(self.execution)

    @property
    def engine(self) -> str:
        """The execution without the blocking: eager, function, xla, jit, inductor, numpy."""
        return self.execution.removeprefix(BLOCKED)

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
        return twin.name if twin.execution == "eager" else None

    def entry(self, problem: str = "gbm") -> str:
        """The builder, "module:function": one module per framework and problem (the batched
        moments problem shares the moments module)."""
        module = f"jacbench.strategies.{self.framework}_{problem.split('-')[0]}"
        return f"{module}:build_{self.name.replace('-', '_')}"

    def unsupported(self, problem: str, dtype: str) -> str | None:
        """Why this strategy cannot run the problem in the dtype, or None when it can."""
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
        """The memory model of the problem: GBM's, or the moments problems'."""
        return self.memory if problem == "gbm" else self.memory_moments

    def build(self, case) -> Callable[[], JacobianResult]:
        """Prepare the strategy for a case; calling the result computes J from scratch."""
        self.check(case.problem, case.params.dtype)
        return _load(self.entry(case.problem))(case)

    def error(self, case, result: JacobianResult) -> float:
        """Largest error of the result's Jacobian against the closed form, per output scaled by
        its magnitude. The question's programs draw their own normals: their reference is the
        closed form recovered from their own terminal values."""
        from jacbench.problems import gbm, moments

        if case.problem != "gbm":
            return moments.relative_error(result.jacobian, moments.jacobian_closed_form(case.x))
        if case.streamed:  # N may be 10^8: the closed form is computed a block at a time
            return gbm.jacobian_error(case, result.jacobian)
        if self.faithful:
            reference = gbm.jacobian_from_terminal(case.params, result.terminal)
        else:
            reference = gbm.jacobian_closed_form(case)
        return gbm.relative_error(result.jacobian, reference)


def _load(entry: str) -> Callable:
    module, _, func = entry.partition(":")
    return getattr(importlib.import_module(module), func)


def _s(framework, name, mode, batching, execution, description, **kw) -> Strategy:
    compiled = execution.removeprefix(BLOCKED) in ("function", "xla", "jit", "inductor")
    return Strategy(framework, name, mode, batching, compiled, execution, description, **kw)


F32 = ("float32",)
BOTH = ("gbm", "moments")
BLOCK_NOTE = (" One block of paths at a time (the normals drawn per block, nothing of size "
              "M x N held), written into the N x 2 result.")  # fmt: skip

STRATEGIES: tuple[Strategy, ...] = (
    # --- PyTorch -------------------------------------------------------------------------
    # The loops hold one tape at a time: that is their model, measured with glibc-mmap. Under
    # glibc's default allocator freed per-row buffers stay resident by an amount that jumps
    # with N (1.6 GiB at N=2,000, 30 MiB at 2,500, 0.9 GiB at 3,000): outside any model, it
    # is measured as the allocator factor, and the memory cap catches it.
    _s("torch", "question", "reverse", "loop", "eager",
       "The question's program as written: normals drawn inside with torch.manual_seed, "
       "torch.autograd.functional.jacobian with its defaults.", dtypes=F32, faithful=True,
       memory=M(arrays=11, fixed_mib=8), candidate=False, memory_fitted_under="glibc-mmap"),
    _s("torch", "functional-loop", "reverse", "loop", "eager",
       "torch.autograd.functional.jacobian with its defaults: one backward pass per output.",
       memory=M(arrays=11, fixed_mib=8), problems=BOTH, default=True,
       memory_fitted_under="glibc-mmap",
       memory_moments=M(arrays=4.5, fixed_mib=60)),
    _s("torch", "functional-vectorized", "reverse", "vectorized", "eager",
       "torch.autograd.functional.jacobian(vectorize=True): all N backward passes in one vmap.",
       memory=M(batch=3.0, fixed_mib=100), problems=BOTH, vectorizes="functional-loop",
       memory_moments=M(arrays=7.5, fixed_mib=100)),
    _s("torch", "functional-forward", "forward", "vectorized", "eager",
       'torch.autograd.functional.jacobian(strategy="forward-mode", vectorize=True).',
       memory=M(arrays=11, fixed_mib=100)),
    _s("torch", "grad-loop", "reverse", "loop", "eager",
       "One torch.autograd.grad call per output on a retained graph.",
       memory=M(arrays=11, fixed_mib=8), problems=BOTH, answer="wide",
       memory_fitted_under="glibc-mmap",
       memory_moments=M(arrays=5.5, fixed_mib=60)),
    _s("torch", "batched-backward", "reverse", "vectorized", "eager",
       "torch.autograd.grad(is_grads_batched=True) with an N x N identity as cotangents.",
       memory=M(batch=3.0, fixed_mib=100), problems=BOTH,
       memory_moments=M(arrays=12, fixed_mib=150)),
    _s("torch", "jacrev", "reverse", "vectorized", "eager",
       "torch.func.jacrev: vmap over N vector-Jacobian products.",
       memory=M(batch=3.0, fixed_mib=150), problems=BOTH, vectorizes="grad-loop",
       memory_moments=M(arrays=6.5, fixed_mib=150)),
    _s("torch", "jacrev-chunked", "reverse", "chunked", "eager",
       "torch.func.jacrev with chunk_size: vmap over chunks of VJPs to bound memory.",
       memory=M(chunk=3.2, fixed_mib=80)),
    _s("torch", "jacfwd", "forward", "vectorized", "eager",
       "torch.func.jacfwd: vmap over 2 Jacobian-vector products, one per input.",
       memory=M(arrays=11, fixed_mib=100), problems=BOTH,
       memory_moments=M(batch=2.0, fixed_mib=100)),
    _s("torch", "jvp", "forward", "loop", "eager",
       "Two torch.func.jvp calls, one per input (spot, vol).",
       memory=M(arrays=9.5, fixed_mib=100), answer="forward"),
    _s("torch", "pathwise", "reverse", "single-pass", "eager",
       "Spot and vol broadcast to per-path tensors; one backward of sum(S_T). Exact because "
       "path i depends only on its own copy.",
       memory=M(arrays=6.4, fixed_mib=30), answer="pathwise"),
    _s("torch", "compiled-jvp", "forward", "loop", "inductor",
       "The two torch.func.jvp calls compiled with torch.compile (inductor, C++ on CPU).",
       memory=M(arrays=3, fixed_mib=180), variant_of="jvp"),
    _s("torch", "compiled-pathwise", "reverse", "single-pass", "inductor",
       "The pathwise gradient (torch.func.grad of sum(S_T)) compiled with torch.compile.",
       memory=M(arrays=3, fixed_mib=180), variant_of="pathwise"),
    _s("torch", "grad-loop-create-graph", "reverse", "loop", "eager",
       "The second question's solution 1: one torch.autograd.grad per output with "
       "create_graph=True, recording a graph a first-order Jacobian never uses.",
       problems=("moments",), candidate=False,
       memory_moments=M(arrays=4.5, fixed_mib=100)),
    _s("torch", "vmap-jacrev", "reverse", "vectorized", "eager",
       "torch.func.vmap(torch.func.jacrev(f)): per-sample Jacobians of a batch of rows, the "
       "functorch answer to the second question.",
       problems=("moments-batch",),
       memory_moments=M(arrays=6, fixed_mib=150)),
    _s("torch", "blocked-jvp", "forward", "loop", "blocked-eager",
       "The two torch.func.jvp calls of jvp." + BLOCK_NOTE,
       memory=M(arrays=0, block=32, fixed_mib=30), variant_of="jvp"),
    _s("torch", "blocked-pathwise", "reverse", "single-pass", "blocked-eager",
       "The pathwise gradient of pathwise." + BLOCK_NOTE,
       memory=M(arrays=0, block=23, fixed_mib=30), variant_of="pathwise"),
    # --- TensorFlow ----------------------------------------------------------------------
    _s("tensorflow", "question", "reverse", "vectorized", "eager",
       "The question's program as written: tf.random.normal inside, no cumulative sum of the "
       "increments (a different process), GradientTape.jacobian defaults.",
       dtypes=F32, faithful=True, candidate=False,
       memory=M(batch=3.2, fixed_mib=70)),
    _s("tensorflow", "tape-jacobian-pfor", "reverse", "vectorized", "eager",
       "GradientTape.jacobian with its defaults: pfor vectorizes all N backward passes.",
       memory=M(batch=3.2, fixed_mib=70), problems=BOTH, default=True,
       vectorizes="tape-jacobian-loop",
       memory_moments=M(arrays=26, fixed_mib=10)),
    _s("tensorflow", "tape-jacobian-pfor-chunked", "reverse", "chunked", "eager",
       "GradientTape.jacobian(parallel_iterations=chunk): pfor in chunks to bound memory.",
       memory=M(chunk=3.4, fixed_mib=60)),
    _s("tensorflow", "tape-jacobian-loop", "reverse", "loop", "eager",
       "GradientTape.jacobian(experimental_use_pfor=False) on a persistent tape: a while loop "
       "of N gradients.",
       memory=M(arrays=50, fixed_mib=2), problems=BOTH,
       memory_moments=M(arrays=13, fixed_mib=5)),
    _s("tensorflow", "forward-accumulator", "forward", "loop", "eager",
       "tf.autodiff.ForwardAccumulator, one forward pass per input.",
       memory=M(arrays=8.4, fixed_mib=10), answer="forward"),
    _s("tensorflow", "forward-accumulator-function", "forward", "loop", "function",
       "ForwardAccumulator inside tf.function (graph mode).",
       memory=M(arrays=12.7, fixed_mib=25), variant_of="forward-accumulator"),
    _s("tensorflow", "forward-accumulator-xla", "forward", "loop", "xla",
       "ForwardAccumulator inside tf.function(jit_compile=True) (XLA).",
       memory=M(arrays=9.5, fixed_mib=100), variant_of="forward-accumulator"),
    _s("tensorflow", "pathwise", "reverse", "single-pass", "eager",
       "Per-path spot and vol; one tape.gradient of sum(S_T).",
       memory=M(arrays=8.5, fixed_mib=10), answer="pathwise"),
    _s("tensorflow", "pathwise-function", "reverse", "single-pass", "function",
       "Pathwise gradient inside tf.function (graph mode).",
       memory=M(arrays=5.5, fixed_mib=25), variant_of="pathwise"),
    _s("tensorflow", "pathwise-xla", "reverse", "single-pass", "xla",
       "Pathwise gradient inside tf.function(jit_compile=True) (XLA).",
       memory=M(arrays=4, fixed_mib=95), variant_of="pathwise"),
    _s("tensorflow", "blocked-forward-function", "forward", "loop", "blocked-function",
       "The ForwardAccumulator passes of forward-accumulator-function, in one tf.function."
       + BLOCK_NOTE,
       memory=M(arrays=0, block=11, fixed_mib=30), variant_of="forward-accumulator-function"),
    _s("tensorflow", "blocked-pathwise-function", "reverse", "single-pass", "blocked-function",
       "The pathwise gradient of pathwise-function, in one tf.function." + BLOCK_NOTE,
       memory=M(arrays=0, block=9, fixed_mib=30), variant_of="pathwise-function"),
    _s("tensorflow", "batch-jacobian", "reverse", "vectorized", "eager",
       "GradientTape.batch_jacobian: per-row Jacobians of a batch (a batch of one for a "
       "single X).",
       problems=("moments", "moments-batch"),
       memory_moments=M(arrays=27, fixed_mib=20)),
    _s("tensorflow", "tape-jacobian-function", "reverse", "vectorized", "function",
       "GradientTape.jacobian (pfor) inside tf.function: traced and vectorized once, on the "
       "first call; eagerly, pfor traces a new function on every call.",
       problems=("moments",), variant_of="tape-jacobian-pfor", answer="wide",
       memory_moments=M(arrays=26, fixed_mib=10)),
    # --- JAX -----------------------------------------------------------------------------
    _s("jax", "jacrev", "reverse", "vectorized", "jit",
       "jax.jacrev under jit: vmap over N VJPs.",
       memory=M(batch=3.3, fixed_mib=100), problems=BOTH, default=True, vectorizes="vjp-loop",
       answer="wide",
       memory_moments=M(arrays=4.5, fixed_mib=50)),
    _s("jax", "vmap-jacrev", "reverse", "vectorized", "jit",
       "jax.vmap(jax.jacrev(f)) under jit: per-sample Jacobians of a batch of rows.",
       problems=("moments-batch",),
       memory_moments=M(arrays=5, fixed_mib=40)),
    _s("jax", "jacrev-chunked", "reverse", "chunked", "jit",
       "jax.lax.map(batch_size=chunk) over the VJP under jit: chunks of N VJPs.",
       memory=M(chunk=3.0, fixed_mib=100)),
    _s("jax", "jacfwd", "forward", "vectorized", "jit",
       "jax.jacfwd under jit: vmap over 2 JVPs.",
       memory=M(arrays=3.5, fixed_mib=40), problems=BOTH,
       memory_moments=M(batch=2.0, fixed_mib=100)),
    _s("jax", "jvp", "forward", "loop", "jit",
       "Two jax.jvp calls in one jit.",
       memory=M(arrays=3.5, fixed_mib=40), answer="forward"),
    _s("jax", "vjp-loop", "reverse", "loop", "jit",
       "jax.lax.map over the N rows, one VJP each, under jit: a compiled loop.",
       memory=M(arrays=3, fixed_mib=60)),
    _s("jax", "pathwise", "reverse", "single-pass", "jit",
       "Per-path spot and vol; one jax.grad of sum(S_T) under jit.",
       memory=M(arrays=6.5, fixed_mib=40), answer="pathwise"),
    _s("jax", "blocked-jvp", "forward", "loop", "blocked-jit",
       "The two jax.jvp calls of jvp, jitted once for a block." + BLOCK_NOTE,
       memory=M(arrays=0, block=11, fixed_mib=40), variant_of="jvp"),
    _s("jax", "blocked-pathwise", "reverse", "single-pass", "blocked-jit",
       "The pathwise gradient of pathwise, jitted once for a block." + BLOCK_NOTE,
       memory=M(arrays=0, block=17, fixed_mib=40), variant_of="pathwise"),
    # --- numpy ---------------------------------------------------------------------------
    _s("numpy", "analytic", "none", "single-pass", "numpy",
       "The closed form: (S_T / S0, S_T (W_T - sigma T)).",
       memory=M(arrays=3), problems=(*BOTH, "moments-batch"),
       memory_moments=M(arrays=6, fixed_mib=2)),
    _s("numpy", "finite-difference", "none", "single-pass", "numpy",
       "Central bump-and-revalue of spot and vol with the same normals: 4 extra simulations.",
       memory=M(arrays=5.1, fixed_mib=4)),
)  # fmt: skip


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


def answer(framework: str, role: str) -> Strategy | None:
    """The strategy whose builder the answer code prints for a role of ANSWERS."""
    return next((s for s in by_framework(framework) if s.answer == role), None)


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


def simulation(framework: str, execution: str) -> Callable:
    """Builder of the simulation alone (no derivative), in a framework and execution mode.

    Baseline for the Jacobian-to-simulation cost ratio: it returns a callable giving S_T.
    """
    builder = _load(f"jacbench.strategies.{framework}_gbm:build_simulation")
    return functools.partial(builder, execution=execution)
