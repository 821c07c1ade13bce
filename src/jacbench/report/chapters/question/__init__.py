"""Chapter 1, the question: its programs as measured here, beside what it reported."""

from jacbench.report.chapters.question.facts import TF_CAP, Facts, Program, facts, program
from jacbench.report.chapters.question.tables import observations

__all__ = ["TF_CAP", "Facts", "Program", "facts", "observations", "program"]
