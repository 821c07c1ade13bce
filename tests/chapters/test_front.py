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
