"""The pairwise desk's state and rules, without Qt: the pairs in the sample's order, the one on the screen, what the
reviewer said of each, and the progress line — driven by PairwiseView, tested with no window
(tests/test_pair_desk_model.py).

The keyboard flow is the score desk's: a key rates the pair on the screen and moves to the next unrated one at once;
the rating is held (`pending`) until its write commits, and a write that fails brings its pair back unrated. Keys:
1 the left answer is better, 2 the right one, 3 or T neither (a tie), S skip, J / K or Down / Up to move, U,
Backspace or Ctrl+Z to undo (the window's undo stack: a committed rating is an entry there, undo withdraws it and
redo rates again; an undo pressed while a rating saves is refused with a word: the stack holds committed ratings).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rageval_desktop.core.review.pairwise import PairItem

KEYS = {"1": "left", "2": "right", "3": "tie", "t": "tie", "s": "skip", "u": "undo", "j": "next", "k": "previous"}


def action_for(text: str, named: str, ctrl: bool) -> str | None:
    """What a key means: 'left', 'right', 'tie', 'skip', 'next', 'previous' or 'undo' (None: not the desk's).
    `named`: "Down", "Up", "Backspace" or "Z" for those keys, else ""."""
    if ctrl:
        return "undo" if named == "Z" else None
    if named in ("Down", "Up"):
        return "next" if named == "Down" else "previous"
    if named == "Backspace":
        return "undo"
    return KEYS.get(text.lower())


@dataclass
class PairDesk:
    items: list[PairItem]
    index: int = 0
    pending: dict[int, str] = field(default_factory=dict)      # position -> said, not yet committed

    def __post_init__(self) -> None:
        self.index = self._next_unrated(0)

    def current(self) -> PairItem | None:
        return self.items[self.index] if 0 <= self.index < len(self.items) else None

    def said(self, item: PairItem) -> str | None:
        return self.pending.get(item.position, item.rated)

    def _next_unrated(self, start: int) -> int:
        """The first pair from `start` on (then from the top) not yet rated — a skipped one only when every other is
        rated, as the score desk brings skipped rows back last; len(items) when every one is rated."""
        order = [*range(start, len(self.items)), *range(0, start)]
        fresh = next((i for i in order if self.said(self.items[i]) is None), None)
        if fresh is not None:
            return int(fresh)
        return next((i for i in order if self.said(self.items[i]) == "skip"), len(self.items))

    def rate(self, side: str) -> tuple[PairItem, str | None] | None:
        """The pair on the screen rated by a key ('left', 'right', 'tie', 'skip'): what to write (the pair, its
        preference — None for a skip), and the desk moved on. None when no pair is on the screen."""
        item = self.current()
        if item is None:
            return None
        preference = None if side == "skip" else item.preference(side)
        self.pending[item.position] = "skip" if preference is None else preference
        self.index = self._next_unrated(self.index + 1 if self.index + 1 < len(self.items) else 0)
        return item, preference

    def committed(self, position: int, rating_id: int) -> str | None:
        """A write that committed: what was said of the pair (None when the desk had forgotten it)."""
        said = self.pending.pop(position, None)
        self._set(position, said, rating_id)
        return said

    def failed(self, position: int) -> None:
        """A write that did not commit: its pair comes back, unrated, on the screen."""
        self.pending.pop(position, None)
        self._go(position)

    def undone(self, position: int) -> None:
        """A rating withdrawn (undo): its pair unrated and on the screen."""
        self._set(position, None, None)
        self._go(position)

    def redone(self, position: int, said: str, rating_id: int) -> None:
        """A rating given again (redo): the desk moves on from its pair."""
        self._set(position, said, rating_id)
        self._go(position)
        self.index = self._next_unrated(self.index)

    def _go(self, position: int) -> None:
        self.index = next((i for i, it in enumerate(self.items) if it.position == position), self.index)

    def step(self, by: int) -> None:
        if self.items:
            self.index = max(0, min(len(self.items) - 1, self.index + by))

    def _set(self, position: int, said: str | None, rating_id: int | None) -> None:
        self.items = [replace(it, rated=said, rating_id=rating_id) if it.position == position else it
                      for it in self.items]

    def progress(self) -> str:
        rated = sum(self.said(it) not in (None, "skip") for it in self.items)
        skipped = sum(self.said(it) == "skip" for it in self.items)
        item = self.current()
        where = f"pair {self.index + 1} of {len(self.items)}" if item is not None else "every pair is rated"
        return (f"{where} · {rated} rated" + (f", {skipped} skipped" if skipped else "")
                + (f" · saving {len(self.pending)}…" if self.pending else ""))

    def said_words(self, item: PairItem) -> str:
        """What the reviewer said of this pair, in the sides they see."""
        said = self.said(item)
        if said is None:
            return "Not rated yet: 1 the left answer is better, 2 the right one, 3 neither (a tie), S to skip."
        if said == "skip":
            return "You skipped this pair."
        if said == "tie":
            return "You said neither answer is better."
        side = "left" if (said == "a") == item.a_left else "right"
        return f"You said the {side} answer is better."
