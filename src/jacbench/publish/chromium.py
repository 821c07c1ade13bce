"""Serving a built HTML folder on 127.0.0.1 and opening its pages in headless Chromium.

Debian's Chromium, driven by Playwright (never a downloaded browser); ``open_page`` collects
what a page showed (title, headings, images, links, glued values, math) and its errors.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from jacbench.errors import UsageError

CHROMIUM = "/usr/bin/chromium"
# Chromium as root in a machine without a network: no sandbox, no GPU, no background traffic.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
VIEWPORTS = {"laptop": (1280, 800), "phone": (390, 844)}
TIMEOUT_MS = 30_000

# Runs in the page once it has loaded: waits for MathJax, fonts and images, then reports.
_COLLECT = r"""
async () => {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) { await mj.startup.promise; }
  await document.fonts.ready;
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
  const text = el => {
    const c = el.cloneNode(true);
    c.querySelectorAll('.headerlink').forEach(x => x.remove());
    return c.textContent.replace(/\s+/g, ' ').trim();
  };
  const h1 = document.querySelector('article h1') || document.querySelector('h1');
  const nav = document.querySelector('nav.bd-docs-nav');
  const math = [...document.querySelectorAll('span.math, div.math')];
  return {
    title: document.title.trim(),
    h1: h1 ? text(h1) : null,
    images: [...document.images].map(i => ({
      src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    pasted: [...document.querySelectorAll('[class*="pasted-"]')].map(e => ({
      cls: e.className,
      text: e.textContent.trim(),
      media: !!e.querySelector('img, svg, mjx-container, table')})),
    pastedText: document.querySelectorAll('.pasted-text').length,
    nav: nav ? [...nav.querySelectorAll('a[href]')].map(a => ({href: a.href, text: text(a)}))
             : null,
    // Outputs that a reader sees as code instead of what they stand for.
    figuresAsText: [...document.querySelectorAll('.output pre, .cell_output pre')]
      .filter(e => /<Figure size [\d.]+x[\d.]+ with \d+ Axes>/.test(e.textContent)).length,
    tablesAsText: [...document.querySelectorAll('article p')]
      .filter(e => e.textContent.split('\n').filter(l => /^\s*\|.*\|\s*$/.test(l)).length > 1)
      .length,
    math: math.length,
    mathTypeset: math.filter(e => e.querySelector('mjx-container')).length,
    mathErrors: document.querySelectorAll('mjx-merror').length,
  };
}
"""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve a folder on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def chromium_path(path: str | Path | None = None) -> Path:
    """The Chromium to run: the argument, else $JACBENCH_CHROMIUM, else Debian's."""
    exe = Path(path or os.environ.get("JACBENCH_CHROMIUM") or CHROMIUM)
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        raise UsageError(
            f"Chromium not found at {exe}; install Debian's (apt-get install chromium) "
            "or set JACBENCH_CHROMIUM"
        )
    return exe


@contextlib.contextmanager
def browser(executable: str | Path | None = None) -> Iterator:
    """A Playwright browser context on headless Chromium with a fresh user-data-dir."""
    exe = chromium_path(executable)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise UsageError("the playwright package is missing; run 'make env'") from None
    with (
        tempfile.TemporaryDirectory(prefix="jacbench-chromium-") as profile,
        sync_playwright() as p,
    ):
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=str(exe),
            args=list(CHROMIUM_ARGS),
            headless=True,
            viewport={"width": VIEWPORTS["laptop"][0], "height": VIEWPORTS["laptop"][1]},
        )
        context.set_default_timeout(TIMEOUT_MS)
        try:
            yield context
        finally:
            context.close()


@dataclass
class Visit:
    """What one page showed: its collected facts and the errors seen while it loaded."""

    url: str
    info: dict
    errors: list[str] = field(default_factory=list)


def visit(context, url: str, viewport: tuple[int, int] | None = None) -> Visit:
    """Open url in a new page, wait for it to settle, collect facts and errors; close it."""
    seen, page = open_page(context, url, viewport)
    page.close()
    return seen


def open_page(context, url: str, viewport: tuple[int, int] | None = None) -> tuple[Visit, object]:
    """Like visit, but leaves the page open (for screenshots or printing): (Visit, page)."""
    page = context.new_page()
    if viewport:
        page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    errors: list[str] = []
    page.on(
        "console",
        lambda m: errors.append(f"console error: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: errors.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} ({r.failure})"))
    page.on(
        "response",
        lambda r: errors.append(f"HTTP {r.status} for {r.url}") if r.status >= 400 else None,
    )
    page.goto(url, wait_until="load")
    return Visit(url, page.evaluate(_COLLECT), errors), page
