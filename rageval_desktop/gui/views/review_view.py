"""The review screen: hand-rate a sample, blind to the judge, keyboard-first (Anki's reviewer is the model).

Number keys rate on the metric's scale; j/k or Down/Up move; s skips; c adds a comment to the next rating;
u or Ctrl+Z undoes the last rating. Auto-repeated keys are ignored, and so is every key while the last rating is
being saved. Each rating is its own transaction (in a worker), so it survives a crash the moment it is made.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent, QUndoCommand
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.core.judges.registry import METRICS
from rageval_desktop.gui import workers
from rageval_desktop.gui.views.common import TopRow
from rageval_desktop.gui.views.detail_pane import DetailPane

if TYPE_CHECKING:
    from rageval_desktop.gui.main_window import MainWindow

KEYS_HELP = "number keys rate · j/k or ↓/↑ move · s skip · c comment · u or Ctrl+Z undo"


class ReviewView(QWidget):
    rated = Signal(int)   # row id, after the rating is committed (tests and benchmarks wait on it)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 6, 6)
        top = TopRow("Review")
        self.sample_box = QComboBox()
        self.sample_box.setMinimumWidth(220)
        label = QLabel("Sam&ple:")
        label.setBuddy(self.sample_box)
        top.addWidget(label)
        top.addWidget(self.sample_box)
        self.run_box = QComboBox()
        self.metric_box = QComboBox()
        for m in METRICS:
            if METRICS[m].level == "row":
                self.metric_box.addItem(m, m)
        self.size_box = QSpinBox()
        self.size_box.setRange(5, 500)
        self.size_box.setValue(40)
        self.new_button = QPushButton("&New sample")
        self.extend_button = QPushButton("E&xtend +10")
        for w in (self.run_box, self.metric_box, self.size_box, self.new_button, self.extend_button):
            top.addWidget(w)
        layout.addLayout(top)
        status = QHBoxLayout()
        self.progress_label = QLabel()
        self.progress_label.setObjectName("reviewProgress")
        self.keys_label = QLabel(KEYS_HELP)
        self.keys_label.setObjectName("hint")
        status.addWidget(self.progress_label)
        status.addStretch(1)
        status.addWidget(self.keys_label)
        layout.addLayout(status)
        self.reveal = QLabel()
        self.reveal.setObjectName("reveal")
        self.reveal.setWordWrap(True)
        self.reveal.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.reveal)
        self.detail = DetailPane()
        self.detail.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.rubric = QPlainTextEdit()
        self.rubric.setReadOnly(True)
        self.rubric.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.rubric.setFont(mono)
        split = QSplitter()
        split.addWidget(self.detail)
        split.addWidget(self.rubric)
        split.setSizes([640, 500])
        layout.addWidget(split, 1)
        self.new_button.clicked.connect(self.new_sample)
        self.extend_button.clicked.connect(self.extend_sample)
        self.sample_box.currentIndexChanged.connect(self.load_sample)
        self.sample: Any = None
        self.index = 0
        self.saving = False
        self.shown_at = time.monotonic()
        self.comment: str | None = None
        self.mine: dict[int, float | None] = {}      # row id -> my standing score (None = skipped)
        self._details: dict[int, Any] = {}
        self._rubrics: dict[int, str] = {}

    # --- samples -------------------------------------------------------------------------------
    def refresh(self, runs: list[str]) -> None:
        from rageval_desktop.core.review.sampling import list_samples

        keep = self.sample_box.currentData()
        self.run_box.clear()
        for r in runs:
            self.run_box.addItem(r, r)
        self.run_box.setCurrentIndex(max(self.run_box.count() - 1, 0))
        self.sample_box.blockSignals(True)
        self.sample_box.clear()
        for s in list_samples(self.window_.project):
            self.sample_box.addItem(f"#{s['id']} · {s['run']} · {s['metric']} · {s['rows']} rows", s["id"])
        index = self.sample_box.findData(keep)
        self.sample_box.setCurrentIndex(index if index >= 0 else self.sample_box.count() - 1)
        self.sample_box.blockSignals(False)
        self.load_sample()

    def new_sample(self) -> None:
        from rageval_desktop.core.review.sampling import create_sample

        run, metric = self.run_box.currentData(), self.metric_box.currentData()
        project, size, seed = self.window_.project, self.size_box.value(), int(time.time()) % 100_000
        if run and metric and project is not None:  # values read here, on the GUI thread; the worker gets copies
            self.window_.run_task("Drawing a review sample", lambda ctx: create_sample(project, run, metric, size,
                                                                                       seed=seed),
                                  on_done=lambda s: self._select_sample(s.id))

    def extend_sample(self) -> None:
        from rageval_desktop.core.review.sampling import extend_sample

        project = self.window_.project
        if self.sample is not None and project is not None:
            sid = self.sample.id
            self.window_.run_task("Extending the sample", lambda ctx: extend_sample(project, sid, 10),
                                  on_done=lambda s: self._select_sample(s.id))

    def _select_sample(self, sample_id: int) -> None:
        self.sample_box.blockSignals(True)
        self.refresh(self.window_.run_names())
        self.sample_box.setCurrentIndex(self.sample_box.findData(sample_id))
        self.sample_box.blockSignals(False)
        self.load_sample()

    def load_sample(self, *_: object) -> None:
        from rageval_desktop.core.review.ratings import my_ratings
        from rageval_desktop.core.review.sampling import get_sample

        sid = self.sample_box.currentData()
        project = self.window_.project
        if sid is None or project is None:
            self.sample = None
            self.detail.show_detail(None)
            self.progress_label.setText("No sample yet: choose a run and a metric, then New sample.")
            return
        self.sample = get_sample(project, sid)
        self._details.clear()
        self._rubrics.clear()
        reviewer = self.window_.reviewer()
        self.mine = my_ratings(project, sid, reviewer)
        todo = [i for i, r in enumerate(self.sample.row_ids) if r not in self.mine]
        self.index = todo[0] if todo else 0
        self.show_row()
        self.setFocus()

    # --- showing -------------------------------------------------------------------------------
    def show_row(self) -> None:
        from rageval_desktop.core.jobs.work import preview_fields
        from rageval_desktop.core.store.queries import run_row_detail

        if self.sample is None or not self.sample.row_ids:
            return
        project = self.window_.project
        row_id = self.sample.row_ids[self.index]
        if row_id not in self._details:  # a row is read once per sample; judgments arriving later refresh it
            self._details[row_id] = run_row_detail(project, row_id)
            self._rubrics[row_id] = self._rubric_text(preview_fields(project, row_id))
        detail = self._details[row_id]
        rated = row_id in self.mine
        # blind: the judges' verdicts stay hidden until this reviewer has rated the row
        self.detail.show_detail(detail if rated else _without_judgments(detail))
        self.rubric.setPlainText(self._rubrics[row_id])
        spec = METRICS[self.sample.metric]
        done = sum(1 for r in self.sample.row_ids if r in self.mine)
        mine = self.mine.get(row_id, "—") if rated else "not rated"
        self.progress_label.setText(
            f"{done}/{len(self.sample.row_ids)} rated · row {self.index + 1} · {self.sample.metric} "
            f"({spec.low:g}–{spec.high:g}) · you: {'skipped' if rated and self.mine[row_id] is None else mine}"
            + (f" · comment: {self.comment}" if self.comment else ""))
        self.reveal.setText(self._verdicts(detail) if rated else "Judge verdicts are hidden until you rate this row.")
        self.shown_at = time.monotonic()

    def _verdicts(self, detail: Any) -> str:
        found = [j for j in detail.judgments if j.metric == self.sample.metric]
        if not found:
            return "No judge has scored this row for this metric."
        return "Judges: " + "; ".join(
            f"{j.judge} {j.score:.3g}" if j.status == "ok" else f"{j.judge} {j.status}" for j in found)

    def _rubric_text(self, fields: dict[str, str]) -> str:
        from rageval_desktop.core.judges import rubrics

        rubric = rubrics.rubric_for_metric(self.window_.project, self.sample.metric,
                                           METRICS[self.sample.metric].default_rubric)
        if rubric is None:
            return ""
        messages = rubric.render(fields)
        return f"The rubric the judge receives ({rubric.name} v{rubric.version}):\n\n" + messages[-1]["content"]

    # --- keys ----------------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.isAutoRepeat() or self.saving or self.sample is None:
            event.accept()
            return
        key, text = event.key(), event.text()
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        spec = METRICS[self.sample.metric]
        if text.isdigit() and not ctrl and spec.low <= int(text) <= spec.high:
            self.save(float(text))
        elif key in (Qt.Key.Key_J, Qt.Key.Key_Down) and not ctrl:
            self.move(1)
        elif key in (Qt.Key.Key_K, Qt.Key.Key_Up) and not ctrl:
            self.move(-1)
        elif key == Qt.Key.Key_S and not ctrl:
            self.save(None, skipped=True)
        elif key == Qt.Key.Key_C and not ctrl:
            text, ok = QInputDialog.getText(self, "Comment", "Comment for this row's rating:")
            if ok:
                self.comment = text.strip() or None
                self.show_row()
        elif key == Qt.Key.Key_U or (key == Qt.Key.Key_Z and ctrl):
            self.undo()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def move(self, step: int) -> None:
        if self.sample and self.sample.row_ids:
            self.index = max(0, min(len(self.sample.row_ids) - 1, self.index + step))
            self.show_row()

    def save(self, score: float | None, skipped: bool = False) -> None:
        from rageval_desktop.core.review.ratings import rate

        reviewer = self.window_.reviewer(ask=True)
        if not reviewer:
            return
        row_id, index = self.sample.row_ids[self.index], self.index
        seconds = round(time.monotonic() - self.shown_at, 2)
        self.saving = True

        comment = self.comment

        def done(rating: Any) -> None:
            self.saving = False
            self.mine[row_id] = rating.score
            self.window_.undo_stack.push(RatingCommand(self, self.sample.id, index, rating,
                                                       dict(comment=comment, seconds=seconds)))
            self.comment = None
            todo = [i for i in range(index + 1, len(self.sample.row_ids)) if self.sample.row_ids[i] not in self.mine]
            self.index = todo[0] if todo else index
            self.show_row()
            if not todo:
                self.reveal.setText(f"Sample complete. {self._verdicts_of(row_id)}")
            else:
                self.reveal.setText(f"Row {index + 1} saved. {self._verdicts_of(row_id)}")
            self.rated.emit(row_id)

        def failed(message: str, details: str) -> None:
            self.saving = False
            self.window_.show_error(message, details)

        project, metric, sample_id, comment = self.window_.project, self.sample.metric, self.sample.id, self.comment
        workers.start(lambda ctx: rate(project, row_id, metric, reviewer, score, sample_id=sample_id,
                                       comment=comment, seconds=seconds, skipped=skipped),
                      on_done=done, on_error=failed)

    def _verdicts_of(self, row_id: int) -> str:
        return self._verdicts(self._details[row_id])

    def judgments_changed(self) -> None:
        """New judgments arrived (a job is running): re-read rows when they are next shown."""
        self._details.clear()

    def undo(self) -> None:
        """u (and Ctrl+Z): the window's undo stack takes back the last edit, a rating here."""
        if self.window_.undo_stack.canUndo():
            self.window_.undo_stack.undo()
        else:
            self.reveal.setText("Nothing to undo.")

    def rating_undone(self, sample_id: int, index: int, row_id: int) -> None:
        if self.sample is None or self.sample.id != sample_id:
            return
        self.mine.pop(row_id, None)
        self.index = index
        self.show_row()
        self.reveal.setText(f"Undid the rating of row {index + 1}.")
        self.rated.emit(row_id)

    def rating_redone(self, sample_id: int, index: int, row_id: int, score: float | None) -> None:
        if self.sample is None or self.sample.id != sample_id:
            return
        self.mine[row_id] = score
        self.show_row()
        self.reveal.setText(f"Redid the rating of row {index + 1}.")
        self.rated.emit(row_id)


class RatingCommand(QUndoCommand):
    """One rating on the window's undo stack: undo withdraws it, redo rates again (a new rating, same values)."""

    def __init__(self, view: ReviewView, sample_id: int, index: int, rating: Any, extra: dict) -> None:
        super().__init__(f"rate row {index + 1} of sample {sample_id}"
                         + (" (skipped)" if rating.skipped else f": {rating.score:g}"))
        self.view, self.sample_id, self.index, self.rating, self.extra = view, sample_id, index, rating, extra
        self._pushed = False

    def _run(self, op: Any, after: Any) -> None:
        view = self.view
        view.saving = True

        def done(result: Any) -> None:
            view.saving = False
            after(result)

        def failed(message: str, details: str) -> None:
            view.saving = False
            view.window_.show_error(message, details)

        workers.start(op, on_done=done, on_error=failed)

    def undo(self) -> None:
        from rageval_desktop.core.review.ratings import withdraw

        project, rating = self.view.window_.project, self.rating
        self._run(lambda ctx: withdraw(project, rating.id),
                  lambda _r: self.view.rating_undone(self.sample_id, self.index, rating.run_row_id))

    def redo(self) -> None:
        if not self._pushed:
            self._pushed = True
            return
        from rageval_desktop.core.review.ratings import rate

        project, r = self.view.window_.project, self.rating

        def again(ctx: Any) -> Any:
            return rate(project, r.run_row_id, r.metric, r.reviewer, r.score, sample_id=self.sample_id,
                        skipped=r.skipped, **self.extra)

        def after(new: Any) -> None:
            self.rating = new
            self.view.rating_redone(self.sample_id, self.index, new.run_row_id, new.score)

        self._run(again, after)


def _without_judgments(detail: Any) -> Any:
    from dataclasses import replace

    return replace(detail, judgments=())
