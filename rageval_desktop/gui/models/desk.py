"""The review desk's state and rules, without Qt: the queue (next unrated, skipped ones last), the position, what the
reviewer has rated, ratings given and not yet committed, keys that wait, and the progress line's words.

ReviewView draws a Desk and forwards keys to it; tests drive a Desk with no window (tests/test_desk_model.py).

A rating is **optimistic**: the key moves the desk to the next card at once, and the rating is held here (`pending`)
until its write commits (`committed`) — a second key pressed while the first saves rates the card then on the screen,
never a card not yet seen, and is never lost (issue 77: keys pressed during a slow save were dropped). A write that
fails brings its card back (`failed`): nothing leaves memory before it is committed. Keys that cannot be applied yet
— any key while an undo, a redo or a check's rating is in flight, and an undo while ratings are saving (the undo
stack holds committed ratings only) — wait in `waiting`, in the order pressed, and are applied when the desk is free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rageval_desktop.core.review.guidelines import HumanRubric, human_rubric
from rageval_desktop.core.review.quality import Check
from rageval_desktop.core.review.sampling import Sample
from rageval_desktop.core.store.queries import RowDetail

Target = tuple[int, int]      # (row id, item)


class DeskSource(Protocol):
    """What the desk reads from where its samples live: the project or a review pack (core/ops/sources.py)."""

    def samples(self) -> list[dict[str, Any]]: ...
    def sample(self, sample_id: int) -> Sample: ...
    def my_ratings(self, sample_id: int, reviewer: str) -> dict[Target, float | None]: ...
    def detail(self, row_id: int) -> RowDetail: ...
    def scale(self, metric: str) -> HumanRubric: ...
    def guidelines(self, metric: str) -> str: ...


@dataclass(frozen=True)
class DeskRead:
    """Everything the desk draws for one sample, read at once on the read lane (issue 78: the desk read on the GUI
    thread — the samples, the sample, the reviewer's ratings, the scale and guidelines, and each card's row as it was
    shown). `samples`: the sample box's list; `sample` None when there is none yet; `details`: every row of the
    sample, so moving from card to card reads nothing; `at_row`: the row to open the card on (a link from another
    page), else the first target not yet answered."""

    samples: list[dict[str, Any]]
    sample: Sample | None
    mine: dict[Target, float | None]
    metric: str
    scale: HumanRubric
    guidelines: str
    details: dict[int, RowDetail]
    at_row: int | None = None


def read_desk(source: DeskSource | None, wanted: int | None, reviewer: str, metric: str,
              at_row: int | None = None) -> DeskRead:
    """The desk's read of sample `wanted` (one no longer listed, or None: the newest, as the sample box chooses).
    `metric`: the scale shown when there is no sample. In a worker: the source's reads only."""
    if source is None:
        return DeskRead([], None, {}, metric, human_rubric(metric), "", {})
    samples = source.samples()
    ids = [s["id"] for s in samples]
    sid = wanted if wanted in ids else (ids[-1] if ids else None)
    if sid is None:
        return DeskRead(samples, None, {}, metric, source.scale(metric), source.guidelines(metric), {})
    sample = source.sample(sid)
    return DeskRead(samples, sample, source.my_ratings(sid, reviewer), sample.metric, source.scale(sample.metric),
                    source.guidelines(sample.metric), details(source, sample.row_ids), at_row)


def details(source: DeskSource, row_ids: list[int]) -> dict[int, RowDetail]:
    """Each row as the card shows it, read once (a row rated per passage or nugget is one read)."""
    return {row: source.detail(row) for row in dict.fromkeys(row_ids)}


def sample_holding(source: DeskSource, row_id: int, metric: str | None) -> int | None:
    """The newest sample (of `metric`, if named) that holds the row: where a link to a rated row opens the desk."""
    for s in reversed(source.samples()):
        if (not metric or s["metric"] == metric) and row_id in source.sample(s["id"]).row_ids:
            return int(s["id"])
    return None


@dataclass(frozen=True)
class Action:
    """One key's meaning: `name` is "score", "skip", "undo", "next", "previous", "next_unrated", "comment",
    "reference" or "passages"; `score` for "score"; `text` what was pressed (said back when it waits)."""

    name: str
    score: float | None = None
    text: str = ""


def action_for(text: str, named: str, ctrl: bool, scores: Mapping[str, float],
               actions: Mapping[str, str]) -> Action | None:
    """What a key means on the desk: a score of the metric's scale (its key), Down / Up to move, Ctrl+Z to undo, or
    one of the review keys (`actions`: action -> key, Preferences › Review keys). `named`: "Down", "Up" or "Z" for
    those keys, else ""."""
    if text.lower() in scores and not ctrl:
        return Action("score", scores[text.lower()], text)
    if named in ("Down", "Up") and not ctrl:
        return Action("next" if named == "Down" else "previous", text=named)
    if named == "Z" and ctrl:
        return Action("undo", text="Ctrl+Z")
    mapped = {k: a for a, k in actions.items()}
    name = mapped.get(text.lower()) if not ctrl and text else None
    return Action(name, text=text) if name else None


@dataclass(frozen=True)
class Rating:
    """A rating given at the desk and not yet committed: what its write needs and where its card was."""

    sample_id: int
    index: int
    target: Target
    key: str | None
    score: float | None
    skipped: bool
    comment: str | None
    seconds: float


@dataclass
class Desk:
    """One reviewer at one sample. `mine` maps each target this reviewer has answered to the standing score (None:
    skipped); `pending` the ratings given whose writes have not committed (their scores are in `mine` already)."""

    sample: Sample
    mine: dict[Target, float | None] = field(default_factory=dict)
    index: int = 0
    comment: str | None = None
    pending: dict[Target, Rating] = field(default_factory=dict)
    check: Check | None = None                # a hidden gold item or retest shown in place of the next target
    busy: bool = False                        # an undo, a redo or a check's rating is in flight
    waiting: list[Action] = field(default_factory=list)

    @classmethod
    def open(cls, sample: Sample, mine: Mapping[Target, float | None]) -> Desk:
        """The desk on `sample` at its first target not yet answered (the first when every one is)."""
        desk = cls(sample, dict(mine))
        first = desk.next_unrated(len(sample.targets) - 1)
        desk.index = first if first is not None else 0
        return desk

    # --- the queue ---------------------------------------------------------------------------------------------------
    @property
    def targets(self) -> list[Target]:
        return self.sample.targets

    def target(self) -> tuple[int, int, str | None]:
        """(row, item, key) at the current position: a check due in the queue, or the sample's target."""
        if self.check is not None:
            return self.check.row_id, self.check.item, self.check.item_key
        s = self.sample
        return s.row_ids[self.index], s.items[self.index] if s.items else 0, s.keys[self.index] if s.keys else None

    def rated_count(self) -> int:
        """Targets this reviewer has given a score (a skipped one is not rated; a pending one is)."""
        return sum(1 for t in self.targets if self.mine.get(t) is not None)

    def skipped_count(self) -> int:
        return sum(1 for t in self.targets if t in self.mine and self.mine[t] is None)

    @property
    def complete(self) -> bool:
        return self.rated_count() == len(self.targets)

    def next_unrated(self, after: int) -> int | None:
        """The queue after `after`: the next target not seen yet (wrapping round), then the skipped ones, which
        come back at the end (as in Anki and Argilla). None when every target has a score."""
        targets = self.targets
        order = [*range(after + 1, len(targets)), *range(0, after + 1)]
        fresh = [i for i in order if targets[i] not in self.mine]
        if fresh:
            return int(fresh[0])
        skipped = [i for i in order if targets[i] in self.mine and self.mine[targets[i]] is None]
        later = [i for i in skipped if i != after]
        return later[0] if later else skipped[0] if skipped else None

    def step(self, step: int) -> None:
        """Move by `step`; moving off a check leaves it due (it comes back after the next rating)."""
        if self.check is None:
            self.index = max(0, min(len(self.targets) - 1, self.index + step))
        self.check = None

    def shown_rated(self) -> tuple[bool, float | None]:
        """Whether the card in front of the reviewer is answered (a check is always shown blind), and the answer."""
        if self.check is not None:
            return False, None
        row_id, item, _ = self.target()
        return (row_id, item) in self.mine, self.mine.get((row_id, item))

    def go_next_unrated(self) -> bool:
        """Move to the next target to rate; False when every one is rated."""
        found = self.next_unrated(self.index)
        if found is None:
            return False
        self.index = found
        return True

    # --- ratings -----------------------------------------------------------------------------------------------------
    def rate(self, score: float | None, *, skipped: bool = False, seconds: float = 0.0) -> Rating:
        """The reviewer's answer on the current card: held as pending, shown as given, and the desk moves on to
        the next target to rate (it stays when none is left). The caller writes it and reports back."""
        row_id, item, key = self.target()
        given = Rating(self.sample.id, self.index, (row_id, item), key, None if skipped else score, skipped,
                       self.comment, seconds)
        self.pending[given.target] = given
        self.mine[given.target] = given.score
        self.comment = None
        following = self.next_unrated(given.index)
        self.index = following if following is not None else given.index
        return given

    def committed(self, given: Rating, score: float | None) -> None:
        """Its write committed: the rating is the project's (`score` as stored)."""
        if self.pending.get(given.target) is given:
            del self.pending[given.target]
            self.mine[given.target] = score

    def failed(self, given: Rating) -> str:
        """Its write failed: the rating was not kept — the card comes back, unrated, with its comment; the keys that
        waited behind it are dropped (they were meant for what followed it). Returns those keys, as pressed."""
        if self.pending.get(given.target) is given:
            del self.pending[given.target]
            self.mine.pop(given.target, None)
            self.index = given.index
            self.comment = given.comment
            self.check = None
        dropped = ", ".join(f"'{a.text}'" for a in self.waiting if a.text)
        self.waiting.clear()
        return dropped

    def undone(self, index: int, target: Target) -> None:
        """A committed rating was taken back: its card is shown again, unrated."""
        self.mine.pop(target, None)
        self.index = index

    def redone(self, target: Target, score: float | None) -> None:
        self.mine[target] = score

    # --- keys that wait ----------------------------------------------------------------------------------------------
    @property
    def saving(self) -> bool:
        """A rating, an undo, a redo or a check's rating is still being written."""
        return self.busy or bool(self.pending)

    def must_wait(self, action: Action) -> bool:
        """Whether `action` waits for the desk to be free: every key while an undo, redo or check is in flight; an
        undo while ratings are saving."""
        return self.busy or (action.name == "undo" and bool(self.pending))

    def wait(self, action: Action) -> str:
        """Queue `action` (applied in order when the desk is free) and say so."""
        self.waiting.append(action)
        pressed = ", ".join(f"'{a.text}'" for a in self.waiting if a.text) or "your key"
        return f"Saving… {pressed} will be applied once it is saved."

    def take(self) -> Action | None:
        """The first waiting action, when it may run now (None: nothing waits, or the first must wait still)."""
        if self.waiting and not self.must_wait(self.waiting[0]):
            return self.waiting.pop(0)
        return None

    # --- words -------------------------------------------------------------------------------------------------------
    def you(self, target: Target) -> str:
        if target not in self.mine:
            return "not rated"
        score = self.mine[target]
        said = "skipped" if score is None else f"{score:g}"
        return f"{said} (saving…)" if target in self.pending else said

    def next_look(self, pack_mode: bool = False) -> tuple[str, str]:
        """The plan's next look in a reviewer's words, and its tooltip: the audit decides at a quarter, half, three
        quarters and all of the sample, each once the targets before it in this order are answered."""
        s = self.sample
        if not s.looks or pack_mode:
            return "", ""
        tip = (f"The audit decides at the plan's looks — the first {', '.join(map(str, s.looks))} targets in the order "
               "shown, each once all before it are rated or skipped — and on the anytime interval at other times.")
        prefix = 0
        for target in self.targets:
            if target not in self.mine:
                break
            prefix += 1
        ahead = [m for m in s.looks if m > prefix]
        if not ahead:
            return " · every planned check of the judge reached", tip
        return f" · the judge is checked again when the first {ahead[0]} are rated ({prefix} done)", tip

    def progress(self, pack_mode: bool = False) -> tuple[str, str]:
        """The line above the card and its tooltip: position, metric, this reviewer's answer, skips, the next look,
        the comment waiting for the next rating."""
        row_id, item, _ = self.target()
        skipped = self.skipped_count()
        look, tip = self.next_look(pack_mode)
        you = "not rated" if self.check is not None else self.you((row_id, item))
        line = f"{self.sample.unit} {self.index + 1} of {len(self.targets)} · {self.sample.metric} · you: {you}"
        line += (f" · {skipped} skipped" if skipped else "") + look
        line += f" · comment: {self.comment}" if self.comment else ""
        return line, tip

    def card_words(self, beside: str, *, pack_mode: bool = False) -> str:
        """The line under the card: what this reviewer gave beside the judges (`beside`, once rated), or that the
        judges stay hidden until then (a pack carries no verdicts: nothing is hidden there)."""
        rated, mine = self.shown_rated()
        what = self.sample.unit
        if rated and mine is not None:
            return f"You rated this {what} {mine:g}; saved in the pack." if pack_mode else beside
        if rated:
            return f"You skipped this {what}; " + ("rate it when you are ready." if pack_mode else
                                                   "the judges stay hidden until you rate it.")
        if pack_mode:
            return f"Rate this {what} on the scale; your rating is saved in the pack."
        return f"Judge verdicts are hidden until you rate this {what}."

    def saved_words(self, given: Rating, score: float | None, beside: str, *, held: bool = False,
                    pack_mode: bool = False) -> str:
        """What a committed rating did, said under the card: the row and the judges beside it (`beside`), the sample
        complete or back to the skipped ones, and ratings a lead set aside."""
        unit_name, number = self.sample.unit.capitalize(), given.index + 1
        if given.skipped:
            what = f"{unit_name} {number} skipped (its judges stay hidden)."
        elif pack_mode:
            what = f"{unit_name} {number} saved in the pack: you {score:g}."
        else:
            what = f"{unit_name} {number} saved: {beside}."
        shown = self.targets[self.index]
        if self.complete:
            what = "Sample complete. " + what
        elif self.check is None and shown in self.mine and self.mine[shown] is None:
            what += f" Back to the skipped: {len(self.targets) - self.rated_count()} left to rate."
        if held:
            what += (f" Your ratings of {self.sample.metric} are set aside by a lead: they are saved and do not count "
                     "until you are brought back (Team page).")
        return what

