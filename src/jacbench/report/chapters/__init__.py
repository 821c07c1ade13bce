"""The computations behind each chapter: values to glue, tables and figures, from results.

Each function takes loaded results and the notebook's parameters and returns a Section; the
notebook only calls it and publishes. Values are formatted text; where a profile did not
measure something, the value says so instead of being left empty. One module per chapter,
with the helpers several chapters share in ``common``.
"""

from jacbench.report.chapters.common import NOT_MEASURED, best, largest_common
from jacbench.report.chapters.gbm import gbm_comparison
from jacbench.report.chapters.modes import modes
from jacbench.report.chapters.question import question
from jacbench.report.chapters.recommend import recommend
from jacbench.report.chapters.vectorized import vectorized
from jacbench.report.chapters.wide import wide

__all__ = [
    "NOT_MEASURED",
    "best",
    "gbm_comparison",
    "largest_common",
    "modes",
    "question",
    "recommend",
    "vectorized",
    "wide",
]
