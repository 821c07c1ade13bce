"""The all-results page: every row of the results file as its searchable table shows it."""

from jacbench.report.chapters.results.tables import note, number, table

__all__ = ["note", "number", "table"]
