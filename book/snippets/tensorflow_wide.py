import numpy as np
import tensorflow as tf

n = 100_000
x = tf.fill([n], 2.00094)


def f(x):
    return tf.stack([tf.reduce_sum(x**2), tf.reduce_sum(x**3), tf.reduce_sum(x**4)])


# [answer]
@tf.function  # traced once; called eagerly, tape.jacobian retraces on every call
def jacobian(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.jacobian(y, x)  # 3 x n: one backward pass per output


@tf.function
def hvp(x, v):  # the three H_k v, forward over reverse; with v = ones, each H_k whole
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return acc.jvp(tape.jacobian(y, x))  # jacobian taken inside the accumulator
# [/answer]


v = tf.ones([n])  # any direction gives H_k v; ones give the three Hessians
np.testing.assert_allclose(jacobian(x), [2 * x, 3 * x**2, 4 * x**3], rtol=1e-5)
np.testing.assert_allclose(hvp(x, v), [2 + 0 * x, 6 * x, 12 * x**2], rtol=1e-5)
print("TensorFlow: the 3 x n Jacobian and the three Hessians match the closed form")
