"""What a notebook hands to the book: glued values, generated tables and figure files.

A chapter page in book/ pastes a notebook's values with ``{glue:text}`` and includes its tables
and figures from ``book/generated/``; the notebook page shows the same tables and figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Section:
    """The values, tables (Markdown) and figures (matplotlib) of one notebook."""

    values: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    figures: dict[str, object] = field(default_factory=dict)

    def value(self, key: str, text: str) -> None:
        self.values[key] = text


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown pipe table."""
    esc = [[str(c).replace("|", "\\|") for c in r] for r in [header, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines) + "\n"


def publish(section: Section, out_dir: str | Path, prefix: str) -> None:
    """Glue every value, write tables and figures under out_dir, and show them in the notebook."""
    import matplotlib.pyplot as plt
    from IPython.display import Image, Markdown, display
    from myst_nb import glue

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for key, text in section.values.items():
        # Glued as a str: its plain-text form is quoted, and {glue:text}`doc::key:s` unquotes it.
        glue(key, str(text), display=False)
    for name, md in section.tables.items():
        (out / f"{prefix}-{name}.md").write_text(md)
        display(Markdown(md))
    for name, fig in section.figures.items():
        path = out / f"{prefix}-{name}.png"
        fig.savefig(path, bbox_inches="tight")
        # The saved PNG, not the figure: under the Agg backend a figure displays as its repr.
        display(Image(filename=str(path)))
        plt.close(fig)
