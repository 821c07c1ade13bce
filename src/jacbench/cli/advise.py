"""``jacbench advise``: its options and the command (see jacbench.advise)."""

from __future__ import annotations

import argparse
import sys

from jacbench.errors import UsageError
from jacbench.units import parse_size


def _split(text: str | None) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()] if text else []


def add_advise(sub, add_limits) -> None:
    """The advise command's options (add_limits: the memory cap and timeout every measuring
    command takes)."""
    from jacbench.advise.sizes import POINTS, START

    p = sub.add_parser(
        "advise",
        help="measure every way to take your function's Jacobian, pick one, print the code",
        description="FUNCTION(theta, data) -> y, theta a 1-D tensor of the d inputs "
        "(with --batch, a (B, d) tensor of B samples' inputs, y led by B); "
        "FACTORY(n) -> (theta, data) at size n, the same on every call. Name each "
        "module:function or path/to/file.py:function.",
    )
    p.add_argument("function", metavar="FUNCTION", help="module:function or file.py:function")
    p.add_argument(
        "--example", required=True, metavar="FACTORY", help="FACTORY(n) -> (theta, data)"
    )
    p.add_argument(
        "--sizes",
        help=f"sizes n to measure (default: {POINTS} or more over a decade, from where the "
        f"function's own call takes 1 ms, timed at n={START:,})",
    )
    p.add_argument("--target", help="the size to predict and pick at (default: the largest)")
    add_limits(p)
    p.add_argument("--strategies", help="comma-separated subset (default: every one that applies)")
    p.add_argument("--framework", help="torch, jax or tensorflow (default: read from theta)")
    p.add_argument("--hessian", action="store_true", help="the Hessian of a one-output function")
    p.add_argument(
        "--batch",
        action="store_true",
        help="theta is (B, d), B samples' inputs, y led by B, sample b's outputs from theta[b] "
        "alone: the (B, m', d) per-sample Jacobians",
    )
    p.add_argument("--threads", type=int, help="threads of the framework's pools (default: cores)")
    p.add_argument("--out", default="advice", help="folder for advice.json, jacobian.py (advice)")
    p.add_argument(
        "--check",
        action="store_true",
        help="measure the pick and the next two at --target afterwards, in turn, and pick "
        "from what was measured",
    )
    p.add_argument("--book", action="store_true", help="render the chapter 'Your function' too")
    from jacbench.cli.cluster import add_cluster, on_cluster

    add_cluster(p)
    # On a cluster every worker runs on one of its machines: the rows are read against each other.
    p.set_defaults(func=on_cluster(cmd_advise))


def _request(args: argparse.Namespace):
    """The advice the options ask for."""
    from jacbench.advise.run import Request
    from jacbench.units import parse_bytes

    options = {"mem_cap": parse_bytes(args.mem_cap) if args.mem_cap else None,
               "timeout": args.timeout, "threads": args.threads}  # fmt: skip
    sizes = ()
    if args.sizes is not None:
        sizes = tuple(parse_size(v, "--sizes") for v in _split(args.sizes))
        if not sizes:
            raise UsageError("--sizes needs at least one size, like 1e3,1e4,1e5")
    return Request(
        function=args.function,
        factory=args.example,
        sizes=sizes,
        target=parse_size(args.target, "--target") if args.target else None,
        strategies=tuple(_split(args.strategies)),
        framework=args.framework,
        order=2 if args.hessian else 1,
        batch=args.batch,
        verify=args.check,
        **{k: v for k, v in options.items() if v is not None},
    )


def cmd_advise(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jacbench import advise
    from jacbench.advise import output

    req = _request(args)
    out = Path(args.out)
    if args.book:  # the chapter lives in the checkout jacbench is installed from: found first
        from jacbench.publish.parameters import OWN_CHECKOUT, checkout_root

        root = checkout_root(OWN_CHECKOUT)
    found = advise.advise(req, out, progress=lambda line: print(line, file=sys.stderr))
    print(output.table(found))
    print()
    print(output.summary(found))
    if found.code:
        print(f"\n# {out / advise.CODE}\n{found.code}")
    if args.book:
        from jacbench.publish import single

        page = single.build_page("08-your-function", root, out=(out / "book").resolve(),
                                 parameters={"advice": str(out.resolve())})  # fmt: skip
        print(f"\nthe chapter for your run: {page}")
    return 0
