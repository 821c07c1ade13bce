"""Chapter 5, how fast it can be: the machine's limit, and each form of the simulation's fastest
Jacobian against it, as facts."""

from jacbench.report.chapters.limit.facts import HELD_N, TABLE_N, Best, Drawn, Facts, Timed, facts

__all__ = ["HELD_N", "TABLE_N", "Best", "Drawn", "Facts", "Timed", "facts"]
