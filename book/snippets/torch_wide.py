import torch

n = 100_000
x = torch.full((n,), 2.00094, requires_grad=True)


def f(x):
    return torch.stack([(x**2).sum(), (x**3).sum(), (x**4).sum()])


# [answer]
# Reverse mode, one backward pass per output: three give the 3 x n Jacobian.
y = f(x)
rows = [torch.autograd.grad(y[k], x, retain_graph=True)[0] for k in range(3)]
jacobian = torch.stack(rows)

# Hessian-vector products, forward over reverse: the three H_k v in one call, never the
# n x n Hessian (jvp pushes v through the reverse-mode Jacobian of f). Each output sums
# terms in one x_i, so each H_k is diagonal and H_k times ones is its whole diagonal.
v = torch.ones(n)  # any direction gives H_k v; ones give the three Hessians
hvp = torch.func.jvp(torch.func.jacrev(f), (x.detach(),), (v,))[1]
# [/answer]

x = x.detach()
assert torch.allclose(jacobian, torch.stack([2 * x, 3 * x**2, 4 * x**3]), rtol=1e-5)
assert torch.allclose(hvp, torch.stack([2 + 0 * x, 6 * x, 12 * x**2]), rtol=1e-5)
print("PyTorch: the 3 x n Jacobian and the three Hessians match the closed form")
