"""How far a ratio travels: the ratios of two occasions set side by side (chapter 4)."""

import json
import shutil

import pandas as pd
import pytest

from jacbench.report import dataset, queries
from jacbench.report.legacy import occasions
from jacbench.report.legacy.gbm import ratio_cell


def _set(df, framework, strategy, paths, **values):
    mask = (df["framework"] == framework) & (df["strategy"] == strategy) & (df["paths"] == paths)
    assert mask.sum() == 1
    for column, value in values.items():
        df.loc[mask, column] = value


def test_each_ratio_is_set_beside_its_second_occasion(small):
    second = small.copy()
    # PyTorch's pathwise gradient at N = 1,000: 2.35x [2.12-3.15] first, 4.70x the second time;
    # JAX's jvp 1.30x first, 0.87x (1.5 times lower) the second; every other ratio unchanged.
    _set(second, "torch", "pathwise", 1000, ratio_median=4.696102)
    _set(second, "jax", "jvp", 1000, ratio_median=1.304542 / 1.5)
    table = occasions.moved(small, second, 1000)
    assert len(table) == 20  # every strategy with a ratio at N = 1,000 in the fixture
    assert list(dict.fromkeys(table["framework"])) == ["torch", "tensorflow", "jax", "numpy"]
    row = table[(table["framework"] == "torch") & (table["strategy"] == "pathwise")].iloc[0]
    assert row["moved"] == pytest.approx(2.0) and not row["inside"]
    jvp = table[(table["framework"] == "jax") & (table["strategy"] == "jvp")].iloc[0]
    assert jvp["moved"] == pytest.approx(1 / 1.5) and not jvp["inside"]  # below 1.17, its low
    assert table["inside"].sum() == 18
    top = occasions.largest_move(table)
    assert (top["framework"], top["strategy"]) == ("torch", "pathwise")
    assert top["factor"] == pytest.approx(2.0)
    assert occasions.outside_phrase(table) == (
        "2 of the 20 second-occasion medians lie outside the first occasion's spread"
    )
    text = occasions.sentence(table, 1000)
    assert text.startswith(
        "Between the two occasions the medians at N = 1,000 moved by up to "
        "2.00× (PyTorch's pathwise: 2.35× then 4.70×), and 2 of the 20"
    )
    # A second occasion that lacks a case, or did not finish it, leaves it out.
    _set(second, "torch", "pathwise", 1000, status="memory-cap")
    assert len(occasions.moved(small, second, 1000)) == 19
    # Moving the other way counts as much: 1.5 times lower is the largest move now.
    assert occasions.largest_move(occasions.moved(small, second, 1000))["factor"] == pytest.approx(
        1.5
    )


def test_the_sentence_says_when_the_occasions_used_different_methods(small):
    second = small.copy()
    table = occasions.moved(small, second, 1000)
    assert occasions.method_note(table) == ""  # the fixture's rows share one method
    assert occasions.sentence(table, 1000).endswith("no ground for ranking them.")
    first = small.copy()
    first["method"] = 2  # measured again since the second occasion
    said = occasions.sentence(occasions.moved(first, second, 1000), 1000)
    assert said.endswith(
        " For all of these ratios the two occasions used different measuring methods (the "
        "dataset's settled pairs, the second occasion's pairs timed back to back; see how the "
        "ratios are measured), so their movement includes the change of method as well as the "
        "occasions'."
    )
    _set(second, "torch", "pathwise", 1000, method=2)
    note = occasions.method_note(occasions.moved(first, second, 1000))
    assert note.startswith(" For 19 of these 20 ratios the two occasions")
    first["method"] = 3  # and again, with glibc's thresholds fixed
    note = occasions.method_note(occasions.moved(first, second, 1000))
    assert (
        "(the dataset's settled pairs and glibc's thresholds fixed, the second occasion's " in note
    )


def test_one_occasion_says_so(small):
    assert occasions.largest_move(occasions.moved(small, small.iloc[0:0], 1000)) is None
    assert "one occasion only" in occasions.sentence(None, None)
    assert occasions.outside_phrase(occasions.moved(small, small, 5)) is None


def test_the_second_occasion_is_read_only_beside_the_reference_dataset(small_results, tmp_path):
    # A book from one's own sweep has no second occasion, even where the file exists.
    (tmp_path / dataset.FOLDER).mkdir(parents=True)
    reference = tmp_path / dataset.RESULTS
    assert occasions.second_occasion(small_results) is None
    shutil.copy(small_results, reference)
    assert occasions.second_occasion(reference) is None  # no second file yet
    shutil.copy(small_results, tmp_path / occasions.SECOND)
    second = occasions.second_occasion(reference)
    assert second is not None and len(second) == 51
    shutil.copy(small_results, tmp_path / "efficient.csv")  # beside a file of another name
    assert occasions.second_occasion(tmp_path / "efficient.csv") is None


def test_a_book_stages_the_second_occasion_beside_the_reference_only(small_results, tmp_path):
    from jacbench.publish import book

    root = tmp_path / "checkout"
    (root / dataset.FOLDER).mkdir(parents=True)
    reference = root / dataset.RESULTS
    shutil.copy(small_results, reference)
    shutil.copy(small_results, root / occasions.SECOND)
    shutil.copy(small_results.with_suffix(".meta.json"), (root / occasions.SECOND).with_suffix(
        ".meta.json"))  # fmt: skip
    staged = book.stage_data(reference, tmp_path / "staging", root)
    second = occasions.second_occasion(tmp_path / "staging" / staged)
    assert second is not None and len(second) == 51
    assert len(occasions.others(tmp_path / "staging" / staged)) == 1  # no third beside it
    # A third occasion beside the reference is staged too, with its metadata (its processor).
    third = root / occasions.THIRD
    shutil.copy(small_results, third)
    meta = json.loads(small_results.with_suffix(".meta.json").read_text())
    third.with_suffix(".meta.json").write_text(json.dumps({**meta, "cpu_detail": "family 9"}))
    staged = book.stage_data(reference, tmp_path / "staging3", root)
    assert [len(o) for o in occasions.others(tmp_path / "staging3" / staged)] == [51, 51]
    path = occasions.occasion_path(tmp_path / "staging3" / staged, "third")
    assert occasions.processor(path) == "AMD EPYC family 9"
    assert occasions.processor(tmp_path / "staging3" / staged) is None  # the fixture's: none
    # A book from another file stages no second occasion.
    other = root / "mine.csv"
    shutil.copy(small_results, other)
    staged = book.stage_data(other, tmp_path / "staging2", root)
    assert occasions.second_occasion(tmp_path / "staging2" / staged) is None


def test_which_ratios_the_second_occasion_measured_again(small):
    table = occasions.moved(small, small.copy(), 1000)
    assert occasions.coverage(small, table, 1000) == "all 20 strategies timed at N = 1,000"
    assert occasions.coverage(small, None, None) == (
        "none of them: there is no second occasion in this build"
    )
    # The second occasion without PyTorch's jvp: named.
    second = small[~((small["strategy"] == "jvp") & (small["framework"] == "torch"))]
    table = occasions.moved(small, second, 1000)
    assert occasions.coverage(small, table, 1000) == ("all but PyTorch's jvp (19 of 20)")
    # A blocked strategy the second left out: counted as one of the blocked.
    first = small.copy()
    index = first.index[(first["strategy"] == "pathwise") & (first["framework"] == "jax")
                        & (first["paths"] == 1000)][0]  # fmt: skip
    row = first.loc[[index]].assign(strategy="blocked-pathwise")
    row.index = [first.index.max() + 1]
    first = pd.concat([first, row])
    table = occasions.moved(first, small.copy(), 1000)
    assert occasions.coverage(first, table, 1000) == ("all but the blocked strategy (20 of 21)")
    # Two blocked ones left out: counted.
    row = first.loc[[index]].assign(strategy="blocked-jvp")
    row.index = [first.index.max() + 1]
    first = pd.concat([first, row])
    table = occasions.moved(first, small.copy(), 1000)
    assert occasions.coverage(first, table, 1000) == "all but the 2 blocked strategies (20 of 22)"


def test_a_third_occasion_says_how_far_it_moved_and_whether_its_measures_agree(small):
    assert occasions.third_sentence(small, None, None, None) == ""
    third = small.copy()
    # PyTorch's jvp at 1,000 side by side 3x what its warm medians give on the third occasion.
    row = queries.one(queries.gbm(third, "strategy"), framework="torch", strategy="jvp",
                      paths=1000)  # fmt: skip
    sim = queries.simulation_of(third, row)
    warm = row["warm_median_s"] / sim["warm_median_s"]
    third.loc[row.name, ["ratio_median", "ratio_lo", "ratio_hi"]] = 3.0 * warm
    said = occasions.third_sentence(small, third, "AMD EPYC family 9", None)
    assert said.startswith(
        "A third occasion, on AMD EPYC family 9 (the dataset's: not recorded), measured "
        "the same cases at N = 1,000, 10,000 and 100,000 "
        "(book/reference/ratios.csv): its ratios moved by up to "
    )
    assert "× at 1,000 (PyTorch's jvp: " in said and "1.00× at 10,000 (" in said
    assert "; 1 of its 24 median lies outside the dataset's spread." in said
    agree, total, widest = occasions.agreement(third, [1000, 10_000, 100_000])
    assert widest["strategy"] == "jvp" and widest["factor"] == pytest.approx(3.0)
    ref_agree, ref_total, ref_widest = occasions.agreement(small, [1000, 10_000, 100_000])
    assert total == ref_total and agree <= ref_agree and ref_widest["factor"] < 3.0
    assert (
        f"its ratios agree within 1.5× in {agree} of {total} (widest 3.00×, PyTorch's jvp "
        f"at 1,000), the dataset's in {ref_agree} of {ref_total} (widest "
    ) in said
    # Where both recorded a processor, the dataset's is named beside it, or said to be the same;
    # where the occasion's sweep recorded none, 'another machine'.
    assert occasions.third_sentence(
        small, third, "AMD EPYC family 9", "AMD EPYC family 7"
    ).startswith(
        "A third occasion, on AMD EPYC family 9 (the dataset's: AMD EPYC family 7), measured"
    )
    assert occasions.third_sentence(
        small, third, "AMD EPYC family 9", "AMD EPYC family 9"
    ).startswith(
        "A third occasion, in another session on the dataset's processor (AMD EPYC family 9), "
        "measured the same cases"
    )
    assert "A third occasion, on another machine of this kind, measured" in " ".join(
        occasions.third_sentence(small, third, None, None).split()
    )
    # Its ratios in the chapter's table, beside the two occasions'; '–' where it has none.
    table = occasions.moved(small, small.copy(), 1000)
    shown = occasions.travel_table(table, third)
    jvp = shown[(shown["framework"] == "PyTorch") & (shown["strategy"] == "jvp")].iloc[0]
    assert jvp["third occasion"] == ratio_cell(third.loc[row.name])
    assert "third occasion" not in occasions.travel_table(table).columns
    none = occasions.travel_table(table, third[third["paths"] != 1000])
    assert set(none["third occasion"]) == {"–"}


def test_how_far_absolute_times_moved_in_another_session(small):
    assert occasions.times_elsewhere(small, None, None) == ""
    other = small[small["paths"] == 1000].copy()
    # PyTorch's calls twice as long there, the others as here; the ratios as they were.
    other.loc[other["framework"] == "torch", "warm_median_s"] *= 2.0
    said = occasions.times_elsewhere(small, other, "AMD EPYC family 9")
    assert said.startswith(
        "Measured again on AMD EPYC family 9 (the dataset's: not recorded), as the third "
        "occasion of the GBM chapter's ratios (book/reference/ratios.csv), the same cases at "
        "N = 1,000 took, warm, against this dataset's times: PyTorch 2.00× to 2.00× (median "
        "2.00×), TensorFlow 1.00× to 1.00× (median 1.00×), JAX 1.00× to 1.00× (median 1.00×) "
        "and numpy 1.00× to 1.00× (median 1.00×). A warm time moved by up to 2.00× (PyTorch's "
    )
    assert said.endswith(
        ", a ratio to a simulation timed beside it by up to 1.00×: absolute times are the "
        "measuring machine's, and the ratios moved less between machines."
    )
    # On the dataset's own processor, in another session: said so, and what moved between them.
    same = occasions.times_elsewhere(small, other, "AMD EPYC family 9", "AMD EPYC family 9")
    assert same.startswith(
        "Measured again in another session on the dataset's processor (AMD EPYC family 9), as "
        "the third occasion"
    )
    assert same.endswith(
        "up to 1.00×: absolute times moved more between two sessions on one processor than the "
        "ratios did."
    )
    # Ratios that moved as far as the times: not said to travel better.
    other["ratio_median"] *= 3.0
    said = occasions.times_elsewhere(small, other, None)
    assert "on another machine of this kind" in said
    assert said.endswith(", a ratio to a simulation timed beside it by as much or more (3.00×).")
    # No case in common: nothing to say.
    assert occasions.times_elsewhere(small, other.assign(paths=7), None) == ""
