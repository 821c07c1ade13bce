"""The reader's checks on hand-made pages and measurements: the "In short" box before the first
section, the page's height and the figures' heights."""

from jacbench.publish import readerchecks
from jacbench.publish.readerchecks import height_problems, summary_problem, summary_problems


def _page(*parts: str) -> str:
    # The theme's own headings stand outside the article: the sidebar's "Contents" before it.
    head = "<html><body><div class='sidebar'><h2> Contents </h2></div><article class='bd-article'>"
    return head + "".join(parts) + "</article><h2>Footer</h2></body></html>"


H1 = "<section id='c'><h1>The chapter</h1>"
BOX = ("<div class='admonition in-short'><p class='admonition-title'>In short</p>"
       "<p>The answer, <span class='pasted-text'>12 s</span>.</p></div>")  # fmt: skip
OTHER_BOX = "<div class='note admonition'><p class='admonition-title'>Parameters</p></div>"
SECTION = (
    "<section id='s'><h2>A section<a class='headerlink' href='#s'>#</a></h2><p>x</p></section>"
)


def test_a_summary_box_before_the_first_section_passes():
    assert summary_problem("c.html", _page(H1, BOX, OTHER_BOX, SECTION, "</section>")) is None
    # Another box before it does not matter, nor a page with no section at all.
    assert summary_problem("c.html", _page(H1, OTHER_BOX, BOX, SECTION, "</section>")) is None
    assert summary_problem("c.html", _page(H1, BOX, "</section>")) is None


def test_a_missing_or_late_summary_box_is_reported():
    assert summary_problem("c.html", _page(H1, OTHER_BOX, SECTION)) == "c.html: no 'In short' box"
    late = summary_problem("c.html", _page(H1, SECTION, BOX, "</section>"))
    assert late == "c.html: its 'In short' box comes after its first section"
    # A box titled otherwise, or a paragraph that only says "In short", is not the box.
    titled = BOX.replace(">In short<", ">In shorts<")
    assert summary_problem("c.html", _page(H1, titled, SECTION)) == "c.html: no 'In short' box"
    plain = "<p>In short</p>"
    assert summary_problem("c.html", _page(H1, plain, SECTION)) == "c.html: no 'In short' box"


def test_only_the_articles_headings_and_boxes_count():
    # A box outside the article is not the chapter's.
    outside = _page(H1, SECTION).replace("<body>", "<body>" + BOX)
    assert summary_problem("c.html", outside) == "c.html: no 'In short' box"
    box_after = "<html><body><article>" + H1 + SECTION + "</article>" + BOX + "</body></html>"
    assert summary_problem("c.html", box_after) == "c.html: no 'In short' box"


def test_the_summary_title_may_be_split_by_markup():
    split = BOX.replace(">In short<", "><span>In</span>\n short<")
    assert summary_problem("c.html", _page(H1, split, SECTION)) is None


def test_every_summarized_chapter_is_read_from_the_build(tmp_path):
    first, second = readerchecks.SUMMARIZED[:2]
    (tmp_path / "notebooks").mkdir()
    (tmp_path / f"{first}.html").write_text(_page(H1, BOX, SECTION))
    (tmp_path / f"{second}.html").write_text(_page(H1, SECTION, BOX))
    problems = summary_problems(tmp_path, (first, second, "notebooks/absent"))
    assert problems == [
        f"{second}.html: its 'In short' box comes after its first section",
        "notebooks/absent.html: missing (it must open with an 'In short' box)",
    ]


def _seen(page: float, *figures: float) -> dict:
    return {
        "viewport": 1280,
        "page": page,
        "figures": [{"name": f"fig-{i}", "height": h} for i, h in enumerate(figures)],
    }


def test_a_page_and_figures_within_the_limits_pass():
    assert height_problems("c.html", _seen(12_000, 900, 350.2)) == []


def test_a_tall_page_and_a_tall_figure_are_reported():
    problems = height_problems("c.html", _seen(24_520, 2_023, 899, 901))
    assert problems == [
        "c.html at 1280 px: the page is 24,520 px tall (at most 12,000)",
        "c.html at 1280 px: figure fig-0 is 2,023 px tall (at most 900)",
        "c.html at 1280 px: figure fig-2 is 901 px tall (at most 900)",
    ]


def test_a_page_that_is_not_a_chapter_may_be_tall_but_not_its_figures():
    problems = height_problems("genindex.html", _seen(30_000, 1_000), chapter=False)
    assert problems == ["genindex.html at 1280 px: figure fig-0 is 1,000 px tall (at most 900)"]


def test_the_limits_are_the_readers():
    assert (readerchecks.MAX_PAGE_HEIGHT, readerchecks.MAX_FIGURE_HEIGHT) == (12_000, 900)
    assert len(readerchecks.SUMMARIZED) == 8
