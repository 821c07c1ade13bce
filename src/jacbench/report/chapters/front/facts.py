"""The answer's snippets (book/snippets/), the registry strategies each one is, and their cost
at the questions' sizes against the book's picks there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from jacbench.constants import AD_FRAMEWORKS
from jacbench.report import picks as book_picks
from jacbench.report.picks import HESSIAN, QUESTION, TALL, WIDE, Entry, Pick, Picks
from jacbench.second import registry as second
from jacbench.strategies import registry

# Where the snippets lie, relative to the checkout (and to the book's staging tree).
FOLDER = Path("book/snippets")
# The key of a tall snippet that shows the one-call winner alone, where the snippet's own form
# wins later calls only (facts' answers are keyed by it in place of the shape).
ONCE = "once"


@dataclass(frozen=True)
class Snippet:
    """One snippet: its file, and the registry strategies it runs, the first as it stands
    (eager, or compiled where it only shows that) and, where it shows one, its compiled form;
    a wide snippet's Hessian-vector product by its method's name. A once snippet shows the
    one-call winner where the tall snippet's form wins later calls only."""

    file: str
    shape: str
    framework: str
    first: str
    compiled: str | None = None
    hessian: str | None = None
    # What the snippet calls each form: its first, its compiled one, its Hessian products.
    names: tuple[str, ...] = ("jacobian", "fast", "hvp")
    once: bool = False

    @property
    def path(self) -> Path:
        return FOLDER / self.file

    @property
    def key(self) -> str:
        """What the front page's facts key its answer by (with the framework)."""
        return ONCE if self.once else self.shape


def _snippets() -> tuple[Snippet, ...]:
    """The snippets, read from the registry's snippet roles: per framework, the tall Jacobian
    (as it first runs and, where shown, compiled), where another wins one call that one alone,
    and the wide one with its Hessian-vector products."""
    found = []
    for fw in AD_FRAMEWORKS:
        tall, compiled = registry.snippet(fw, "tall"), registry.snippet(fw, "tall-compiled")
        found.append(Snippet(f"{fw}_tall.py", TALL, fw, tall.name, compiled and compiled.name))
    for fw in AD_FRAMEWORKS:
        if once := registry.snippet(fw, "tall-once"):
            shown = Snippet(f"{fw}_once.py", TALL, fw, once.name, names=(once.name,), once=True)
            found.append(shown)
    for fw in AD_FRAMEWORKS:
        wide, hvp = registry.snippet(fw, "wide"), second.answer(fw)
        found.append(Snippet(f"{fw}_wide.py", WIDE, fw, wide.name, hessian=hvp.name))
    return tuple(found)


SNIPPETS = _snippets()


@dataclass(frozen=True)
class Answer:
    """One snippet at its question's size: its strategies' rows, the picks there, and whether
    the snippet is what the picks name."""

    snippet: Snippet
    size: int
    pick: Pick
    first: Entry | None
    compiled: Entry | None
    hessian: Entry | None
    hessian_pick: Pick | None

    @property
    def repeated_pick(self) -> bool:
        """Whether the snippet's form for repeated calls is among the repeated-call picks."""
        name = self.snippet.compiled or self.snippet.first
        return name in self.pick.repeated

    @property
    def one_call_pick(self) -> bool:
        """Whether the snippet's first form is among the one-call picks."""
        return self.snippet.first in self.pick.one_call

    @property
    def compiled_overtakes(self) -> int | None:
        """From which call the compiled form's total time is below the eager form's."""
        if self.first is None or self.compiled is None:
            return None
        return book_picks.overtakes(self.first, self.compiled)

    @property
    def _against_one_call(self) -> tuple[str, str] | None:
        """The one-call winner and the snippet's form for repeated calls (None where either
        did not run)."""
        name = self.snippet.compiled or self.snippet.first
        if not self.pick.one_call or name not in self.pick.entries:
            return None
        return self.pick.one_call[0], name

    @property
    def snippet_overtakes(self) -> int | None:
        """From which call the snippet's form for repeated calls has taken less in all than the
        one-call winner (None where either did not run, or it never does)."""
        pair = self._against_one_call
        return pair and book_picks.overtakes(*(self.pick.entry(name) for name in pair))

    @property
    def snippet_overtakes_range(self) -> tuple[int | None, int | None] | None:
        """snippet_overtakes' earliest and latest call within the margins."""
        if self.snippet_overtakes is None:
            return None
        return self.pick.overtakes_between(*self._against_one_call)

    @property
    def hessian_is_pick(self) -> bool:
        return bool(self.hessian_pick and self.snippet.hessian in self.hessian_pick.repeated)

    @property
    def picked(self) -> bool:
        """Whether the snippet runs what the book picks: a once snippet the one-call winner,
        any other its form for repeated calls and its Hessian products."""
        if self.snippet.once:
            return self.one_call_pick
        return self.repeated_pick and (self.snippet.hessian is None or self.hessian_is_pick)


@dataclass(frozen=True)
class Facts:
    """The front page's facts: every snippet's answer, by shape and framework."""

    picks: Picks
    answers: Mapping[tuple[str, str], Answer]

    def answer(self, shape: str, framework: str) -> Answer | None:
        """The snippet's answer at its question's size; None where nothing ran there."""
        return self.answers.get((shape, framework))

    def measured(self, shape: str, framework: str, name: str) -> bool:
        """Whether a strategy ran correctly at its shape's question size."""
        answer = self.answers.get((shape, framework))
        return bool(answer and name in answer.pick.entries)

    @property
    def all_picked(self) -> bool:
        """Whether every snippet runs a strategy the book picks at its question's size."""
        return all(a.picked for a in self.answers.values())


def facts(picks: Picks) -> Facts:
    """The front page's facts from the book's picks."""
    answers = {}
    for s in SNIPPETS:
        pick = picks.get(s.shape, s.framework, QUESTION)
        if pick is None:
            continue
        hessian = picks.get(HESSIAN, s.framework, QUESTION) if s.hessian else None
        answers[(s.key, s.framework)] = Answer(
            snippet=s,
            size=pick.size,
            pick=pick,
            first=pick.entries.get(s.first),
            compiled=pick.entries.get(s.compiled) if s.compiled else None,
            hessian=hessian.entries.get(s.hessian) if hessian else None,
            hessian_pick=hessian,
        )
    return Facts(picks, answers)
