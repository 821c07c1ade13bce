"""A results file with two machines' rows (a sweep on a cluster): no ratio or ranking mixes
them, and the results chapter shows them side by side."""

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from jacbench.report import data, machines, margins, picks
from jacbench.report.chapters import results as all_results

DATA = Path(__file__).parent / "data"
# The second machine: another fingerprint, CPU and size.
OTHER = {"env": "0123456789ab", "cpu": "Intel Xeon Gold 6348", "cores": 56, "ram_bytes": 2**39}


@pytest.fixture
def two_machines(tmp_path) -> Path:
    """The 51-row fixture and the same cases again from a second machine (its own fingerprint
    and keys, every time twice as long), with the sidecar a cluster sweep writes."""
    with open(DATA / "results-small.csv", newline="") as f:
        reader = csv.DictReader(f)
        columns, rows = reader.fieldnames, list(reader)
    again = []
    for r in rows:
        other = dict(r, env=OTHER["env"], key="x" + r["key"])
        for column in ("cold_s", "warm_median_s", "warm_min_s", "warm_max_s"):
            if other[column]:
                other[column] = str(2 * float(other[column]))
        again.append(other)
    out = tmp_path / "two.csv"
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows + again)
    meta = json.loads((DATA / "results-small.meta.json").read_text())
    meta["machines"] = {OTHER["env"]: {k: v for k, v in OTHER.items() if k != "env"}}
    (tmp_path / "two.meta.json").write_text(json.dumps(meta))
    return out


def test_a_pick_over_two_machines_is_refused_in_one_line_naming_both(two_machines):
    df = data.load(two_machines)
    with pytest.raises(machines.MixedMachines) as found:
        picks.compute(df)
    text = str(found.value)
    assert "\n" not in text
    assert "AMD EPYC, 2 cores, 24 GiB" in text and "Intel Xeon Gold 6348, 56 cores, 512" in text
    # One machine's rows pick as before.
    mine = df[df["env"] == "a861b8664729"]
    assert picks.compute(mine).all == picks.compute(data.load(DATA / "results-small.csv")).all


def test_a_ranking_of_two_rows_of_two_machines_is_refused(two_machines):
    df = data.load(two_machines)
    ok = df[(df["status"] == "ok") & (df["problem"] == "gbm") & (df["target"] == "strategy")]
    a = ok.iloc[0]
    b = ok[(ok["env"] != a["env"]) & (ok["strategy"] != a["strategy"])].iloc[0]
    flat = margins.measure(df)
    with pytest.raises(machines.MixedMachines, match="machine a861b8664729 and machine 0123"):
        margins.compare(a, b, flat)
    same = ok[(ok["env"] == a["env"]) & (ok["strategy"] != a["strategy"])].iloc[0]
    assert margins.compare(a, same, flat).problem == "gbm"


def test_each_strategys_ratio_to_the_fastest_simulation_is_its_own_machines(two_machines):
    df = data.load(two_machines)
    strategy = df[df["ratio_to_fastest_simulation"].notna()]
    assert set(strategy["env"]) == {"a861b8664729", OTHER["env"]}
    # Every time of the second machine is twice the first's: so is its fastest simulation, and
    # each ratio is the first machine's.
    by_case = strategy.assign(case=strategy["key"].str[-16:]).pivot_table(
        index="case", columns="env", values="ratio_to_fastest_simulation"
    )
    assert len(by_case) and by_case["a861b8664729"].to_numpy() == pytest.approx(
        by_case[OTHER["env"]].to_numpy()
    )


def test_the_results_chapter_shows_both_machines_side_by_side(two_machines):
    table = all_results.table(data.load(two_machines))
    assert set(table["machine"]) == {"AMD EPYC, 2 cores, 24 GiB", "Intel Xeon Gold 6348, 56 cores, "
                                     "512 GiB"}  # fmt: skip
    assert len(table) == 2 * 51
    # A case's two rows stand next to each other.
    spec = [c for c in table.columns if c not in ("machine",)][:11]
    first = table.iloc[0]
    assert (table.iloc[1][spec[:4]] == first[spec[:4]]).all() and table.iloc[1]["machine"] != first[
        "machine"
    ]
    # One machine's file keeps the table it had.
    assert "machine" not in all_results.table(data.load(DATA / "results-small.csv")).columns


def test_two_machines_of_one_description_are_told_apart_by_fingerprint():
    meta = {"environment_key": "aaa", "cpu": "X", "cores": 2,
            "machines": {"bbb": {"cpu": "X", "cores": 2}, "ccc": {"cpu": "Y"}}}  # fmt: skip
    assert machines.names(meta, ["aaa", "bbb", "ccc", "ddd"]) == {
        "aaa": "X, 2 cores [aaa]", "bbb": "X, 2 cores [bbb]", "ccc": "Y", "ddd": "ddd"
    }  # fmt: skip
    assert machines.of(pd.DataFrame({"env": ["bbb", "aaa", "bbb", None]})) == ["bbb", "aaa"]
