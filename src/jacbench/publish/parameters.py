"""A chapter run by hand (jacbench notebook): where the checkout is, and the values given as
-p KEY VALUE read as the type of the parameter's default in the notebook's parameters cell, so
that a value of the wrong form is one line before anything runs, not a failing cell."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from jacbench.errors import UsageError

# What marks the checkout's root: the book's table of contents and the chapters' folder.
MARKS = ("_toc.yml", "notebooks")
# The checkout an editable install runs from (src/jacbench/publish/parameters.py in it): the one
# place that knows the package's own checkout.
OWN_CHECKOUT = Path(__file__).resolve().parents[3]


@functools.cache
def chapters(root: Path = OWN_CHECKOUT) -> tuple[str, ...]:
    """The chapters in reading order, from the one list of them, the checkout's _toc.yml: each
    notebooks/NAME.md, by NAME (the front page and the bibliography are not chapters)."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [entry["file"] for entry in toc.get("chapters", [])]
    return tuple(Path(f).name for f in files if Path(f).parent.name == "notebooks")


def is_checkout(folder: Path) -> bool:
    return all((folder / mark).exists() for mark in MARKS)


def checkout_root(start: Path | None = None) -> Path:
    """The checkout holding start (default: the working folder): the nearest folder at or above
    it with _toc.yml and notebooks/. UsageError saying where to run otherwise."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if is_checkout(folder):
            return folder
    own = OWN_CHECKOUT
    where = f"cd {own}" if is_checkout(own) else "cd into the checkout (it holds _toc.yml)"
    raise UsageError(
        f"{start} is not inside a jacbench checkout, where the chapters are: {where} and run "
        "it there"
    )


def _default(source: str | None) -> object:
    """The default as a value, from its source text in the parameters cell (None if it is
    not a literal)."""
    try:
        return ast.literal_eval(source or "")
    except (ValueError, SyntaxError):
        return None


def _number(text: str, whole: bool) -> int | float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if whole:
        return int(value) if value.is_integer() else None
    return value


def _guess(text: str) -> object:
    """A value with no typed default: a number or True/False/None as such, else the text."""
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_value(key: str, text: str, default_source: str | None) -> object:
    """The value of -p KEY TEXT in the type of the default (given as its source text): a whole
    number (10000, 10_000, 1e4), a number, True or False, text, or numbers separated by commas
    for a tuple or list. UsageError naming the parameter and the form it takes."""
    default = _default(default_source)
    like = f"like its default {default_source}"
    if isinstance(default, bool):
        if text not in ("True", "False"):
            raise UsageError(f"the parameter {key} is True or False, got {text!r}")
        return text == "True"
    if isinstance(default, int | float):
        whole = isinstance(default, int)
        value = _number(text.replace("_", ""), whole)
        if value is None:
            form = "a whole number (10000, 10_000 or 1e4)" if whole else "a number"
            raise UsageError(f"the parameter {key} is {form}, {like}; got {text!r}")
        return value
    if isinstance(default, tuple | list) and all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in default
    ):
        whole = all(isinstance(x, int) for x in default)
        parts = [p.strip().replace("_", "") for p in text.split(",")]
        values = [_number(p, whole) for p in parts]
        if not parts or None in values:
            what = "whole numbers" if whole else "numbers"
            example = ",".join(f"{x:g}" for x in default)
            raise UsageError(
                f"the parameter {key} is {what} separated by commas, such as {example} "
                f"(its default {default_source}); got {text!r}"
            )
        return values
    if isinstance(default, str):
        return text
    return _guess(text)


def parse_parameters(pairs: list[list[str]] | None, declared: dict) -> dict:
    """The values given as -p KEY VALUE, each read as its default's type (see parse_value);
    declared is papermill's inspection of the parameters cell (name -> {"default": source}).
    UsageError for a name the notebook does not declare or a value of the wrong form."""
    out = {}
    for key, text in pairs or []:
        if key not in declared:
            valid = ", ".join(declared) or "none"
            raise UsageError(f"the notebook has no parameter {key!r}; its parameters: {valid}")
        out[key] = parse_value(key, text, (declared[key] or {}).get("default"))
    return out
