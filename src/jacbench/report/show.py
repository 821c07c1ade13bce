"""What a chapter notebook's cells hand to the book: glued text, tables and figures.

``text(key, value, fmt)`` glues a value for ``{glue:text}`key``` in the same notebook's prose;
``table(df)`` is a DataFrame as the book shows it (no index, names in code type); ``figure(fig)``
displays a matplotlib figure once, as a PNG, and closes it.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import pandas as pd

from jacbench.report import formats


def text(key: str, value, fmt: Callable[[Any], str] | None = None) -> None:
    """Glue value under key for the notebook's prose, formatted by fmt where given; a missing
    value (None, NaN) reads "not measured in this profile", so a cell need not test for it.

    Nothing is returned, so a cell that ends with it shows nothing. The glued value is always a
    str: {glue:text} reads the plain-text form back with literal_eval, so a str's quoted repr
    comes back exactly ("10,000", "0.0e+00"), where an unquoted one would be read as a tuple or
    a float.
    """
    from myst_nb import glue

    shown = formats.NOT_MEASURED if formats.missing(value) else (fmt or str)(value)
    glue(key, str(shown), display=False)


def code(name) -> str:
    """A name in code type inside a table cell."""
    return f"<code>{html.escape(str(name))}</code>"


def table(df: pd.DataFrame, code_columns: tuple[str, ...] = (), wrap_code: bool = False):
    """The DataFrame as the book shows a table: no index, the named columns in code type, every
    other cell as text (escaped); wrap_code lets code cells wrap (a column of long calls, where
    a strategy's one-word name would keep to one line)."""
    shown = df.copy()
    for column in shown.columns:
        if column in code_columns:
            shown[column] = [code(v) if v not in ("", "–") else v for v in shown[column]]
        else:
            shown[column] = [html.escape(str(v)) for v in shown[column]]
    shown.columns = [html.escape(str(c)) for c in shown.columns]
    classes = "dataframe wrap-code" if wrap_code else "dataframe"
    return shown.style.hide(axis="index").set_table_attributes(f'class="{classes}"')


def figure(fig, dpi: int = 110) -> None:
    """Display a matplotlib figure once, as a PNG (figures.py draws with Agg, which has no
    display of its own), and close it."""
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    display(Image(data=buf.getvalue(), format="png"))


def choose(key: str, fact: bool, if_true: str, if_false: str) -> None:
    """Glue one of two hand-written phrases under key, the one the fact makes true: where the
    data decide between two readings, the notebook holds both."""
    text(key, if_true if fact else if_false)


def table_for(
    key: str, df: pd.DataFrame, code_columns: tuple[str, ...] = (), wrap_code: bool = False
) -> None:
    """Glue a table (as table() shows it) under key, for a ```{glue} key``` directive where a
    cell cannot stand: inside a tab or a dropdown, which one Markdown cell must hold whole."""
    from myst_nb import glue

    glue(key, table(df, code_columns, wrap_code), display=False)
