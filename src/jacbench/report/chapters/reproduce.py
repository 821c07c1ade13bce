"""Chapter 7, reproducing the results: the environment, the results file and the parameters."""

from __future__ import annotations

import json
from pathlib import Path

from jacbench.report.publish import Section, markdown_table
from jacbench.report.results import Results


def reproduce(res: Results, parameters_file: str | Path) -> Section:
    sec = Section()
    meta = res.meta
    env_rows = [
        [k, f"`{meta.get(k, '–')}`"]
        for k in (
            "python",
            "numpy",
            "torch",
            "tensorflow",
            "jax",
            "jaxlib",
            "cpu",
            "cores",
            "ram_bytes",
            "jemalloc",
            "git_commit",
            "date",
            "environment_key",
        )
    ]
    sec.tables["environment"] = markdown_table(["field", "value"], env_rows)
    counts: dict[str, int] = {}
    every = res.rows + res.wide
    for r in every:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    sec.tables["results"] = markdown_table(
        ["results file", "rows", "statuses"],
        [
            [
                f"`{res.path.name}`",
                str(len(every)),
                ", ".join(f"{v} {k}" for k, v in sorted(counts.items())),
            ]
        ],
    )
    params = json.loads(Path(parameters_file).read_text())
    sec.tables["parameters"] = markdown_table(
        ["notebook", "parameters"],
        [
            [f"`notebooks/{nb}.ipynb`", ", ".join(f"`{k}={v!r}`" for k, v in p.items())]
            for nb, p in params.items()
        ],
    )
    sec.value("n_rows", str(len(every)))
    sec.value("profile_cases", str(meta.get("cases", len(every))))
    return sec
