"""All results (chapter 10): every row of the results file as the searchable table shows it, the
specification and main measurements of each case in text a reader can filter and sort."""

from __future__ import annotations

import math
import re

import pandas as pd

from jacbench.report import formats, machines

MIB = 2**20
# A file path in a worker's message (/a/b/name.py): the book names no path of the machine.
PATH = re.compile(r"(?<![\w.])(?:/[^/\s:'\"]+)+/([^/\s:'\"]+)")


def number(x) -> str:
    """Three significant digits, thousands separated, without an exponent; '' where none
    (DataTables reads such a column as numbers, so it sorts by value): '1,235', '12.3', '0.0123'."""
    if formats.missing(x):
        return ""
    x = float(f"{x:.3g}")
    if x == 0 or abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:,.{2 - math.floor(math.log10(abs(x)))}f}"


def note(text) -> str:
    """The worker's message with any file path cut to its file name; '' where there is none."""
    return "" if formats.missing(text) else PATH.sub(r"\1", text)


def _whole(n) -> str:
    return "" if formats.missing(n) else f"{n:,}"


def _gib(n) -> str:
    return "" if formats.missing(n) else f"{n / 2**30:g}"


def table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per case, sorted by problem, framework, strategy and size: its spec (the memory
    cap included), status, cold and warm times (ms), time over the simulation's, peaks (MiB),
    error and note; where the rows come from several machines, each row's machine beside its
    spec, so that the machines' rows of a case stand side by side."""
    rows = df.sort_values(["problem", "framework", "strategy", "paths", "inputs", "batch", "env"])
    found = machines.of(rows)
    machine = {}
    if len(found) > 1:
        named = machines.names(df.attrs.get("meta") or {}, found)
        machine = {"machine": rows["env"].map(lambda e: named.get(str(e), ""), na_action="ignore")}
    return pd.DataFrame(
        {
            "problem": rows["problem"],
            "framework": rows["framework"],
            "strategy": rows["strategy"],
            "N (paths)": rows["paths"].map(_whole),
            "n (inputs)": rows["inputs"].map(_whole),
            "batch": rows["batch"].map(_whole),
            **machine,
            "dtype": rows["dtype"],
            "threads": rows["threads"].map(lambda n: "" if formats.missing(n) else f"{n}"),
            "allocator": rows["allocator"],
            # Two cases can differ in their cap alone (the question's TensorFlow program at
            # 8 and at 16 GiB).
            "memory cap (GiB)": rows["mem_cap"].map(_gib),
            "status": rows["status"].astype("string"),
            "cold (ms)": (rows["cold_s"] * 1e3).map(number),
            "warm median (ms)": (rows["warm_median_s"] * 1e3).map(number),
            "× simulation of S_T": rows["ratio_median"].map(number),
            "peak (MiB)": (rows["peak"] / MIB).map(number),
            "peak beyond inputs (MiB)": (rows["peak_over_inputs"] / MIB).map(number),
            "max rel. error": rows["max_rel_error"].map(
                lambda e: "" if formats.missing(e) else formats.error(e)
            ),
            "note": rows["message"].map(note),
        }
    ).fillna("")
