"""The review screen: hand-rate a sample, blind to the judge, keyboard-first (Anki's reviewer is the model).

A sample holds targets: rows, or — for the metrics judged per item — passages (UMBRELA's 0-3), nuggets and
citations (n / p / f: not, partial, full support); the card shows the target above its row. Number keys (or the
scale's letters) rate; j/k or Down/Up move; s skips; c adds a comment to the next rating; u or Ctrl+Z undoes the
last rating. Auto-repeated keys are ignored. A rating moves to the next card at once and is saved behind it, each
its own transaction (in a worker), so it survives a crash the moment it is committed; keys that cannot apply yet
wait and are applied in order (gui/models/desk.py holds the desk's state and rules, without Qt).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLabel, QPushButton, QSplitter, QVBoxLayout

from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui.models.desk import (
    Action,
    Desk,
    DeskRead,
    Rating,
    action_for,
    details,
    read_desk,
    sample_holding,
)
from rageval_desktop.gui.prefs import review_keys
from rageval_desktop.gui.state import Page
from rageval_desktop.gui.views.common import TopRow
from rageval_desktop.gui.views.detail_pane import DetailPane
from rageval_desktop.gui.views.review_card import ActionRow, ProgressRow, ReviewGuide, ScoreRow
from rageval_desktop.gui.views.review_checks import ask_check, save_check
from rageval_desktop.gui.views.review_edits import ask_comment, fix_reference, show_prompt
from rageval_desktop.gui.views.review_samples import SampleBar
from rageval_desktop.gui.views.review_undo import rating_command

if TYPE_CHECKING:
    from rageval_desktop.core.ops.sources import PackSource, ProjectSource
    from rageval_desktop.core.review.licence import Standing
    from rageval_desktop.core.review.quality import Check
    from rageval_desktop.core.review.ratings import Rating as HumanRating
    from rageval_desktop.core.review.sampling import Sample
    from rageval_desktop.core.store.queries import RowDetail
    from rageval_desktop.gui.state import AppState

class ReviewView(Page):
    shows = frozenset({Area.JUDGMENTS})
    rated = Signal(int)   # row id, after the rating is committed (tests and benchmarks wait on it)

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 6, 6)
        top = self.top = TopRow("Review")
        self._licences: Standing | None = None   # the judges' licences (and ratings left out) at the last read
        self.bar = SampleBar(state, lambda: self.sample.id if self.sample is not None else None, self)
        self.bar.drawn.connect(self.select_sample)
        b = self.bar     # the bar's boxes, as the view's (tests and the keyboard walk them)
        top.addWidget(b.sample_label)
        top.addWidget(b.sample_box)
        self.sample_box = b.sample_box
        self.run_box, self.metric_box, self.size_box, self.mode_box = b.run_box, b.metric_box, b.size_box, b.mode_box
        self.new_button, self.extend_button = b.new_button, b.extend_button
        self.prompt_button = QPushButton("Judge's &prompt…")
        self.prompt_button.setToolTip("The prompt an LLM judge of this metric receives for this row")
        for w in (*b.widgets, self.prompt_button):
            w.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            top.addWidget(w)
        layout.addLayout(top)
        self.status_row = ProgressRow()      # the bar, the line above the card, the keys
        self.progress, self.progress_label, self.keys_label = (self.status_row.bar, self.status_row.line,
                                                               self.status_row.keys)
        layout.addWidget(self.status_row)
        self.detail = DetailPane()
        self.detail.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.guide = ReviewGuide(state, self.source, self)
        split = QSplitter()
        split.setObjectName("reviewSplit")
        split.addWidget(self.detail)
        split.addWidget(self.guide)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([640, 420])
        layout.addWidget(split, 1)
        self.scores = ScoreRow()            # the scale's buttons: a click rates as its key does
        self.scores.scored.connect(lambda score: self._act(Action("score", score)))
        self.action_row = ActionRow()           # skip, next unrated, comment, fix reference, undo: as their keys do
        self.action_row.triggered.connect(lambda name: self._act(Action(name)))
        self.skip_button = self.action_row.buttons["skip"]
        layout.addWidget(self.scores)
        self.reveal = QLabel()
        self.reveal.setObjectName("reveal")
        self.reveal.setWordWrap(True)
        self.reveal.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.action_row)     # below the scale: the scale's buttons get the row's width
        layout.addWidget(self.reveal)      # what a rating did, the whole width (it names licences it moved)
        self.prompt_button.clicked.connect(lambda: show_prompt(self, self))
        self.sample_box.currentIndexChanged.connect(self.load_sample)
        self.desk: Desk | None = None      # the sample being rated: queue, position, ratings (gui/models/desk.py)
        self.shown_at = time.monotonic()
        self.all_passages = False
        self.action_keys = review_keys()            # remappable in Preferences › Review keys
        self.keys: dict[str, float] = {}                       # key -> score, from the metric's scale
        self.details: dict[int, RowDetail] = {}      # the sample's rows, as read with it (DeskRead.details)
        self._scale: DeskRead | None = None          # the read whose scale the buttons and the guide show

    # the desk's state, read where the card is drawn (and by tests)
    @property
    def sample(self) -> Sample | None:
        return self.desk.sample if self.desk is not None else None

    @property
    def index(self) -> int:
        return self.desk.index if self.desk is not None else 0

    @index.setter
    def index(self, value: int) -> None:
        if self.desk is not None:
            self.desk.index = value

    @property
    def check(self) -> Check | None:
        return self.desk.check if self.desk is not None else None

    @property
    def mine(self) -> dict[tuple[int, int], float | None]:
        return self.desk.mine if self.desk is not None else {}

    def set_busy(self, busy: bool) -> None:
        """An undo, a redo or a check's rating is in flight (True), or has landed: the keys that waited apply."""
        if self.desk is None:
            return
        self.desk.busy = busy
        if not busy:
            self._apply_waiting()

    def _apply_waiting(self) -> None:
        """The keys that waited, in order, while each may run (an undo waits on for ratings still saving)."""
        desk = self.desk
        while desk is not None and desk is self.desk and (action := desk.take()) is not None:
            self.perform(action)

    def _act(self, action: Action) -> None:
        """A card button does what its key does, under the same rules, and gives the keyboard back."""
        self.perform(action)
        self.setFocus()

    @property
    def pack_mode(self) -> bool:
        """Rating a review pack: no judges to reveal, no samples to draw (the source says so)."""
        source = self.source()
        return source is not None and not source.can_sample

    def source(self) -> ProjectSource | PackSource | None:
        """Where samples and ratings live: the project, or the review pack this window opened."""
        from rageval_desktop.core.ops.sources import PairPackSource

        found = self.state.review_source()
        return None if isinstance(found, PairPackSource) else found     # (a pair pack has no score desk)

    def _build_scale(self, read: DeskRead) -> None:
        """Score buttons and the guide for the metric's scale (1–5, 0–3, or No/Yes) and its guidelines, as read."""
        self._scale = read
        self.keys = {point.key: point.score for point in read.scale.points}
        self.action_keys = review_keys()
        self.action_row.set_keys(self.action_keys)
        self.status_row.set_keys(list(self.keys), self.action_keys)
        self.scores.set_scale(read.scale)
        self.guide.show_scale(read.scale, read.guidelines)

    # --- samples -------------------------------------------------------------------------------
    def refresh(self, runs: list[str], sample_id: int | None = None) -> None:
        """The page's read: the samples, and the one chosen (`sample_id`, else the sample box's) with its rows."""
        source = self.source()
        sampling = source is None or source.can_sample      # a pack: rate its rows, nothing else
        for w in (self.run_box, self.metric_box, self.size_box, self.mode_box, self.new_button, self.extend_button,
                  self.prompt_button):
            self.top.bar.set_shown(w, sampling)
        self.guide.edit_button.setVisible(sampling)
        self.action_row.buttons["reference"].setVisible(sampling)     # a pack has no golden set to edit
        if not sampling:
            self.guide.text.setPlaceholderText("No guidelines came with this pack.")
        self.bar.set_runs(runs)
        self._read(sample_id if sample_id is not None else self.sample_box.currentData(), keep=sample_id is None)

    def select_sample(self, sample_id: int) -> None:
        self.refresh(self.state.run_names(), sample_id)

    def load_sample(self, *_: object) -> None:
        """The sample box's choice: read it (on the read lane) and open the desk on it when it lands."""
        self._read(self.sample_box.currentData())

    def _read(self, wanted: int | None, row: int | None = None, metric: str | None = None,
              otherwise: Callable[[], object] | None = None, *, keep: bool = False) -> None:
        """The desk's read (gui/models/desk.py: read_desk) on the read lane; a newer read wins. With `row`: the
        newest sample (of `metric`) holding it, the card on it — `otherwise` when no sample holds it."""
        source, reviewer = self.source(), self.state.reviewer()
        fallback = self.metric_box.currentData() or "correctness"

        def read(ctx: object) -> DeskRead | None:
            if row is None:
                return read_desk(source, wanted, reviewer, fallback)
            holding = sample_holding(source, row, metric) if source is not None else None
            return None if holding is None else read_desk(source, holding, reviewer, fallback, at_row=row)

        def arrived(found: DeskRead | None) -> None:
            if found is None:
                if otherwise is not None:
                    otherwise()
                return
            self._open(found, keep)

        self.state.run_read("review", read, on_done=arrived)

    def _open(self, read: DeskRead, keep: bool = False) -> None:
        """The read landed: the sample box lists the samples, and the desk opens on the sample read — at the row
        asked for, else at its first target not yet answered. A page's refresh (`keep`) of the sample already on the
        desk keeps its desk: the card in front of the reviewer does not move (a refresh landing late, under load,
        reopened it and wiped the line under the card); its rows, scale and guidelines are renewed."""
        box = self.sample_box
        box.blockSignals(True)
        self.bar.set_samples(read.samples)
        box.setCurrentIndex(box.findData(read.sample.id) if read.sample is not None else box.count() - 1)
        box.blockSignals(False)
        sample = read.sample
        if sample is None:
            self.desk = None
            self.detail.show_detail(None)
            self.status_row.show_progress(0, 0, "No sample yet: choose a run and a metric, then New sample.")
            self._build_scale(read)
            return
        if keep and self.desk is not None and self.desk.sample.id == sample.id and read.at_row is None:
            self.details.update(read.details)
            self._build_scale(read)
            self.draw_progress()
            return
        self.details = dict(read.details)
        self.bar.follow(sample)
        self._build_scale(read)
        self.desk = Desk.open(sample, read.mine)
        if read.at_row is not None and read.at_row in sample.row_ids:
            self.desk.index = sample.row_ids.index(read.at_row)
        self.show_row()
        self.setFocus()
        ask_check(self)
        self._licences = None
        self._read_licences()

    def _read_licences(self) -> None:
        """What the reviewer's ratings changed in the judges' licences, said under the card as it happens (issue 75:
        33 ratings took a judge from selective to explore and the desk said nothing): read in a worker after each
        rating, compared with the last read (core.review.licence.moved)."""
        from rageval_desktop.core.review.licence import moved

        source = self.source()
        if source is None or self.pack_mode:
            return

        def arrived(now: Standing) -> None:
            before, self._licences = self._licences, now
            said = moved(before, now, "Your ratings") if before is not None else []
            if said:
                self.reveal.setText(f"{self.reveal.text()} {' '.join(s + '.' for s in said)}")

        self.state.run_read("review-licences", lambda ctx: source.licences(), on_done=arrived)

    def open_row(self, row_id: int, metric: str | None = None, otherwise: Callable[[], object] | None = None) -> None:
        """Show a rated row on the card (a false accept clicked on the Audit page): the newest sample of the metric
        that holds it, read on the read lane. `otherwise` when no sample does (or this is a pack)."""
        source = self.source()
        if source is None or not source.can_sample:
            if otherwise is not None:
                otherwise()
            return
        self._read(None, row_id, metric, otherwise)

    # --- showing -------------------------------------------------------------------------------
    def show_row(self) -> None:
        from rageval_desktop.core.review.card import blinded, revealed, side_by_side
        from rageval_desktop.core.review.targets import card, reads_passages

        desk = self.desk
        if desk is None or not desk.sample.row_ids:
            return
        row_id, item, key = desk.target()
        detail = self.details.get(row_id)
        if detail is None:          # not read with the sample (it changed under the desk): read, then shown
            self.read_rows([row_id])
            return
        rated, mine = desk.shown_rated()
        shown = revealed(mine, rated)
        # blind: the judges' verdicts, latency, cost and tokens stay hidden until this reviewer has rated the target
        metric = desk.sample.metric
        fold = None if reads_passages(metric) or self.all_passages else (
            f"the {metric} rubric reads the answer and the reference, not the passages")
        if fold != self.detail.fold_passages:
            self.detail.fold_passages = fold
            self.detail.detail = None                  # drawn again with the passages folded or not
        self.detail.show_detail(detail if shown else blinded(detail), card(detail, metric, item, key))
        self.draw_progress()
        self.scores.show_score(mine if shown else None)
        beside = side_by_side(detail, metric, mine, item=item, key=key) if shown and not self.pack_mode else ""
        self.reveal.setText(desk.card_words(beside, pack_mode=self.pack_mode))
        self.shown_at = time.monotonic()

    def read_rows(self, rows: list[int], show: bool = True, said: str = "") -> None:
        """Rows read again on the read lane (judgments arrived, a reference fixed, a row the desk has not read): kept
        for the cards; `show`: the card is drawn when they land (else the card in front of the reviewer does not
        move), with `said` under it."""
        desk, source = self.desk, self.source()
        if desk is None or source is None:
            return

        def arrived(found: dict[int, RowDetail]) -> None:
            if self.desk is desk:
                self.details.update(found)
                if show:
                    self.show_row()
                if said:
                    self.reveal.setText(said)

        # a read that draws the card is not dropped by one that only renews rows behind it (judgments arriving
        # while a fixed reference is read again lost its "Reference of … fixed" under load)
        lane = "review-rows shown" if show else "review-rows"
        self.state.run_read(lane, lambda ctx: details(source, rows), on_done=arrived, announce=False)

    def draw_progress(self) -> None:
        """The bar and the line above the card (position, your answer, skips, the next check of the judge)."""
        desk = self.desk
        if desk is None:
            return
        line, tip = desk.progress(self.pack_mode)     # ratings only on the bar: a skipped row is still to do
        self.status_row.show_progress(desk.rated_count(), len(desk.targets), line, tip)

    # --- keys ----------------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.isAutoRepeat() or self.desk is None:
            event.accept()
            return
        action = self._action_of(event)
        if action is None:
            super().keyPressEvent(event)
            return
        self.perform(action)
        event.accept()

    def _action_of(self, event: QKeyEvent) -> Action | None:
        """What a key means on the desk (gui/models/desk.py's `action_for`)."""
        named = {Qt.Key.Key_Down: "Down", Qt.Key.Key_Up: "Up", Qt.Key.Key_Z: "Z"}.get(Qt.Key(event.key()), "")
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        return action_for(event.text(), named, ctrl, self.keys, self.action_keys)

    def perform(self, action: Action) -> None:
        """Do what a key or a card button asks — now, or once the desk is free (it waits, in order, and says so)."""
        desk = self.desk
        if desk is None:
            return
        if desk.must_wait(action):
            self.reveal.setText(desk.wait(action))
            return
        name = action.name
        if name in ("score", "skip"):
            self.save(action.score, skipped=name == "skip")
        elif name in ("next", "previous"):
            self.step(1 if name == "next" else -1)
        elif name == "next_unrated":
            self.go_next_unrated()
        elif name == "reference":
            fix_reference(self, self)
        elif name == "passages":
            self.all_passages = not self.all_passages     # the passages a rubric does not read: shown or folded
            self.show_row()
        elif name == "comment":
            ask_comment(self, self)
        elif name == "undo":
            self.undo()

    def keys_changed(self) -> None:
        """Preferences › Review keys was saved: the keys, the buttons and the help line follow."""
        if self._scale is not None:
            self._build_scale(self._scale)

    def go_next_unrated(self) -> None:
        if self.desk is None or not self.desk.sample.row_ids:
            return
        if not self.desk.go_next_unrated():
            self.reveal.setText(f"Every {self.desk.sample.unit} of this sample is rated.")
            return
        self.show_row()

    def step(self, step: int) -> None:
        if self.desk is not None and self.desk.sample.row_ids:
            self.desk.step(step)
            self.show_row()

    def save(self, score: float | None, skipped: bool = False) -> None:
        """Rate the card shown: the desk moves on at once and the rating is written behind it (gui/models/desk.py);
        it leaves memory only once committed, and a failed write brings its card back."""
        reviewer = self.state.reviewer(ask=True)
        desk, source = self.desk, self.source()
        if not reviewer or desk is None or source is None:
            return
        if desk.check is not None:
            save_check(self, reviewer, score)
            return
        given = desk.rate(score, skipped=skipped, seconds=round(time.monotonic() - self.shown_at, 2))
        self.show_row()
        metric = desk.sample.metric
        (row_id, item), number = given.target, given.index + 1
        self.state.run_write(f"Rating {desk.sample.unit} {number}",
                             lambda ctx: source.rate(row_id, metric, reviewer, given.score, sample_id=given.sample_id,
                                                     comment=given.comment, seconds=given.seconds, skipped=skipped,
                                                     item=item, item_key=given.key),
                             on_done=lambda rating: self._committed(desk, given, rating),
                             on_error=lambda message, details: self._not_saved(desk, given, message, details))

    def _committed(self, desk: Desk, given: Rating, rating: HumanRating) -> None:
        """A rating's write committed: on the undo stack, said under the card (beside the judges it was blind to)."""
        desk.committed(given, rating.score)
        self.state.undo_stack.push(rating_command(self, given.sample_id, given.index, rating, given.comment,
                                                  given.seconds))
        if desk is not self.desk:       # another sample is open now: the rating is kept, there is nothing to draw
            return
        self.draw_progress()
        self.reveal.setText(self._said(desk, given, rating))
        self.rated.emit(given.target[0])
        if not desk.complete:
            ask_check(self)
        self._read_licences()
        self._apply_waiting()

    def _said(self, desk: Desk, given: Rating, rating: HumanRating) -> str:
        from rageval_desktop.core.review.card import side_by_side

        beside = ""
        if not given.skipped and not self.pack_mode:
            row_id, item = given.target
            detail = self.details.get(row_id)
            beside = "" if detail is None else side_by_side(detail, desk.sample.metric, rating.score, item=item,
                                                            key=given.key)
        return desk.saved_words(given, rating.score, beside, held=rating.held, pack_mode=self.pack_mode)

    def _not_saved(self, desk: Desk, given: Rating, message: str, details: str) -> None:
        """A rating's write failed: nothing was kept, its card comes back to be rated again, and keys that waited
        behind it are dropped, said (they were meant for a desk that did not happen)."""
        dropped = desk.failed(given)
        if desk is self.desk:
            self.show_row()
            self.reveal.setText(f"{desk.sample.unit.capitalize()} {given.index + 1} was not saved: rate it again."
                                + (f" Not applied: {dropped}." if dropped else ""))
        self.state.show_error(message, details)

    # --- checks: hidden gold items and retests (core.review.quality) -------------------------------------------------
    def check_undone(self, sample_id: int, check: Check) -> None:
        if self.desk is None or self.desk.sample.id != sample_id:
            return
        self.desk.check = check
        self.show_row()
        self.reveal.setText("Undid the last rating.")

    def changes_arrived(self, changes: object) -> None:
        """New judgments arrived (a job is running): the sample's rows are read again on the read lane, for the cards
        shown next (the card in front of a reviewer does not move)."""
        if self.desk is not None:
            check = self.desk.check
            self.read_rows([*self.desk.sample.row_ids, *([check.row_id] if check is not None else [])], show=False)

    def undo(self) -> None:
        """u (and Ctrl+Z): the window's undo stack takes back the last edit, a rating here."""
        if self.state.undo_stack.canUndo():
            self.state.undo_stack.undo()
        else:
            self.reveal.setText("Nothing to undo.")

    def rating_undone(self, sample_id: int, index: int, rating: HumanRating) -> None:
        if self.desk is None or self.desk.sample.id != sample_id:
            return
        self.desk.undone(index, (rating.run_row_id, rating.item))
        self.show_row()
        self.reveal.setText(f"Undid the rating of {self.desk.sample.unit} {index + 1}.")
        self.rated.emit(rating.run_row_id)

    def rating_redone(self, sample_id: int, index: int, rating: HumanRating) -> None:
        if self.desk is None or self.desk.sample.id != sample_id:
            return
        self.desk.redone((rating.run_row_id, rating.item), rating.score)
        self.show_row()
        self.reveal.setText(f"Redid the rating of {self.desk.sample.unit} {index + 1}.")
        self.rated.emit(rating.run_row_id)


