"""Chapter 4, the GBM comparison: every strategy against one simulation, the blocked
strategies, the price of compilation and the accuracy, as facts."""

from jacbench.report.chapters.gbm.accuracy import Accuracy, PathwiseCheck, pathwise_check
from jacbench.report.chapters.gbm.compilation import Price
from jacbench.report.chapters.gbm.costs import Blocked, Cost, Default
from jacbench.report.chapters.gbm.facts import HUNDREDS, LATE, SMALL, Facts, facts

__all__ = [
    "HUNDREDS",
    "LATE",
    "SMALL",
    "Accuracy",
    "Blocked",
    "Cost",
    "Default",
    "Facts",
    "PathwiseCheck",
    "Price",
    "facts",
    "pathwise_check",
]
