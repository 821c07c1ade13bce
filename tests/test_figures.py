"""The scaling figures' strategy families, on the 51-row fixture (no sweep, no book build); the
price of compilation's numbers are tested in tests/chapters/test_gbm.py."""

from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.text import Text

from jacbench.constants import FRAMEWORK_NAMES, FRAMEWORKS
from jacbench.report import data, figures
from jacbench.report.figures import panels as figures_scaling
from jacbench.strategies import registry

GBM = [(fw, s) for fw in FRAMEWORKS for s in registry.by_framework(fw, "gbm")]


@pytest.fixture(scope="module")
def df(small_results):
    return data.load(small_results)


@pytest.mark.parametrize(("fw", "s"), GBM, ids=[f"{fw}/{s.name}" for fw, s in GBM])
def test_every_gbm_strategy_has_exactly_one_family(fw, s):
    assert figures.family(fw, s.name) in figures.FAMILIES
    # Emphasis follows the family: recommended families and the question's programs are strong;
    # a build experiment (JAX's pathwise gradient without YNNPACK) is not, whatever its family.
    assert figures.strong(fw, s.name) == (
        s.name == "question"
        or (figures.family(fw, s.name) in figures.RECOMMENDED and not s.experiment)
    )


def test_a_family_is_read_from_the_record_the_same_way_in_every_framework():
    def signature(s):
        return (s.mode, s.batching, s.compiled and s.engine != "jit")

    seen = {}
    for fw, s in GBM:
        seen.setdefault(signature(s), set()).add(figures.family(fw, s.name))
    assert all(len(families) == 1 for families in seen.values()), seen
    expected = {
        ("torch", "question"): "loop reverse",
        ("tensorflow", "question"): "vectorized reverse",
        ("torch", "jacrev-chunked"): "chunked",
        ("torch", "pathwise"): "pathwise",
        ("tensorflow", "forward-accumulator"): "forward",
        ("torch", "compiled-jvp"): "compiled",
        ("tensorflow", "pathwise-xla"): "compiled",
        ("jax", "jvp"): "forward",  # jitted throughout: its family is its differentiation
        ("jax", "vjp-loop"): "loop reverse",
        ("numpy", "finite-difference"): "no AD",
        ("tensorflow", "simulation:function"): "no AD",
    }
    assert {k: figures.family(*k) for k in expected} == expected
    assert len(set(figures.FAMILIES.values())) == len(figures.FAMILIES)  # one colour each


def test_each_line_has_its_familys_colour_in_every_panel(df):
    fig = figures.scaling_grid(df, metric="time", frameworks=list(FRAMEWORKS))
    drawn = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_gid():
                fw, name = line.get_gid().split("/", 1)
                drawn[fw, name] = to_hex(line.get_color())
    assert {fw for fw, _ in drawn} == set(FRAMEWORKS)
    for (fw, name), colour in drawn.items():
        assert colour == to_hex(figures.FAMILIES[figures.family(fw, name)]), (fw, name)
    # Every labelled line end is a strong strategy of its panel (numpy's panel has none: all).
    texts = {t.get_text().replace("\n", "") for ax in fig.axes[:3] for t in ax.texts}
    assert {"pathwise", "question", "jvp", "compiled-pathwise"} <= texts
    assert "tape-jacobian-pfor" not in texts and "grad-loop" not in texts


def test_captions_state_the_conditions(df):
    text = figures.caption_conditions(df)
    # The fixture is rows of a quick sweep: recognised by its cases, whatever its file's name.
    assert text.startswith("the quick profile (") and "M = 52 steps" in text
    assert "float32" in text and "1 thread" in text and "σ = 0.2" in text


def test_the_gbm_chapter_states_its_conditions_and_prices_compilation(built):
    import re

    out, _ = built
    html = (out / "html" / "notebooks" / "04-gbm.html").read_text()
    for label in ("fig-time", "fig-memory"):
        figure = re.search(rf'<figure[^>]*id="{label}".*?</figure>', html, flags=re.S).group(0)
        caption = re.search(r"<figcaption>.*?</figcaption>", figure, flags=re.S).group(0)
        pasted = re.findall(r'<span class="pasted-text">([^<]*)</span>', caption)
        assert pasted and pasted[0].startswith("the standard profile; M = 52 steps, float32, 2 thr")
    section = html[html.index('id="the-price-of-compilation"') :]
    table = re.search(r"<table.*?</table>", section, flags=re.S).group(0)
    assert "compiled-pathwise" in table and "pathwise-function" in table
    assert "no eager variant" in table  # JAX: said in the table, no counterpart invented


def _question_twice(df):
    """The fixture with TensorFlow's program at one N measured twice, as the standard profile
    does at 10,000: skipped on the model under 8 GiB, then run and killed under 16 GiB with a
    longer timeout, beside a strategy that timed out at 300 s."""
    import pandas as pd

    q = df[(df["framework"] == "tensorflow") & (df["strategy"] == "question")]
    n = int(q["paths"].max()) * 10
    skipped = q.iloc[[0]].assign(paths=n, status="skipped-predicted", mem_cap=8 * 2**30,
                                 timeout=300.0, warm_median_s=None)  # fmt: skip
    killed = q.iloc[[0]].assign(paths=n, status="memory-cap", mem_cap=16 * 2**30,
                                timeout=900.0, warm_median_s=None)  # fmt: skip
    loop = df[(df["framework"] == "tensorflow") & (df["strategy"] != "question")].iloc[[0]]
    slow = loop.assign(paths=n, status="timeout", timeout=300.0, warm_median_s=None)
    return pd.concat([df, skipped, killed, slow], ignore_index=True), n


def test_a_case_measured_under_two_caps_is_drawn_once_as_the_run_that_went_furthest(df):
    both, n = _question_twice(df)
    rows = figures_scaling._rows(both, "tensorflow", "float32", "glibc")
    at_n = rows[(rows["strategy"] == "question") & (rows["paths"] == n)]
    assert list(at_n["status"]) == ["memory-cap"]
    assert int(at_n["mem_cap"].iloc[0]) == 16 * 2**30
    assert not rows.duplicated(["strategy", "paths"]).any()


def test_each_timeout_line_says_its_value_and_the_labels_do_not_meet(df):
    both, _ = _question_twice(df)
    fig = figures.scaling_grid(both, metric="time", frameworks=["tensorflow"])
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_text().startswith("timeout")]
    texts = [t.get_text() for t in labels]
    assert {"timeout 300 s", "timeout 900 s"} <= set(texts) and len(set(texts)) == len(texts)
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in labels]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    # Nor does a timeout's label cover a line's or a failed case's label.
    others = [Text.get_window_extent(t) for t in ax.texts if t not in labels]
    assert others and not any(a.overlaps(b) for a in boxes for b in others)


def _crosses(points, box) -> bool:
    """Whether a polyline (display coordinates) passes through a box."""
    for (x0, y0), (x1, y1) in zip(points[:-1], points[1:], strict=True):
        lo, hi = max(box.x0, min(x0, x1)), min(box.x1, max(x0, x1))
        if lo < hi and x1 != x0:
            ya, yb = (y0 + (y1 - y0) * (x - x0) / (x1 - x0) for x in (lo, hi))
            if max(ya, yb) >= box.y0 and min(ya, yb) <= box.y1:
                return True
    return False


def test_no_label_hides_a_line_that_goes_on_past_its_own_lines_end():
    """In the published figure TensorFlow's blocked strategies run on from 10^6 to 10^7, where
    the labels of the lines that end at 10^6 stand; those labels keep clear of them."""
    ref = data.load(Path(__file__).resolve().parents[1] / "book" / "reference" / "standard.csv")
    fig = figures.scaling_grid(ref, metric="time")
    fig.canvas.draw()
    for ax in fig.axes:
        lines = [ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]))
                 for ln in ax.get_lines()
                 if ln.get_transform() == ax.transData and len(ln.get_xdata()) > 1]  # fmt: skip
        for label in ax.texts:
            if label.get_text().startswith(("timeout", "memory cap")):
                continue
            end_x = ax.transData.transform(label.xy)[0]
            box = Text.get_window_extent(label)
            hidden = [pts for pts in lines if pts[:, 0].min() < end_x < pts[:, 0].max()
                      and _crosses(pts, box)]  # fmt: skip
            assert not hidden, f"{ax.get_title(loc='left')}: {label.get_text()!r} hides a line"


def test_no_two_line_labels_overlap_in_the_reference_datasets_figure():
    """The published book's main figure: every framework's labels readable, none drawn over
    another (TensorFlow's panel ends nine strong lines at the same N)."""
    ref = data.load(Path(__file__).resolve().parents[1] / "book" / "reference" / "standard.csv")
    fig = figures.scaling_grid(ref, metric="time")
    fig.canvas.draw()
    for ax in fig.axes:
        # The text's own box: an annotation's would take in its leader line too.
        labels = list(ax.texts)
        boxes = [Text.get_window_extent(t) for t in labels]
        clash = [(labels[i].get_text(), labels[j].get_text())
                 for i in range(len(boxes)) for j in range(i + 1, len(boxes))
                 if boxes[i].overlaps(boxes[j])]  # fmt: skip
        assert not clash, f"{ax.get_title(loc='left')}: {clash[:3]}"


def _saved_size(fig, dpi: int = 150) -> tuple[int, int]:
    """The PNG's width and height in pixels, saved as the chapter saves it."""
    import io
    import struct

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return struct.unpack(">II", buf.getvalue()[16:24])


def test_the_main_figure_is_a_two_by_two_grid_on_shared_axes_that_fits_a_screen(df):
    fig = figures.scaling_grid(df, metric="time", frameworks=list(FRAMEWORKS))
    fig.canvas.draw()
    axes = fig.axes
    assert len(axes) == 4
    boxes = [ax.get_position() for ax in axes]
    # PyTorch and TensorFlow side by side on top, JAX and numpy under them.
    assert boxes[0].x0 < boxes[1].x0 and boxes[2].x0 < boxes[3].x0
    assert boxes[0].y0 == pytest.approx(boxes[1].y0) and boxes[2].y0 == pytest.approx(boxes[3].y0)
    assert boxes[0].y0 > boxes[2].y1
    assert [ax.get_title(loc="left").split(":")[0] for ax in axes] == [
        "PyTorch", "TensorFlow", "JAX", "numpy"]  # fmt: skip
    # Shared axes, and one key for the figure rather than one per panel.
    assert all(ax.get_xlim() == axes[0].get_xlim() for ax in axes)
    assert all(ax.get_ylim() == axes[0].get_ylim() for ax in axes)
    assert axes[0].get_shared_x_axes().joined(axes[0], axes[3])
    assert len(fig.legends) == 1 and not any(ax.get_legend() for ax in axes)
    # Only the bottom row names the N axis.
    assert [ax.get_xlabel() for ax in axes] == ["", "", "paths N", "paths N"]
    # Wider than tall; shown at the 782 px column of a 1280 px screen, at most 900 px tall.
    width, height = _saved_size(fig)
    assert width > height and height * 782 / width <= 900


def test_three_panels_leave_the_fourth_place_empty_and_show_every_n_axis():
    fig, panels = figures_scaling.grid(3)
    assert len(panels) == 3 and len(fig.axes) == 3
    shown = [ax.xaxis.get_tick_params()["labelbottom"] for ax in panels]
    assert shown == [False, True, True]  # the top-right panel has none under it
    fig, panels = figures_scaling.grid(1)
    assert len(panels) == 1 and panels[0].get_position().width > 0.5


def test_one_read_of_the_normals_is_a_line_on_every_time_panel(df, tmp_path):
    """The machine's limit (numpy's read of the normals, limit:read) is drawn on each
    framework's time panel and named in the key; a file without its rows draws none."""
    from jacbench.report.chapters import limit
    from jacbench.report.figures.limit import forms

    reference = data.load(Path(__file__).resolve().parents[1] / "book/reference/standard.csv")
    reads = figures_scaling.read_rows(reference)
    assert [r["paths"] for r in reads] == sorted(r["paths"] for r in reads) and len(reads) >= 6
    fig = figures.scaling_grid(reference, metric="time", frameworks=["torch", "jax"])
    dashed = [
        ln
        for ax in fig.axes
        for ln in ax.get_lines()
        if ln.get_linestyle() == "--" and list(ln.get_xdata()) == [r["paths"] for r in reads]
    ]
    assert len(dashed) == 2  # one a panel
    assert figures_scaling.READ_LABEL in [t.get_text() for t in fig.legends[0].get_texts()]
    none = figures.scaling_grid(df, metric="time", frameworks=["torch"])
    assert figures_scaling.READ_LABEL not in [t.get_text() for t in none.legends[0].get_texts()]
    # The limit chapter's figure: both forms' fastest and the read, in each framework's panel.
    f = limit.facts(reference)
    panels = forms(f).axes
    assert len(panels) == 3 and all(len(ax.get_lines()) == 4 for ax in panels)
    for ax in panels:  # the whole array at the N where the loop ran too (never 3,000 alone)
        by = {ln.get_marker(): set(ln.get_xdata()) for ln in ax.get_lines()}
        assert by["o"] and by["o"] <= by["s"] and 3_000 not in by["o"]


def test_the_time_memory_figure_colours_by_family_and_names_only_the_front(df):
    """Each point in its family's colour (the promise of the first figure's caption), one panel
    per framework, and a name only where no other point of the panel is both faster and
    smaller."""
    from jacbench.report.figures.gbm import _front

    assert _front([(1, 5, "a"), (2, 1, "b"), (3, 3, "c"), (1, 5, "d")]) == {"a", "b", "d"}
    fig = figures.tradeoff(df, 1000)
    named = set()
    for ax in fig.axes:
        fw = {v: k for k, v in FRAMEWORK_NAMES.items()}.get(ax.get_title())
        for collection in ax.collections:
            (colour,) = {to_hex(c) for c in collection.get_facecolors()}
            assert colour in {c.lower() for c in figures_scaling.FAMILIES.values()}, (fw, colour)
        named |= {(fw, t.get_text()) for t in ax.texts}
    assert ("torch", "pathwise") in named and ("torch", "jacrev") not in named
