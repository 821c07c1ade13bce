"""The registry's rows for the simulation written over the time steps (catalog.FORMS).

The loop carries log S from step to step, reading each step's normals once; forward mode over
it holds a few arrays of N values, not (M+1) x N, and its model counts them (vectors). Reverse
mode through the loop stores each step's state: a path array, whatever the form. Only data, as
strategies.catalog, whose helpers and constants it uses; the registry reads both tables.
"""

from __future__ import annotations

from jacbench.strategies.catalog import PAYOFFS, record
from jacbench.strategies.memory_model import MemoryModel as M

# What every step-form description says of the loop: log S carried from step to step, S0 applied
# at the end (so the loop depends on vol alone, and spot's tangent is zero until the last line).
LOOP = "The simulation as a loop over the steps carrying log S (S0 applied after the loop); "
DRAWN_NOTE = (
    " The normals are drawn inside the loop, keyed by the seed, the block of paths and the "
    "step, so nothing of size M x N is ever held; one block of paths a call, written into the "
    "N x 2 result."
)

ROWS: tuple[dict, ...] = (
    # --- PyTorch: a Python loop, unrolled by torch.compile into one fused kernel ----------
    record("torch", "steps-carry", "forward", "loop", "steps-eager",
           LOOP + "vol's tangent carried beside the state, one torch.func.jvp of each step.",
           call="torch.func.jvp(step, (x, vol), (dx, 1)) at each step, dx carried",
           snippet="tall",
           memory=M(arrays=0, vectors=8, fixed_mib=30)),
    record("torch", "steps-compiled-carry", "forward", "loop", "steps-inductor",
           LOOP + "the steps' JVPs of steps-carry compiled with torch.compile into one kernel "
           "that writes S_T and the N x 2 Jacobian.",
           call="torch.compile of the loop of torch.func.jvp(step, (x, vol), (dx, 1))",
           snippet="tall-compiled",
           memory=M(arrays=0, vectors=6, fixed_mib=180), variant_of="steps-carry",
           problems=PAYOFFS),
    record("torch", "steps-segmented-carry", "forward", "loop", "steps-inductor",
           LOOP + "the steps' JVPs of steps-carry compiled one segment of 13 steps at a time: "
           "a few kernels, each reading its segment's rows of normals, not one reading all 52.",
           call="torch.compile of the loop of torch.func.jvp over each segment of 13 steps",
           memory=M(arrays=0, vectors=6, fixed_mib=180), variant_of="steps-carry"),
    record("torch", "steps-compiled-jvp", "forward", "loop", "steps-inductor",
           LOOP + "two torch.func.jvp calls of the whole loop, one per input, compiled.",
           call="torch.compile of torch.func.jvp(f, x, v) once per input, f the loop",
           memory=M(arrays=0, vectors=6, fixed_mib=180)),
    record("torch", "steps-compiled-jacfwd", "forward", "vectorized", "steps-inductor",
           LOOP + "torch.func.jacfwd of the loop, compiled: both tangents in one pass.",
           call="torch.compile(torch.func.jacfwd(f, argnums=(0, 1))), f the loop",
           memory=M(arrays=0, vectors=8, fixed_mib=180)),
    record("torch", "steps-pathwise", "reverse", "single-pass", "steps-eager",
           LOOP + "per-path spot and vol, one backward of sum(S_T) through the loop, which "
           "stores every step's state.",
           call="torch.autograd.grad(f(xs).sum(), xs), f the loop",
           memory=M(arrays=9, fixed_mib=30)),
    record("torch", "steps-compiled-pathwise", "reverse", "single-pass", "steps-inductor",
           LOOP + "the pathwise gradient of steps-pathwise (torch.func.grad) compiled.",
           call="torch.compile(torch.func.grad(lambda xs: f(xs).sum())), f the loop",
           memory=M(arrays=0, vectors=8, fixed_mib=180), variant_of="steps-pathwise"),
    record("torch", "steps-compiled-checkpoint", "reverse", "single-pass", "steps-inductor",
           LOOP + "the pathwise gradient with torch.utils.checkpoint around each group of "
           "steps, so the backward pass recomputes their states instead of storing them.",
           call="torch.compile of torch.func.grad through torch.utils.checkpoint of each group",
           memory=M(arrays=0.5, fixed_mib=180)),
    record("torch", "drawn-carry", "forward", "loop", "drawn-inductor",
           LOOP + "the carried tangent of steps-compiled-carry, each step's normals drawn by "
           "torch.randn from a generator seeded by the seed, the block and the step, then one "
           "compiled step." + DRAWN_NOTE,
           call="torch.randn per step (generator seeded by block and step), compiled carried JVP",
           memory=M(arrays=0, vectors=3, fixed_mib=300, holds_inputs=False)),
    # --- JAX: lax.scan under jit ----------------------------------------------------------
    # Its models count two path arrays: JAX's copy of the normals, made with the inputs, and
    # the paired simulation's own copy (the worker holds both); the loop itself adds a few
    # arrays of N values.
    record("jax", "steps-jvp", "forward", "loop", "steps-jit",
           LOOP + "two jax.jvp calls of the lax.scan simulation in one jit.",
           call="jax.jvp(f, x, v) once per input, f a lax.scan, inside jax.jit",
           memory=M(arrays=2, vectors=4, fixed_mib=40)),
    record("jax", "steps-jacfwd", "forward", "vectorized", "steps-jit",
           LOOP + "jax.jacfwd of the lax.scan simulation under jit: both tangents in one pass.",
           call="jax.jit(jax.jacfwd(f, argnums=(0, 1))), f a lax.scan",
           memory=M(arrays=2, vectors=4, fixed_mib=40)),
    record("jax", "steps-carry", "forward", "loop", "steps-jit",
           LOOP + "vol's tangent carried in the lax.scan's state, one jax.jvp of each step.",
           call="jax.lax.scan over jax.jvp(step, (x, vol), (dx, 1)), dx carried, in jax.jit",
           snippet="tall",
           memory=M(arrays=2, vectors=4, fixed_mib=40), problems=PAYOFFS),
    record("jax", "steps-pathwise", "reverse", "single-pass", "steps-jit",
           LOOP + "per-path spot and vol, one jax.grad of sum(S_T) through the lax.scan, which "
           "stores every step's state.",
           call="jax.jit(jax.grad(lambda xs: f(xs).sum())), f a lax.scan",
           memory=M(arrays=2, vectors=4, fixed_mib=40)),
    record("jax", "steps-checkpoint", "reverse", "single-pass", "steps-jit",
           LOOP + "the pathwise gradient with jax.checkpoint on the scan's step: the backward "
           "pass recomputes each step's intermediates instead of storing them.",
           call="jax.jit(jax.grad(...)) of a lax.scan over jax.checkpoint(step)",
           memory=M(arrays=2, vectors=4, fixed_mib=40)),
    record("jax", "drawn-carry", "forward", "loop", "drawn-jit",
           LOOP + "the carried tangent of steps-carry, jax.random.normal inside the scan (a "
           "threefry key folded with the block and the step)." + DRAWN_NOTE,
           call="jax.lax.scan over jax.jvp(step, ...), jax.random.normal inside, by blocks",
           memory=M(arrays=0, vectors=3, fixed_mib=120, holds_inputs=False)),
    # --- TensorFlow: a loop under tf.function(jit_compile=True) ---------------------------
    record("tensorflow", "steps-forward-xla", "forward", "loop", "steps-xla",
           LOOP + "tf.autodiff.ForwardAccumulator over the whole loop, once per input, the loop "
           "unrolled under tf.function(jit_compile=True).",
           call="tf.autodiff.ForwardAccumulator(x, v) once per input, over an unrolled loop",
           memory=M(arrays=6.5, fixed_mib=100)),
    record("tensorflow", "steps-carry-xla", "forward", "loop", "steps-xla-while",
           LOOP + "vol's tangent carried in a tf.while_loop's state, one ForwardAccumulator of "
           "each step, under tf.function(jit_compile=True).",
           call="tf.while_loop over tf.autodiff.ForwardAccumulator of each step, under XLA",
           snippet="tall",
           memory=M(arrays=0, vectors=6, fixed_mib=100), problems=PAYOFFS),
    record("tensorflow", "steps-carry-function", "forward", "loop", "steps-function",
           LOOP + "the carried tangent of steps-carry-xla in a tf.function graph, no XLA.",
           call="tf.while_loop over tf.autodiff.ForwardAccumulator of each step, tf.function",
           memory=M(arrays=0, vectors=8, fixed_mib=25)),
    record("tensorflow", "steps-pathwise-xla", "reverse", "single-pass", "steps-xla",
           LOOP + "per-path spot and vol, one tape.gradient of sum(S_T) through the unrolled "
           "loop under tf.function(jit_compile=True).",
           call="tape.gradient(tf.reduce_sum(f(xs)), xs), f an unrolled loop, under XLA",
           memory=M(arrays=0, vectors=10, fixed_mib=100)),
    record("tensorflow", "steps-recompute-xla", "reverse", "single-pass", "steps-xla",
           LOOP + "the pathwise gradient of steps-pathwise-xla with tf.recompute_grad around "
           "each step: the backward pass recomputes each step's intermediates.",
           call="tape.gradient through tf.recompute_grad(step), under XLA",
           memory=M(arrays=0.8, fixed_mib=130)),
    record("tensorflow", "drawn-carry-function", "forward", "loop", "drawn-function",
           LOOP + "the carried tangent of steps-carry-function, tf.random.stateless_normal "
           "(Philox) inside the tf.while_loop, in a tf.function graph." + DRAWN_NOTE,
           call="tf.while_loop over ForwardAccumulator with tf.random.stateless_normal inside",
           memory=M(arrays=0, vectors=3, fixed_mib=150, holds_inputs=False)),
)  # fmt: skip
