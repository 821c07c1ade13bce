"""The method chapter, how it was measured: how a case runs, how a ratio is timed, the measuring
sessions and their margins, the allocators, page faults and YNNPACK."""

from jacbench.report.chapters.method.facts import Facts, facts

__all__ = ["Facts", "facts"]
