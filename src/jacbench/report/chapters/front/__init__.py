"""The front page: the answer's code in each framework, what it cost at each question's size,
and whether it is the book's pick there."""

from jacbench.report.chapters.front.facts import ONCE, SNIPPETS, Answer, Facts, Snippet, facts
from jacbench.report.chapters.front.tables import price

__all__ = ["ONCE", "SNIPPETS", "Answer", "Facts", "Snippet", "facts", "price"]
