import numpy as np
import tensorflow as tf

N, M, dt = 10_000, 52, 1.0 / 52  # paths, steps, years a step
z = tf.constant(np.random.default_rng(1234).standard_normal((M, N)).astype("f4"))


def step(y, vol, z_k, drift=0.03):
    """One time step of y = log(S / S0): each step reads one row of normals."""
    return y + (drift - 0.5 * vol**2) * dt + vol * dt**0.5 * z_k


# [answer]
@tf.function(jit_compile=True)  # one XLA program, the loop kept a loop
def jacobian(spot, vol, z):  # forward mode: vol's tangent carried beside log S
    y, dy = tf.zeros(N), tf.zeros(N)
    for k in tf.range(M):  # autograph writes this loop as a tf.while_loop
        with tf.autodiff.ForwardAccumulator([y, vol], [dy, tf.ones_like(vol)]) as acc:
            y = step(y, vol, z[k])
        dy = acc.jvp(y)
    with (tf.autodiff.ForwardAccumulator(spot, tf.ones_like(spot)) as by_spot,
          tf.autodiff.ForwardAccumulator(y, dy) as by_vol):
        s_t = spot * tf.exp(y)
    return tf.stack([by_spot.jvp(s_t), by_vol.jvp(s_t)], axis=1)  # N x 2
# [/answer]

w_t, T = dt**0.5 * np.asarray(z, "f8").sum(axis=0), M * dt
s_t = 100.0 * np.exp((0.03 - 0.5 * 0.2**2) * T + 0.2 * w_t)
closed = np.stack([s_t / 100.0, s_t * (w_t - 0.2 * T)], axis=1)
assert np.allclose(jacobian(tf.constant(100.0), tf.constant(0.2), z), closed, 1e-4, 1e-2)
print("TensorFlow: the N x 2 Jacobian matches the closed form")
