import torch

N, M, dt = 10_000, 52, 1.0 / 52  # paths, steps, years a step
z = torch.randn(M, N, generator=torch.Generator().manual_seed(7))


def terminal(spot, vol, couple):
    """S_T of every path, from one copy of spot and vol per path."""
    s_t = spot * torch.exp((0.03 - 0.5 * vol**2) * M * dt + vol * dt**0.5 * z.sum(0))
    return s_t * 100.0 / s_t.mean() if couple else s_t  # moment matching: coupled


spot, vol = torch.full((N,), 100.0), torch.full((N,), 0.2)
for couple in (False, True):
    f = lambda v, couple=couple: terminal(spot, v, couple)  # noqa: E731
    # [check]
    column = torch.func.grad(lambda v, f=f: f(v).sum())(vol)  # the pathwise vol column
    _, exact = torch.func.jvp(f, (vol,), (torch.ones(N),))  # forward mode is always right
    gap = ((column - exact).abs().max() / exact.abs().max()).item()
    print(f"paths coupled: {couple}; pathwise against the JVP: {gap:.1e} of the column")
    assert (gap > 1e-3) == couple, "the pathwise gradient is wrong here: use forward mode"
    # [/check]
print("the check passes on independent paths and catches the coupled ones")
