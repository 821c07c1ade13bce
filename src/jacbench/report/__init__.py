"""The report: results, figures, chapter computations and the book build."""
