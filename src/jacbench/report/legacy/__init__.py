"""The chapters' former computations, wording sentences from the rows: being replaced by
the fact packages in report.chapters, and removed once nothing imports them."""
