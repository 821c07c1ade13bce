"""TensorFlow's generic strategies: the reader's f(theta, data) differentiated by GradientTape
and ForwardAccumulator, each eagerly, in tf.function and in tf.function(jit_compile=True).

Each method's source is written once below with two holes, the decorator line (none, @tf.function
or @tf.function(jit_compile=True)) and the end of its docstring; ``_records`` fills them to give
the three records. What a record holds is the complete source, as a reader pastes it.
"""

from __future__ import annotations

from jacbench.strategies.generic.record import Generic

# (name suffix, decorator line, docstring tail, call tail, description tail)
_EXECUTIONS = (
    ("", "", " (eager)", "", "."),
    (
        "-function",
        "@tf.function\n",
        " (tf.function)",
        " inside tf.function",
        ", inside tf.function.",
    ),
    (
        "-xla",
        "@tf.function(jit_compile=True)\n",
        " (XLA)",
        " inside tf.function(jit_compile=True)",
        ", inside tf.function(jit_compile=True) (XLA).",
    ),
)

# --- order 1: the (m, d) Jacobian of y = f(theta, data), y flattened -------------------------

_TAPE_JACOBIAN_LOOP = '''\
import tensorflow as tf


{decorator}def jacobian(theta, data):
    """Jacobian by tape.jacobian without pfor: a loop of gradients{doc}."""
    # Persistent: without pfor, jacobian takes one gradient per output off one tape.
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(theta)
        y = tf.reshape(f(theta, data), [-1])
    return tape.jacobian(y, theta, experimental_use_pfor=False)
'''

_TAPE_JACOBIAN_PFOR = '''\
import tensorflow as tf


{decorator}def jacobian(theta, data):
    """Jacobian by tape.jacobian, its backward passes batched by pfor{doc}."""
    with tf.GradientTape() as tape:
        tape.watch(theta)
        y = tf.reshape(f(theta, data), [-1])
    return tape.jacobian(y, theta)
'''

_FORWARD_ACCUMULATOR = '''\
import tensorflow as tf


{decorator}def jacobian(theta, data):
    """Jacobian by ForwardAccumulator: one JVP per input, vectorized{doc}."""

    def jvp(tangent):
        with tf.autodiff.ForwardAccumulator(theta, tangent) as acc:
            y = tf.reshape(f(theta, data), [-1])
        return acc.jvp(y)

    # Row j of the map is the JVP along unit vector j: column j of the Jacobian.
    eye = tf.eye(theta.shape[0], dtype=theta.dtype)
    return tf.transpose(tf.vectorized_map(jvp, eye))
'''

_PER_ROW = '''\
import tensorflow as tf


{decorator}def jacobian(theta, data):
    """Per-row Jacobian: one tape.gradient of the sum, theta per row{doc}."""
    leaves = tf.nest.flatten(data)
    # The rows: the leading dimension of data's largest tensor.
    tensors = [x for x in leaves if tf.is_tensor(x) and x.shape.rank >= 1]
    rows = max(tensors, key=lambda x: x.shape.num_elements()).shape[0]
    split = [tf.is_tensor(x) and x.ndim >= 1 and x.shape[0] == rows for x in leaves]
    thetas = tf.tile(theta[None], [rows, 1])  # one copy of theta per row

    def row(args):
        theta_i, parts = args
        parts = iter(parts)
        row_leaves = [next(parts)[None] if s else x for x, s in zip(leaves, split)]
        y = f(theta_i, tf.nest.pack_sequence_as(data, row_leaves))
        return tf.reshape(y, [])  # row i's one output

    with tf.GradientTape() as tape:
        tape.watch(thetas)
        y = tf.vectorized_map(row, (thetas, [x for x, s in zip(leaves, split) if s]))
        total = tf.reduce_sum(y)
    # Row i depends on copy i of theta alone: the sum's gradient there is row i's.
    return tape.gradient(total, thetas)
'''

# --- order 2: the (d, d) Hessian of a one-output f --------------------------------------------

_HESSIAN_LOOP = '''\
import tensorflow as tf


{decorator}def jacobian(theta, data):
    """Hessian by nested tapes, the outer tape.jacobian without pfor{doc}."""
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(theta)
        with tf.GradientTape() as inner:
            inner.watch(theta)
            y = tf.reshape(f(theta, data), [])
        grad = inner.gradient(y, theta)
    return outer.jacobian(grad, theta, experimental_use_pfor=False)
'''

_REVERSE_OVER_REVERSE = '''\
import tensorflow as tf


{decorator}def jacobian(theta, data):
    """Hessian by nested tapes, the outer tape.jacobian with pfor{doc}."""
    with tf.GradientTape() as outer:
        outer.watch(theta)
        with tf.GradientTape() as inner:
            inner.watch(theta)
            y = tf.reshape(f(theta, data), [])
        grad = inner.gradient(y, theta)
    return outer.jacobian(grad, theta)
'''

_FORWARD_OVER_REVERSE = '''\
import tensorflow as tf


{decorator}def jacobian(theta, data):
    """Hessian by forward-over-reverse: one HVP per input, vectorized{doc}."""

    def hvp(tangent):
        with tf.autodiff.ForwardAccumulator(theta, tangent) as acc:
            with tf.GradientTape() as tape:
                tape.watch(theta)
                y = tf.reshape(f(theta, data), [])
            grad = tape.gradient(y, theta)
        return acc.jvp(grad)

    # Row j of the map is the Hessian times unit vector j (the Hessian is symmetric).
    eye = tf.eye(theta.shape[0], dtype=theta.dtype)
    return tf.vectorized_map(hvp, eye)
'''


def _records(
    name: str,
    mode: str,
    call: str,
    description: str,
    template: str,
    order: int = 1,
    per_row: bool = False,
    reference: bool = False,
    executions: tuple[str, ...] = ("", "-function", "-xla"),
    answer: str = "",
) -> tuple[Generic, ...]:
    """The method's record in each execution; description is one sentence without its end."""
    return tuple(
        Generic(
            framework="tensorflow",
            name=name + suffix,
            mode=mode,
            call=call + call_tail,
            description=description + description_tail,
            code=template.format(decorator=decorator, doc=doc_tail),
            per_row=per_row,
            compiled=bool(suffix),
            order=order,
            reference=reference and not suffix,
            answer="" if suffix else answer,
        )
        for suffix, decorator, doc_tail, call_tail, description_tail in _EXECUTIONS
        if suffix in executions
    )


RECORDS: tuple[Generic, ...] = (
    *_records(
        "tape-jacobian-loop",
        "reverse",
        "tape.jacobian(y, theta, experimental_use_pfor=False)",
        "GradientTape.jacobian without pfor on a persistent tape: a while loop of m "
        "gradients, one backward pass per output",
        _TAPE_JACOBIAN_LOOP,
        reference=True,
    ),
    *_records(
        "tape-jacobian-pfor",
        "reverse",
        "tape.jacobian(y, theta)",
        "GradientTape.jacobian with its defaults: pfor vectorizes the m backward passes "
        "into one batched pass",
        _TAPE_JACOBIAN_PFOR,
    ),
    *_records(
        "forward-accumulator",
        "forward",
        "tf.vectorized_map(jvp, tf.eye(d)), jvp by tf.autodiff.ForwardAccumulator(theta, v)",
        "tf.autodiff.ForwardAccumulator, one JVP per input, the d JVPs along the unit "
        "vectors vectorized by tf.vectorized_map",
        _FORWARD_ACCUMULATOR,
        answer="forward",
    ),
    *_records(
        "per-row",
        "pathwise",
        "tape.gradient(tf.reduce_sum(tf.vectorized_map(f_row, (thetas, rows))), thetas)",
        "Theta tiled to one copy per row and f mapped over the rows by tf.vectorized_map: "
        "one tape.gradient of the summed row outputs gives every row's gradient, correct "
        "only when rows are independent",
        _PER_ROW,
        per_row=True,
        answer="pathwise",
    ),
    *_records(
        "hessian-loop",
        "reverse",
        "outer.jacobian(inner.gradient(y, theta), theta, experimental_use_pfor=False)",
        "Nested GradientTapes, the outer tape.jacobian of the gradient without pfor: a "
        "while loop of d second backward passes",
        _HESSIAN_LOOP,
        order=2,
        reference=True,
    ),
    *_records(
        "reverse-over-reverse",
        "reverse",
        "outer.jacobian(inner.gradient(y, theta), theta)",
        "Nested GradientTapes, the outer tape.jacobian of the gradient vectorized by pfor",
        _REVERSE_OVER_REVERSE,
        order=2,
    ),
    *_records(
        "forward-over-reverse",
        "forward",
        "acc.jvp(tape.gradient(y, theta)) in tf.autodiff.ForwardAccumulator(theta, v)",
        "A ForwardAccumulator over an inner GradientTape: one Hessian-vector product per "
        "input, the d products vectorized by tf.vectorized_map",
        _FORWARD_OVER_REVERSE,
        order=2,
    ),
)
