"""The glossary: each strategy's and second-order method's label beside the API call it makes."""

from jacbench.report.chapters.glossary.tables import second_order, strategies

__all__ = ["second_order", "strategies"]
