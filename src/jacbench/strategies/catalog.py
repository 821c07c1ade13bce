"""The registry's table: every Jacobian strategy as one row of data.

Each row becomes a strategies.registry.Strategy (its fields and roles are documented there);
adding a strategy is one row here and one builder function in its framework's module. Only
data: nothing here imports a framework.
"""

from __future__ import annotations

from jacbench.strategies.memory_model import MemoryModel as M

# The execution of a path-blocked strategy is its framework's execution with this prefix
# ("blocked-jit"): its simulation baseline is the same simulation, blocked the same way.
BLOCKED = "blocked-"


# How the simulation is written, an axis like mode and batching: "array", the question's
# whole-array form (a cumulative sum over all steps, every framework building the (M+1) x N
# path), or "steps", a loop over the time steps carrying log S (and, in forward mode, its
# tangent) from one step to the next, reading each step's normals once. The execution of a
# step-form strategy names its simulation with a prefix: "steps-" for the loop over the case's
# normals, "drawn-" for the loop that draws its own normals inside, a block of paths a call.
# A loop construct other than the framework's first is a suffix: "steps-jit-fori" (JAX's
# fori_loop beside lax.scan), "steps-xla-while" (tf.while_loop beside the unrolled loop).
FORMS = ("array", "steps")
STEPS = "steps-"
DRAWN = "drawn-"
# A simulation that draws the normals inside the loop as a drawn one does and only sums them:
# what drawing costs ("draws-jit").
DRAWS = "draws-"
LOOPS = ("fori", "while", "scan")

# The execution modes that compile: a tf.function graph, XLA, jax.jit, torch.compile.
COMPILED = ("function", "xla", "jit", "inductor")


def engine(execution: str) -> str:
    """How an execution runs, without its blocking, form or loop construct: eager, function,
    xla, jit, inductor or numpy ("steps-xla-while" -> "xla")."""
    for prefix in (BLOCKED, STEPS, DRAWN, DRAWS):
        execution = execution.removeprefix(prefix)
    return execution.split("-")[0]


def form_of(execution: str) -> str:
    """The form of the simulation an execution runs (FORMS)."""
    return "steps" if execution.startswith((STEPS, DRAWN, DRAWS)) else "array"


def record(framework, name, mode, batching, execution, description, **kw) -> dict:
    compiled = engine(execution) in COMPILED
    return dict(framework=framework, name=name, mode=mode, batching=batching, compiled=compiled,
                execution=execution, description=description, form=form_of(execution),
                **kw)  # fmt: skip


F32 = ("float32",)
BOTH = ("gbm", "moments")
# The GBM's terminal value and the arithmetic-average (Asian) call on the same paths.
PAYOFFS = ("gbm", "asian")
BLOCK_NOTE = (" One block of paths at a time (the normals drawn per block, nothing of size "
              "M x N held), written into the N x 2 result.")  # fmt: skip
# The terminal-only forms: the framework's default vectorized reverse mode without the path.
TERMINAL_NOTE = (", with S_T computed from W_T (the normals summed outside the differentiated "
                 "function) and no path kept in the graph: each of the N cotangents is "
                 "N-sized, not (M+1) x N. Shown for the mechanism; the pathwise gradient needs "
                 "one backward pass, not N.")  # fmt: skip
# The floor a Jacobian can reach, one per framework in its compiled mode: S_T and both
# derivatives written by hand, in one compiled pass, returned as a Jacobian returns them. Not a
# way to differentiate: no candidate.
FLOOR = (
    "The floor: S_T and both derivatives written by hand (S_T / S0, S_T (W_T - sigma T)) "
    "in one compiled pass, no automatic differentiation."
)
# The suffix of a simulation that returns the whole path (jit-path, of the jit mode): a compiler
# given S_T alone to return drops the path, which the question keeps.
PATH = "-path"
# One N x N array in the memory model's batch unit (N path arrays of M+1 = 53 rows). What a
# terminal-only form's vectorized reverse mode holds does not grow with M: its coefficient holds
# at the problem's M = 52, where it was fitted (N = 1,000 to 10,000, JAX's to 20,000).
NN = 1 / 53

ROWS: tuple[dict, ...] = (
    # --- PyTorch -------------------------------------------------------------------------
    # The loops hold one tape at a time: that is their model, measured with glibc-mmap. Under
    # glibc's default allocator freed per-row buffers stay resident by an amount that jumps
    # with N (1.6 GiB at N=2,000, 30 MiB at 2,500, 0.9 GiB at 3,000): outside any model, it
    # is measured as the allocator factor, and the memory cap catches it.
    record("torch", "question", "reverse", "loop", "eager",
           "The question's program as written: normals drawn inside with torch.manual_seed, "
           "torch.autograd.functional.jacobian with its defaults.",
           call="torch.autograd.functional.jacobian(f, x), normals drawn in f",
           dtypes=F32, faithful=True,
           memory=M(arrays=11, fixed_mib=8), candidate=False, memory_fitted_under="glibc-mmap"),
    record("torch", "functional-loop", "reverse", "loop", "eager",
           "torch.autograd.functional.jacobian with its defaults: one backward pass per output.",
           call="torch.autograd.functional.jacobian(f, x)",
           label="torch.autograd.functional.jacobian",
           memory=M(arrays=11, fixed_mib=8), problems=BOTH, default=True,
           memory_fitted_under="glibc-mmap",
           memory_moments=M(arrays=4.5, fixed_mib=60)),
    record("torch", "functional-vectorized", "reverse", "vectorized", "eager",
           "torch.autograd.functional.jacobian(vectorize=True): all N backward passes in one vmap.",
           call="torch.autograd.functional.jacobian(f, x, vectorize=True)",
           label="jacobian(..., vectorize=True)",
           memory=M(batch=3.0, fixed_mib=100), problems=BOTH, vectorizes="functional-loop",
           memory_moments=M(arrays=7.5, fixed_mib=100)),
    record("torch", "functional-forward", "forward", "vectorized", "eager",
           'torch.autograd.functional.jacobian(strategy="forward-mode", vectorize=True).',
           call='torch.autograd.functional.jacobian(f, x, vectorize=True, strategy="forward-mode")',
           memory=M(arrays=11, fixed_mib=100), question="fix"),
    record("torch", "grad-loop", "reverse", "loop", "eager",
           "One torch.autograd.grad call per output on a retained graph.",
           call="torch.autograd.grad(y[i], x, retain_graph=True) for each i",
           label="torch.autograd.grad, once per output",
           snippet="wide",
           memory=M(arrays=11, fixed_mib=8), problems=BOTH, answer="wide",
           memory_fitted_under="glibc-mmap",
           memory_moments=M(arrays=5.5, fixed_mib=60)),
    record("torch", "batched-backward", "reverse", "vectorized", "eager",
           "torch.autograd.grad(is_grads_batched=True) with an N x N identity as cotangents; for "
           "the moments problem the second question's solution 2: X.repeat(3, 1) and one backward "
           "with the 3 x 3 identity.",
           call="torch.autograd.grad(y, x, eye, is_grads_batched=True), or y.backward(eye)",
           label=(("gbm", "torch.autograd.grad(..., is_grads_batched=True)"),
                  ("moments", "X.repeat(3, 1), one backward pass")),
           memory=M(batch=3.0, fixed_mib=100), problems=BOTH, question_timed=True,
           memory_moments=M(arrays=12, fixed_mib=150), question="solution-2"),
    record("torch", "jacrev", "reverse", "vectorized", "eager",
           "torch.func.jacrev: vmap over N vector-Jacobian products.",
           call="torch.func.jacrev(f, argnums=(0, 1))", label="torch.func.jacrev",
           memory=M(batch=3.0, fixed_mib=150), problems=BOTH, vectorizes="grad-loop",
           memory_moments=M(arrays=6.5, fixed_mib=150)),
    record("torch", "jacrev-terminal", "reverse", "vectorized", "eager",
           "torch.func.jacrev: vmap over N VJPs" + TERMINAL_NOTE,
           call="torch.func.jacrev(f, argnums=(0, 1)), S_T from W_T",
           memory=M(arrays=1, batch=3 * NN, fixed_mib=90), candidate=False),
    record("torch", "jacrev-chunked", "reverse", "chunked", "eager",
           "torch.func.jacrev with chunk_size: vmap over chunks of VJPs to bound memory.",
           call="torch.func.jacrev(f, argnums=(0, 1), chunk_size=c)",
           label="torch.func.jacrev(..., chunk_size={chunk})",
           memory=M(chunk=3.2, fixed_mib=80)),
    record("torch", "jacfwd", "forward", "vectorized", "eager",
           "torch.func.jacfwd: vmap over 2 Jacobian-vector products, one per input.",
           call="torch.func.jacfwd(f, argnums=(0, 1))", label="torch.func.jacfwd",
           memory=M(arrays=11, fixed_mib=100), problems=BOTH,
           memory_moments=M(batch=2.0, fixed_mib=100)),
    record("torch", "jvp", "forward", "loop", "eager",
           "Two torch.func.jvp calls, one per input (spot, vol).",
           call="torch.func.jvp(f, x, v) once per input",
           memory=M(arrays=9.5, fixed_mib=100), answer="forward"),
    record("torch", "pathwise", "reverse", "single-pass", "eager",
           "Spot and vol broadcast to per-path tensors; one backward of sum(S_T). Exact because "
           "path i depends only on its own copy.",
           call="torch.autograd.grad(f(xs).sum(), xs)",
           memory=M(arrays=6.4, fixed_mib=30), answer="pathwise", snippet="tall-once"),
    record("torch", "compiled-jvp", "forward", "loop", "inductor",
           "The two torch.func.jvp calls compiled with torch.compile (inductor, C++ on CPU).",
           call="torch.compile of the two torch.func.jvp calls",
           memory=M(arrays=3, fixed_mib=180), variant_of="jvp", problems=PAYOFFS),
    record("torch", "compiled-pathwise", "reverse", "single-pass", "inductor",
           "The pathwise gradient (torch.func.grad of sum(S_T)) compiled with torch.compile.",
           call="torch.compile(torch.func.grad(lambda xs: f(xs).sum()))",
           memory=M(arrays=3, fixed_mib=180), variant_of="pathwise"),
    record("torch", "hand-fused", "none", "single-pass", "inductor", FLOOR,
           call="torch.compile of S_T, S_T / S0 and S_T (W_T - sigma T), no AD",
           memory=M(arrays=2, fixed_mib=180), candidate=False, floor=True),
    record("torch", "grad-loop-create-graph", "reverse", "loop", "eager",
           "The second question's solution 1: one torch.autograd.grad per output with "
           "create_graph=True, recording a graph a first-order Jacobian never uses (on a GPU each "
           "row copied into J = torch.zeros(3, n) on the CPU, as the question did).",
           call="torch.autograd.grad(y[i], x, create_graph=True) for each i",
           label="autograd.grad with create_graph=True",
           problems=("moments",), candidate=False, question_timed=True,
           memory_moments=M(arrays=4.5, fixed_mib=100), question="solution-1"),
    # The third answer's hand-written derivative in PyTorch, to time on a GPU beside the two
    # solutions (numpy's closed form cannot run there). Not a way to differentiate: no candidate.
    record("torch", "analytic", "none", "single-pass", "eager",
           "The second question's solution 3, the third answer's hand-written derivative: "
           "torch.stack((2X, 3X^2, 4X^3)), no automatic differentiation.",
           call="torch.stack((2 * X, 3 * X**2, 4 * X**3)), written by hand",
           label="2X, 3X², 4X³ by hand",
           problems=("moments",), candidate=False, question_timed=True,
           memory_moments=M(arrays=6, fixed_mib=2)),
    record("torch", "vmap-jacrev", "reverse", "vectorized", "eager",
           "torch.func.vmap(torch.func.jacrev(f)): per-sample Jacobians of a batch of rows, the "
           "functorch answer to the second question.",
           call="torch.func.vmap(torch.func.jacrev(f))",
           problems=("moments-batch",),
           memory_moments=M(arrays=6, fixed_mib=150)),
    record("torch", "blocked-jvp", "forward", "loop", "blocked-eager",
           "The two torch.func.jvp calls of jvp." + BLOCK_NOTE,
           call="torch.func.jvp(f, x, v) once per input, block by block",
           memory=M(arrays=0, block=32, fixed_mib=30), variant_of="jvp"),
    record("torch", "blocked-pathwise", "reverse", "single-pass", "blocked-eager",
           "The pathwise gradient of pathwise." + BLOCK_NOTE,
           call="torch.autograd.grad(f(xs).sum(), xs), block by block",
           memory=M(arrays=0, block=23, fixed_mib=30), variant_of="pathwise"),
    # --- TensorFlow ----------------------------------------------------------------------
    record("tensorflow", "question", "reverse", "vectorized", "eager",
           "The question's program as written: tf.random.normal inside, no cumulative sum of the "
           "increments (a different process), GradientTape.jacobian defaults.",
           call="tape.jacobian(y, x), normals drawn in f",
           dtypes=F32, faithful=True, candidate=False,
           memory=M(batch=3.2, fixed_mib=70)),
    # batch=3.2: pfor's program holds three batches of N path arrays at once when its ready
    # operations run side by side (strategies.pfor_anatomy), and 3.2 were measured at N = 3,000.
    record("tensorflow", "tape-jacobian-pfor", "reverse", "vectorized", "eager",
           "GradientTape.jacobian with its defaults: pfor vectorizes all N backward passes.",
           call="tape.jacobian(y, x)", label="tape.jacobian",
           memory=M(batch=3.2, fixed_mib=70), problems=BOTH, default=True,
           vectorizes="tape-jacobian-loop",
           memory_moments=M(arrays=26, fixed_mib=10)),
    record("tensorflow", "tape-jacobian-terminal", "reverse", "vectorized", "eager",
           "GradientTape.jacobian with its defaults (pfor over N backward passes)" + TERMINAL_NOTE,
           call="tape.jacobian(y, x), S_T from W_T",
           memory=M(arrays=1, batch=2 * NN, fixed_mib=40), candidate=False),
    record("tensorflow", "tape-jacobian-pfor-chunked", "reverse", "chunked", "eager",
           "GradientTape.jacobian(parallel_iterations=chunk): pfor in chunks to bound memory.",
           call="tape.jacobian(y, x, parallel_iterations=c)",
           label="tape.jacobian(..., parallel_iterations={chunk})",
           memory=M(chunk=3.4, fixed_mib=60)),
    record("tensorflow", "tape-jacobian-loop", "reverse", "loop", "eager",
           "GradientTape.jacobian(experimental_use_pfor=False) on a persistent tape: a while loop "
           "of N gradients.",
           call="tape.jacobian(y, x, experimental_use_pfor=False)",
           label=(("gbm", "tape.jacobian(..., experimental_use_pfor=False)"),
                  ("moments", "tape.jacobian without pfor")),
           memory=M(arrays=50, fixed_mib=2), problems=BOTH,
           memory_moments=M(arrays=13, fixed_mib=5)),
    record("tensorflow", "forward-accumulator", "forward", "loop", "eager",
           "tf.autodiff.ForwardAccumulator, one forward pass per input.",
           call="tf.autodiff.ForwardAccumulator(x, v) once per input",
           label="tf.autodiff.ForwardAccumulator",
           memory=M(arrays=8.4, fixed_mib=10), answer="forward"),
    record("tensorflow", "forward-accumulator-function", "forward", "loop", "function",
           "ForwardAccumulator inside tf.function (graph mode).",
           call="tf.autodiff.ForwardAccumulator inside tf.function",
           memory=M(arrays=12.7, fixed_mib=25), variant_of="forward-accumulator"),
    record("tensorflow", "forward-accumulator-xla", "forward", "loop", "xla",
           "ForwardAccumulator inside tf.function(jit_compile=True) (XLA).",
           call="tf.autodiff.ForwardAccumulator inside tf.function(jit_compile=True)",
           memory=M(arrays=9.5, fixed_mib=100), variant_of="forward-accumulator",
           problems=PAYOFFS),
    record("tensorflow", "pathwise", "reverse", "single-pass", "eager",
           "Per-path spot and vol; one tape.gradient of sum(S_T).",
           call="tape.gradient(tf.reduce_sum(f(xs)), xs)",
           memory=M(arrays=8.5, fixed_mib=10), answer="pathwise", snippet="tall-once"),
    record("tensorflow", "pathwise-function", "reverse", "single-pass", "function",
           "Pathwise gradient inside tf.function (graph mode).",
           call="tape.gradient(tf.reduce_sum(f(xs)), xs) inside tf.function",
           memory=M(arrays=5.5, fixed_mib=25), variant_of="pathwise"),
    record("tensorflow", "pathwise-xla", "reverse", "single-pass", "xla",
           "Pathwise gradient inside tf.function(jit_compile=True) (XLA).",
           call="tape.gradient(tf.reduce_sum(f(xs)), xs) inside tf.function(jit_compile=True)",
           memory=M(arrays=4, fixed_mib=95), variant_of="pathwise"),
    record("tensorflow", "hand-fused", "none", "single-pass", "xla", FLOOR,
           call="tf.function(jit_compile=True) of S_T, S_T / S0 and S_T (W_T - sigma T), no AD",
           memory=M(arrays=2, fixed_mib=95), candidate=False, floor=True),
    record("tensorflow", "blocked-forward-function", "forward", "loop", "blocked-function",
           "The ForwardAccumulator passes of forward-accumulator-function, in one tf.function."
           + BLOCK_NOTE,
           call="tf.autodiff.ForwardAccumulator inside tf.function, block by block",
           memory=M(arrays=0, block=11, fixed_mib=30), variant_of="forward-accumulator-function"),
    record("tensorflow", "blocked-pathwise-function", "reverse", "single-pass", "blocked-function",
           "The pathwise gradient of pathwise-function, in one tf.function." + BLOCK_NOTE,
           call="tape.gradient inside tf.function, block by block",
           memory=M(arrays=0, block=9, fixed_mib=30), variant_of="pathwise-function"),
    record("tensorflow", "batch-jacobian", "reverse", "vectorized", "eager",
           "GradientTape.batch_jacobian: per-row Jacobians of a batch (a batch of one for a "
           "single X).",
           call="tape.batch_jacobian(y, x)", label="tape.batch_jacobian",
           problems=("moments", "moments-batch"),
           memory_moments=M(arrays=27, fixed_mib=20)),
    record("tensorflow", "tape-jacobian-function", "reverse", "vectorized", "function",
           "GradientTape.jacobian (pfor) inside tf.function: traced and vectorized once, on the "
           "first call; eagerly, pfor traces a new function on every call.",
           call="tape.jacobian(y, x) inside tf.function", label="tape.jacobian inside tf.function",
           snippet="wide",
           problems=("moments",), variant_of="tape-jacobian-pfor", answer="wide",
           memory_moments=M(arrays=26, fixed_mib=10)),
    # --- JAX -----------------------------------------------------------------------------
    record("jax", "jacrev", "reverse", "vectorized", "jit",
           "jax.jacrev under jit: vmap over N VJPs.",
           call="jax.jit(jax.jacrev(f, argnums=(0, 1)))", label="jax.jacrev",
           snippet="wide",
           memory=M(batch=3.3, fixed_mib=100), problems=BOTH, default=True, vectorizes="vjp-loop",
           answer="wide",
           memory_moments=M(arrays=4.5, fixed_mib=50)),
    record("jax", "jacrev-terminal", "reverse", "vectorized", "jit",
           "jax.jacrev under jit: vmap over N VJPs" + TERMINAL_NOTE,
           call="jax.jit(jax.jacrev(f, argnums=(0, 1))), S_T from W_T",
           memory=M(arrays=1, batch=4 * NN, fixed_mib=60), candidate=False),
    record("jax", "vmap-jacrev", "reverse", "vectorized", "jit",
           "jax.vmap(jax.jacrev(f)) under jit: per-sample Jacobians of a batch of rows.",
           call="jax.jit(jax.vmap(jax.jacrev(f)))",
           problems=("moments-batch",),
           memory_moments=M(arrays=5, fixed_mib=40)),
    record("jax", "jacrev-chunked", "reverse", "chunked", "jit",
           "jax.lax.map(batch_size=chunk) over the VJP under jit: chunks of N VJPs.",
           call="jax.lax.map(vjp, rows, batch_size=c) inside jax.jit",
           label="jax.lax.map(..., batch_size={chunk}) over jax.vjp",
           memory=M(chunk=3.0, fixed_mib=100)),
    record("jax", "jacfwd", "forward", "vectorized", "jit",
           "jax.jacfwd under jit: vmap over 2 JVPs.",
           call="jax.jit(jax.jacfwd(f, argnums=(0, 1)))", label="jax.jacfwd",
           memory=M(arrays=3.5, fixed_mib=40), problems=BOTH,
           memory_moments=M(batch=2.0, fixed_mib=100)),
    record("jax", "jvp", "forward", "loop", "jit",
           "Two jax.jvp calls in one jit.",
           call="jax.jvp(f, x, v) once per input, inside jax.jit",
           memory=M(arrays=3.5, fixed_mib=40), answer="forward", problems=PAYOFFS),
    record("jax", "vjp-loop", "reverse", "loop", "jit",
           "jax.lax.map over the N rows, one VJP each, under jit: a compiled loop.",
           call="jax.lax.map(vjp, rows) inside jax.jit", label="jax.lax.map over jax.vjp",
           memory=M(arrays=3, fixed_mib=60)),
    record("jax", "pathwise", "reverse", "single-pass", "jit",
           "Per-path spot and vol; one jax.grad of sum(S_T) under jit.",
           call="jax.jit(jax.grad(lambda xs: f(xs).sum()))",
           memory=M(arrays=6.5, fixed_mib=40), answer="pathwise"),
    record("jax", "pathwise-no-ynn", "reverse", "single-pass", "jit",
           "pathwise compiled with XLA's YNNPACK fusion turned off "
           "(xla_cpu_experimental_ynn_fusion_type empty): what those fusions cost a reverse pass.",
           call="jax.jit(jax.grad(lambda xs: f(xs).sum()), compiler_options=...)",
           memory=M(arrays=6.5, fixed_mib=40), candidate=False, experiment="ynnpack"),
    record("jax", "hand-fused", "none", "single-pass", "jit", FLOOR,
           call="jax.jit of S_T, S_T / S0 and S_T (W_T - sigma T), no AD",
           memory=M(arrays=2, fixed_mib=40), candidate=False, floor=True),
    record("jax", "blocked-jvp", "forward", "loop", "blocked-jit",
           "The two jax.jvp calls of jvp, jitted once for a block." + BLOCK_NOTE,
           call="jax.jvp(f, x, v) inside jax.jit, block by block",
           memory=M(arrays=0, block=11, fixed_mib=40), variant_of="jvp"),
    record("jax", "blocked-pathwise", "reverse", "single-pass", "blocked-jit",
           "The pathwise gradient of pathwise, jitted once for a block." + BLOCK_NOTE,
           call="jax.jit(jax.grad(lambda xs: f(xs).sum())), block by block",
           memory=M(arrays=0, block=17, fixed_mib=40), variant_of="pathwise"),
    # --- numpy ---------------------------------------------------------------------------
    record("numpy", "analytic", "none", "single-pass", "numpy",
           "The closed form: (S_T / S0, S_T (W_T - sigma T)).",
           call="numpy: S_T / S0 and S_T (W_T - sigma T), no AD",
           label=(("moments", "2X, 3X², 4X³ by hand"),),
           memory=M(arrays=3), problems=(*BOTH, "moments-batch"),
           memory_moments=M(arrays=6, fixed_mib=2)),
    record("numpy", "finite-difference", "none", "single-pass", "numpy",
           "Central bump-and-revalue of spot and vol with the same normals: 4 extra simulations.",
           call="numpy: (f(x + h) - f(x - h)) / 2h per input",
           memory=M(arrays=5.1, fixed_mib=4)),
)  # fmt: skip


# --- Simulations that measure drawing the random numbers (their builders: strategies.draws) ---
_DRAWS = "jacbench.strategies.draws"
# Its name starts with the blocked prefix: registry.is_blocked holds, so the case is streamed.
BLOCKED_DRAWS = f"{BLOCKED}draws"
# TensorFlow simulations drawing their own normals: name -> (jit_compile, algorithm).
TENSORFLOW_DRAWS = {
    "function-draws": (False, "auto_select"),
    "xla-draws": (True, "auto_select"),
    "xla-philox-draws": (True, "philox"),
}


def draw_names(framework: str, executions: list[str]) -> list[str]:
    """The drawing simulations of a framework whose execution modes are these: numpy's stream
    drawn as the blocked ones draw it, TensorFlow's draws inside a tf.function, and for each
    loop that draws inside (DRAWN) the same draws alone (DRAWS)."""
    extra = [BLOCKED_DRAWS] if any(e.startswith(BLOCKED) for e in executions) else []
    inside = [DRAWS + e.removeprefix(DRAWN) for e in executions if e.startswith(DRAWN)]
    return extra + (list(TENSORFLOW_DRAWS) if framework == "tensorflow" else []) + inside


# Loop constructs measured as simulations only, beside the one the framework's step-form
# strategies run: JAX's fori_loop beside lax.scan, TensorFlow's tf.scan beside its two loops.
OTHER_LOOPS = {"jax": ("steps-jit-fori",), "tensorflow": ("steps-xla-scan",)}


def is_draw(name: str) -> bool:
    """Whether a simulation's name is one of those that measure drawing (any framework)."""
    return name == BLOCKED_DRAWS or name in TENSORFLOW_DRAWS or name.startswith(DRAWS)


def draws_own(name: str) -> bool:
    """Whether the simulation draws its own normals: its case need hold none."""
    return name in TENSORFLOW_DRAWS or name.startswith((DRAWN, DRAWS))


def simulation_entry(framework: str, name: str) -> str | None:
    """The builder of a simulation outside the framework's array-form module (a drawing one,
    one written over the steps), "module:function"; None for any other name."""
    if name == BLOCKED_DRAWS:
        return f"{_DRAWS}:build_blocked_draws"
    if framework == "tensorflow" and name in TENSORFLOW_DRAWS:
        return f"{_DRAWS}:build_tensorflow_draws"
    if form_of(name) == "steps":
        return f"jacbench.strategies.{framework}_steps:build_simulation"
    return None
