import numpy as np
import torch

N, M, dt = 10_000, 52, 1.0 / 52  # paths, steps, years a step
z = torch.from_numpy(np.random.default_rng(1234).standard_normal((M, N)).astype("f4"))
t = torch.arange(M + 1)[:, None] * dt  # the time grid, a column


def simulate(spot, vol, drift=0.03):
    """The whole path, (M+1) x N, as the question wrote it: S_T is its last row."""
    w = torch.cat([torch.zeros(1, N), dt**0.5 * z]).cumsum(dim=0)
    return spot * torch.exp((drift - 0.5 * vol**2) * t + vol * w)


# [answer]
def pathwise(spot, vol):
    """One backward pass of sum(S_T): path i depends only on its own spot and vol."""
    spots, vols = (p.expand(N).clone().requires_grad_() for p in (spot, vol))
    s_t = simulate(spots, vols)[-1]
    d_spot, d_vol = torch.autograd.grad(s_t.sum(), (spots, vols))  # row i: copy i's
    return torch.stack([d_spot, d_vol], dim=1)  # N x 2
# [/answer]

spot, vol, w_t, T = torch.tensor(100.0), torch.tensor(0.2), dt**0.5 * z.sum(dim=0), M * dt
s_t = spot * torch.exp((0.03 - 0.5 * vol**2) * T + vol * w_t)
closed = torch.stack([s_t / spot, s_t * (w_t - vol * T)], dim=1)
assert torch.allclose(pathwise(spot, vol), closed, rtol=1e-4, atol=1e-2)
print("PyTorch: the N x 2 Jacobian matches the closed form")
