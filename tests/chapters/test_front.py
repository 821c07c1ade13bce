"""The front page's tables (report.chapters.front): what each answer and the question's own
program cost at the question's size, each number in the column it belongs to."""

from jacbench.report import formats
from jacbench.report.chapters import front, question


def test_the_questions_program_row_gives_memory_beyond_its_inputs(reference):
    asked = question.facts(reference)
    torch = asked.torch["glibc-mmap"]
    table = front.price(None, None)
    assert list(table.columns) == ["", "first call", "later calls", "memory beyond the inputs"]
    row = front.tables._program_row("the question's program", torch)
    assert row["first call"] == formats.time(torch.first_s)
    # the whole process's peak is several times what the program held beyond its inputs
    assert torch.peak > 2 * torch.beyond_inputs
    assert row["memory beyond the inputs"] == formats.size(torch.beyond_inputs)
    assert formats.size(torch.peak) not in row.values()


def test_a_stopped_program_says_what_stopped_it(reference):
    tf = question.facts(reference).tensorflow
    row = front.tables._program_row("the question's program", tf)
    assert not tf.finished and row["first call"].startswith("stopped at")
    assert row["memory beyond the inputs"] == "–"


def test_the_questions_program_row_gives_its_later_call_where_it_made_one(reference):
    torch = question.facts(reference).torch["glibc-mmap"]
    row = front.tables._program_row("the question's program", torch)
    assert torch.warm_s and row["later calls"] == formats.time(torch.warm_s)


def test_the_one_call_winner_has_its_own_snippet_and_price_where_the_loop_wins_later(
    reference, others
):
    """PyTorch's and TensorFlow's eager pathwise gradients win one call at the question's size,
    where their loops win later calls: each has its snippet, priced by its own row; JAX's loop
    wins both and shows none. Slowed a hundredfold, PyTorch's stops being a pick."""
    from jacbench.report import margins, picks
    from tests.chapters.rows import at, edit

    noise = margins.measure(reference, others)  # the sessions' margins, before any edit
    f = front.facts(picks.compute(reference, noise))
    for fw in ("torch", "tensorflow"):
        a = f.answer(front.ONCE, fw)
        assert a.snippet.first == "pathwise" and a.one_call_pick and a.picked
        table = front.price(a)
        assert list(table[""]) == ["pathwise"]
        assert table["first call"][0] == formats.time(a.pick.entry("pathwise").cold_s)
    assert f.answer(front.ONCE, "jax") is None and f.all_picked
    df = reference.copy()
    i = at(df, "torch", "pathwise", paths=picks.QUESTION_N)
    edit(df, i, cold_s=df.loc[i, "cold_s"] * 100)
    slowed = front.facts(picks.compute(df, noise))
    assert not slowed.answer(front.ONCE, "torch").picked and not slowed.all_picked
