import numpy as np
import tensorflow as tf

N, M, dt = 10_000, 52, 1.0 / 52  # paths, steps, years a step
z = tf.constant(np.random.default_rng(1234).standard_normal((M, N)).astype("f4"))
t = tf.range(M + 1, dtype=tf.float32)[:, None] * dt  # the time grid, a column


def simulate(spot, vol, drift=0.03):
    """The whole path, (M+1) x N, as the question wrote it: S_T is its last row."""
    w = tf.cumsum(tf.concat([tf.zeros((1, N)), dt**0.5 * z], axis=0), axis=0)
    return spot * tf.exp((drift - 0.5 * vol**2) * t + vol * w)


# [answer]
def pathwise(spot, vol):  # one gradient of sum(S_T), each path its own spot and vol
    spots, vols = tf.fill([N], spot), tf.fill([N], vol)
    with tf.GradientTape() as tape:
        tape.watch([spots, vols])
        total = tf.reduce_sum(simulate(spots, vols)[-1])  # sum(S_T), taped
    d_spot, d_vol = tape.gradient(total, [spots, vols])  # row i: copy i's
    return tf.stack([d_spot, d_vol], axis=1)  # N x 2
# [/answer]

w_t, T = dt**0.5 * np.asarray(z, "f8").sum(axis=0), M * dt
s_t = 100.0 * np.exp((0.03 - 0.5 * 0.2**2) * T + 0.2 * w_t)
closed = np.stack([s_t / 100.0, s_t * (w_t - 0.2 * T)], axis=1)
assert np.allclose(pathwise(tf.constant(100.0), tf.constant(0.2)), closed, 1e-4, 1e-2)
print("TensorFlow: the N x 2 Jacobian matches the closed form")
