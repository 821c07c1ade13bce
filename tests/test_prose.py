"""The reader's check (publish.prose): what counts as prose, a sentence, a word and a number."""

from jacbench.publish import prose

PAGE = """<html><body><nav><p>Not the article. Ever.</p></nav><article class="bd-article">
<h1>Title</h1>
<div class="admonition in-short"><p class="admonition-title">In short</p>
<p>Use <code class="docutils literal"><span class="pre">torch.func.jacfwd</span></code>. It took
<span class="pasted-text">1.3 ms</span> at <span class="math notranslate">\\(N = 10^4\\)</span>
paths (one call).</p></div>
<table><tr><td><p>1.0 s in a table. 2.0 s too.</p></td></tr></table>
<ul><li><p>First item, 10,000 paths.</p></li><li>Second item without a paragraph</li></ul>
<p>A claim <span class="bibtex-citation">[<a href="#">Griewank, 2008</a>]</span> cited. Is it
float32? Yes! e.g. no.</p>
<pre>x = 1. Not prose.</pre>
<div class="cell_output"><p>Printed 1 2 3.</p></div>
<figure><figcaption><p>A caption, 42.</p></figcaption></figure>
</article></body></html>"""


def test_the_prose_is_the_articles_paragraphs_and_items():
    assert prose.sentences(PAGE) == [
        "Use CODE .",
        "It took 1.3 ms at MATH paths (one call).",
        "First item, 10,000 paths.",
        "Second item without a paragraph",
        "A claim cited.",
        "Is it float32?",
        "Yes! e.g. no.",
    ]


def test_words_numbers_and_shapes():
    s = "It took 1.3 ms at 10,000 paths, 2.5× the simulation, in float32 (x2)."
    assert len(prose.words(s)) == 13
    assert prose.numbers(s) == 3  # 1.3, 10,000, 2.5×; float32 and x2 are names
    assert prose.shape(s) == "It took # ms at # paths, # the simulation, in float32 (x2)."


def test_a_page_over_the_targets_names_each_problem():
    long = " ".join(["word"] * 45) + "."
    said = [long, "It took 1 2 3 4 5.", "(a) (b) (c)."]
    r = prose.Reading.of("notebooks/04-gbm", said)
    assert r.sentences == 3 and r.share_long == 1 / 3
    problems = r.problems(main=True)
    assert any("words a sentence" in p for p in problems)
    assert any("over 40 words" in p for p in problems)
    assert any("numbers a sentence" in p for p in problems)
    assert any("parentheses a sentence" in p for p in problems)
    assert not any("words (a main chapter" in p for p in problems)
    big = prose.Reading.of("x", ["Short one here."] * 1000)
    assert big.problems(main=True) == ["x: 3,000 words (a main chapter has at most 2,500)"]
    assert big.problems(main=False) == []


def test_a_template_repeated_three_times_is_found():
    said = {"a": ["PyTorch took 1.2 ms at 1,000 paths.", "JAX took 3 ms at 9 paths."],
            "b": ["PyTorch took 7 ms at 2 paths.", "PyTorch took 8 ms at 3 paths."]}  # fmt: skip
    found = prose.repeated_shapes(said)
    assert found == ["3 sentences read 'PyTorch took # ms at # paths.'"]
