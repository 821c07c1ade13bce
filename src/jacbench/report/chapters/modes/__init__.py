"""Chapter 2, forward and reverse mode: the one-step teaching example, and each framework's
forward mode against its reverse mode, measured."""

from jacbench.report.chapters.modes import tables
from jacbench.report.chapters.modes.facts import Example, Facts, Pair, Run, facts, teaching

__all__ = ["Example", "Facts", "Pair", "Run", "facts", "tables", "teaching"]
