"""A Sphinx extension for the book: every page loads each of its scripts once.

Sphinx 7.4 lists an inline script that an extension adds after the builder starts twice (once
under the file name ``None``, once under ``""``). sphinx-thebe's inline script declares
``const`` names, so its second copy is a script error in every page.
"""

from __future__ import annotations

from typing import Any


def _key(script: Any) -> tuple:
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {})
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def unique_scripts(scripts: list) -> list:
    """The scripts in order, without repeats (a file name of None and of "" are the same)."""
    seen: set[tuple] = set()
    out = []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            out.append(script)
    return out


def _page_context(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])


def setup(app) -> dict:
    app.connect("html-page-context", _page_context, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
