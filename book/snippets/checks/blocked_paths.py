import torch

N, M, dt, BLOCK = 200_000, 52, 1.0 / 52, 50_000  # paths, steps, years a step, a block


def step(y, vol, z_k, drift=0.03):
    """One time step of y = log(S / S0): each step reads one row of normals."""
    return y + (drift - 0.5 * vol**2) * dt + vol * dt**0.5 * z_k


def jacobian(spot, vol, z):
    """Forward mode carried along the steps, for the paths of one block: rows x 2."""
    y, dy, one = torch.zeros(z.shape[1]), torch.zeros(z.shape[1]), torch.ones(())
    for z_k in z:
        y, dy = torch.func.jvp(lambda y, v, z_k=z_k: step(y, v, z_k), (y, vol), (dy, one))
    s_t = spot * torch.exp(y)
    return torch.stack([s_t / spot, s_t * dy], dim=1)


spot, vol = torch.tensor(100.0), torch.tensor(0.2)
# [blocks]
J = torch.empty(N, 2)  # the whole answer; only one block's normals are ever held
for start in range(0, N, BLOCK):
    seed = torch.Generator().manual_seed(start)  # each block draws its own normals
    J[start : start + BLOCK] = jacobian(spot, vol, torch.randn(M, BLOCK, generator=seed))
# [/blocks]
z = torch.randn(M, BLOCK, generator=torch.Generator().manual_seed(N - BLOCK))  # the last
w_t = dt**0.5 * z.sum(0)
s_t = spot * torch.exp((0.03 - 0.5 * vol**2) * M * dt + vol * w_t)
closed = torch.stack([s_t / spot, s_t * (w_t - vol * M * dt)], dim=1)
assert torch.allclose(J[-BLOCK:], closed, rtol=1e-4, atol=1e-2)
print("blocks of paths: the N x 2 Jacobian matches the closed form")
