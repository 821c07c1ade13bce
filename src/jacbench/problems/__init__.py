"""Problems: what is differentiated, with closed-form derivatives to check against."""

from __future__ import annotations

from typing import Any

from jacbench.errors import UsageError
from jacbench.problems import asian, gbm, moments, shapes, user

# The parameters of each problem's case, by the problem's name.
PARAMS = {
    "gbm": gbm.GBMParams,
    "asian": gbm.GBMParams,
    "moments": moments.MomentsParams,
    "moments-batch": moments.MomentsParams,
    "shapes": shapes.ShapesParams,
    "user": user.UserParams,
}
# What "N" of a case means: the field that sizes it.
SIZE = {
    "gbm": "paths",
    "asian": "paths",
    "moments": "inputs",
    "moments-batch": "inputs",
    "shapes": "inputs",
    "user": "n",
}


def make_case(problem: str, params: dict[str, Any], streamed: bool = False, device: str = "cpu"):
    """The problem's case from its parameters (numpy only: no framework is imported here).

    streamed (gbm only): the case holds no normals; the path-blocked strategies draw them a
    block at a time (problems.gbm.stream_normals). device: where its strategy computes (the
    crossover's shapes run on the CPU only)."""
    if problem not in PARAMS:
        raise UsageError(f"unknown problem {problem!r}; choose one of: {', '.join(PARAMS)}")
    p = PARAMS[problem](**params).validate()
    if streamed:
        if problem != "gbm":
            raise UsageError(f"only the gbm problem streams its normals, not {problem}")
        return gbm.make_case(p, streamed=True, device=device)
    if problem == "user":
        return user.make_case(p, device=device)
    if problem == "asian":
        return asian.make_case(p, device=device)
    if problem == "shapes":
        if device != "cpu":
            raise UsageError(f"the shapes problem runs on the cpu only, not {device}")
        return shapes.make_case(p)
    case = {"gbm": gbm, "moments": moments, "moments-batch": moments}[problem].make_case(
        p, device=device
    )
    if case.problem != problem:
        raise UsageError(
            f"problem {problem} does not fit batch={p.batch} "
            "(moments: batch 0, moments-batch: at least 1 row)"
        )
    return case
