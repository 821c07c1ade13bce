import numpy as np
import torch

N, M, dt = 10_000, 52, 1.0 / 52  # paths, steps, years a step
z = torch.from_numpy(np.random.default_rng(1234).standard_normal((M, N)).astype("f4"))


def step(y, vol, z_k, drift=0.03):
    """One time step of y = log(S / S0): each step reads one row of normals."""
    return y + (drift - 0.5 * vol**2) * dt + vol * dt**0.5 * z_k


# [answer]
def jacobian(spot, vol):
    """Forward mode carried along the steps: vol's tangent rides beside log S."""
    y, dy, one = torch.zeros(N), torch.zeros(N), torch.ones(())
    for z_k in z:
        y, dy = torch.func.jvp(lambda y, v: step(y, v, z_k), (y, vol), (dy, one))
    s_t, d_vol = torch.func.jvp(lambda y: spot * torch.exp(y), (y,), (dy,))
    _, d_spot = torch.func.jvp(lambda s: s * torch.exp(y), (spot,), (one,))
    return torch.stack([d_spot, d_vol], dim=1)  # N x 2


fast = torch.compile(jacobian)  # one fused kernel: the first call compiles, the rest fly
# [/answer]

spot, vol, T = torch.tensor(100.0), torch.tensor(0.2), M * dt
w_t = dt**0.5 * z.sum(dim=0)
s_t = spot * torch.exp((0.03 - 0.5 * vol**2) * T + vol * w_t)
closed = torch.stack([s_t / spot, s_t * (w_t - vol * T)], dim=1)
for J in (jacobian(spot, vol), fast(spot, vol)):
    assert torch.allclose(J, closed, rtol=1e-4, atol=1e-2)
print("PyTorch: the N x 2 Jacobian matches the closed form")
