import numpy as np
import torch

N, M, T = 10_000, 52, 1.0  # paths, steps, years
z = torch.from_numpy(np.random.default_rng(1234).standard_normal((M, N)).astype("f4"))
t = torch.linspace(0.0, T, M + 1)
w = torch.cat([torch.zeros(1, N), torch.diff(t).sqrt()[:, None] * z]).cumsum(dim=0)


def simulate(spot, vol, drift=0.03):
    """S_T of every path. The normals are drawn once, outside."""
    return (spot * torch.exp((drift - 0.5 * vol**2) * t[:, None] + vol * w))[-1]


# [answer]
def jacobian(spot, vol):
    """The pathwise gradient: one reverse pass, each path with its own spot and vol."""
    def total(spots, vols):
        return simulate(spots, vols).sum()

    grads = torch.func.grad(total, argnums=(0, 1))(spot.expand(N), vol.expand(N))
    return torch.stack(grads, dim=1)  # N x 2


fast = torch.compile(jacobian)  # for many calls: the first compiles, the rest are fused
# [/answer]

spot, vol = torch.tensor(100.0), torch.tensor(0.2)
s_t = simulate(spot, vol)
closed = torch.stack([s_t / spot, s_t * (w[-1] - vol * T)], dim=1)
for J in (jacobian(spot, vol), fast(spot, vol)):
    assert torch.allclose(J, closed, rtol=1e-4, atol=1e-2)
print("PyTorch: the N x 2 Jacobian matches the closed form")
