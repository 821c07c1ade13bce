"""The whole book as one PDF: the single-page HTML build, printed by headless Chromium.

``make_pdf`` builds ``_build/singlehtml`` from the staging tree of a book build (``_build/src``)
with ``jupyter-book build --builder singlehtml``, opens it in Chromium, waits until MathJax has
typeset every formula and every image has loaded, and prints it to ``_build/pdf/jacbench.pdf``.
The print layout (a page break before each chapter, no navigation) is in ``_static/jacbench.css``.
"""

from __future__ import annotations

from pathlib import Path

from jacbench.errors import BuildStopped, UsageError
from jacbench.publish import book, browser

# Page numbers at the foot of each page; Chromium fills in the two spans.
FOOTER = (
    '<div style="font-size: 8px; width: 100%; text-align: center; color: #555;">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)
MARGINS = {"top": "16mm", "bottom": "18mm", "left": "15mm", "right": "15mm"}


class PdfError(BuildStopped):
    """The single page did not render completely (an image, a formula, a script error)."""


OPEN_FOLDS = """
() => document.querySelectorAll('details.sd-dropdown, details.hide.below-input, '
  + 'details.hide.above-output').forEach(d => { d.open = true; })
"""


def singlehtml(build_dir: Path) -> Path:
    """Build the single-page HTML from the book's staging tree; returns its folder."""
    staging = build_dir / "src"
    if not (staging / "_toc.yml").is_file() or not (staging / "notebooks").is_dir():
        raise UsageError(f"no staged book at {staging}; build the book first ('make book')")
    out = build_dir / "singlehtml"
    book.jupyter_book(staging, out, builder="singlehtml")
    root = browser.Book.from_sources(staging).root
    if "/" in root:
        # Sphinx writes the single page at the root document's name (book/index.html) but links
        # its assets, and itself, as if it lay at the top of the build: put it there.
        page = out / f"{root}.html"
        text = page.read_text().replace(f'href="{root}.html#', 'href="#')
        (out / "index.html").write_text(text)
        page.unlink()
    # The theme's search script loads searchindex.js, which this builder does not write; the
    # single page is printed, not searched, so an empty index keeps it free of errors.
    index = out / "searchindex.js"
    if not index.exists():
        index.write_text('Search.setIndex({"docnames": [], "filenames": [], "titles": []})\n')
    return out


def print_pdf(
    html: Path, page: str, pdf: Path, executable: str | Path | None = None
) -> browser.Visit:
    """Print one page of a built folder to pdf once it has fully rendered.

    PdfError if it did not: an image missing, a formula not typeset, a script error.
    """
    pdf.parent.mkdir(parents=True, exist_ok=True)
    with browser.serve(html) as base, browser.browser(executable) as context:
        # visit returns once MathJax has typeset, fonts are ready and images have loaded.
        seen, tab = browser.open_page(context, base + page)
        info = seen.info
        problems = list(dict.fromkeys(seen.errors))
        problems += [f"image did not load: {i['src']}" for i in info["images"] if not i["ok"]]
        if info["mathTypeset"] < info["math"] or info["mathErrors"]:
            problems.append(
                f"math not rendered: {info['mathTypeset']} of {info['math']} formulas typeset"
            )
        if problems:
            tab.close()
            raise PdfError(f"{page} did not render completely:\n" + "\n".join(problems))
        # Paper has nothing to unfold: what a page folds for the screen (specialist tables and
        # figures, dropdowns of prose) prints open; code folded above its output stays folded.
        tab.evaluate(OPEN_FOLDS)
        tab.pdf(
            path=str(pdf),
            format="A4",
            print_background=True,
            margin=MARGINS,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
            outline=True,
        )
        tab.close()
    return seen


def make_pdf(
    build_dir: Path, pdf: Path | None = None, executable: str | Path | None = None
) -> Path:
    """Build the single-page HTML of a built book and print it; returns the PDF's path."""
    build_dir = Path(build_dir).resolve()
    pdf = Path(pdf) if pdf else build_dir / "pdf" / "jacbench.pdf"
    browser.chromium_path(executable)  # fail before building if there is no browser
    print_pdf(singlehtml(build_dir), "index.html", pdf, executable)
    return pdf


def _poppler(tool: str) -> str:
    import shutil

    exe = shutil.which(tool)
    if exe is None:
        raise UsageError(f"{tool} not found; install Debian's poppler-utils")
    return exe


def page_count(pdf: Path) -> int:
    """The number of pages, from pdfinfo."""
    import subprocess

    info = subprocess.run([_poppler("pdfinfo"), str(pdf)], capture_output=True, text=True)
    for line in info.stdout.splitlines():
        if line.startswith("Pages:"):
            return int(line.split()[1])
    raise PdfError(f"pdfinfo could not read {pdf}: {info.stderr.strip()}")


def page_texts(pdf: Path) -> list[str]:
    """The text of each page, from pdftotext (in reading order: a table cell by cell)."""
    import subprocess

    proc = subprocess.run([_poppler("pdftotext"), str(pdf), "-"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise PdfError(f"pdftotext could not read {pdf}: {proc.stderr.strip()}")
    pages = proc.stdout.split("\f")
    return pages[:-1] if pages and not pages[-1].strip() else pages
