"""The Pairwise page: two runs' answers to one question side by side, blind to run and judge (which side holds which
run was fixed by a coin flip when the sample was drawn), rated by keys as the Review desk is (gui/models/pair_desk.py);
the reviewers' win rate and each pairwise judge's agreement, licence and position bias (core.review.pairwise) behind
"Show results", so what the others said cannot lead a reviewer. Reads and writes go through the state's lanes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.core.store.changes import Area, Changes
from rageval_desktop.gui.models.pair_desk import PairDesk, action_for
from rageval_desktop.gui.state import Page
from rageval_desktop.gui.undo import EditCommand
from rageval_desktop.gui.views.common import page_frame

if TYPE_CHECKING:
    from typing import TypeAlias

    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.ops.sources import PackPairs, ProjectPairs
    from rageval_desktop.core.review.pair_packs import PairPackInfo
    from rageval_desktop.core.review.pairwise import PairItem, PairJudging, PairReport, PairSample
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.state import AppState

    Pairs: TypeAlias = ProjectPairs | PackPairs     # where the page reads pairs and rates: the project, or a pack

EMPTY = ("No pair sample yet. A pair sample shows two runs' answers to the same question side by side, in an order "
         "that hides which run wrote which: press New pair sample… to draw one.")
SIDES = (("left", "&1 · Left is better"), ("right", "&2 · Right is better"), ("tie", "&3 · Neither (tie)"),
         ("skip", "&Skip"))


# --- the workers (values in, values out) ---------------------------------------------------------------------------
def _samples(source: Pairs, ctx: TaskContext) -> list[PairSample]:
    return source.samples()


def _items(source: Pairs, sample: int, reviewer: str, ctx: TaskContext) -> list[PairItem]:
    return source.items(sample, reviewer)


def _report(source: Pairs, sample: int, ctx: TaskContext) -> PairReport | None:
    return source.report(sample)


def _llm_judges(project: Project, ctx: TaskContext) -> list[str]:
    from rageval_desktop.core.judges.registry import list_judges

    return [j.name for j in list_judges(project) if j.calls_llm]


def _draw(project: Project, run_a: str, run_b: str, size: int, ctx: TaskContext) -> int:
    from rageval_desktop.core.review.pairwise import draw_pairs

    return draw_pairs(project, run_a, run_b, size, seed=int(time.time()) % 100_000)


def _export(project: Project, sample: int, reviewers: list[str], folder: str, ctx: TaskContext) -> list[PairPackInfo]:
    from rageval_desktop.core.review.pair_packs import export_pair_packs

    return export_pair_packs(project, sample, reviewers, folder)


def _judge(project: Project, sample: int, judge: str, ctx: TaskContext) -> PairJudging:
    from rageval_desktop.core.review.pairwise import judge_pairs

    return judge_pairs(project, sample, judge, ctx)


class NewPairsDialog(QDialog):
    """Which two runs, and how many pairs."""

    def __init__(self, runs: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New pair sample")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.run_a, self.run_b = QComboBox(), QComboBox()
        for box in (self.run_a, self.run_b):
            box.addItems(runs)
        self.run_b.setCurrentIndex(min(1, len(runs) - 1))
        self.run_a.setCurrentIndex(0)
        self.pairs = QSpinBox()
        self.pairs.setRange(1, 10_000)
        self.pairs.setValue(40)
        form.addRow("Run &A:", self.run_a)
        form.addRow("Run &B (its win rate):", self.run_b)
        form.addRow("&Pairs:", self.pairs)
        layout.addLayout(form)
        note = QLabel("Questions both runs answered are drawn at random; each pair's sides are shuffled, and the "
                      "page never says which run wrote which answer.")
        note.setWordWrap(True)
        note.setObjectName("hint")
        layout.addWidget(note)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def choice(self) -> tuple[str, str, int]:
        return self.run_a.currentText(), self.run_b.currentText(), self.pairs.value()


def _text_box() -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setReadOnly(True)
    box.setFocusPolicy(Qt.FocusPolicy.NoFocus)       # keys stay with the desk
    return box


class PairwiseView(Page):
    shows = frozenset({Area.REVIEW, Area.RATINGS, Area.JUDGMENTS, Area.RUNS})

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.desk: PairDesk | None = None
        self.sample: int | None = None
        self.shown_at = time.monotonic()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout, top = page_frame(self, "Pairwise")
        self.sample_box = QComboBox()
        self.sample_box.setMinimumContentsLength(20)
        self.sample_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.new_button = QPushButton("&New pair sample…")
        self.judge_button = QPushButton("&Judge pairs…")
        self.judge_button.setToolTip("Ask an LLM judge which answer of each pair is better, in both orders (a judge "
                                     "that follows the position cancels itself, and its position bias is shown)")
        self.export_button = QPushButton("Export &packs…")
        self.export_button.setToolTip("One pairwise pack per reviewer, every pair in each, blind: they rate it in the "
                                      "app and send the file back (File › Import Review Packs…)")
        self.results_button = QCheckBox("Show &results")
        self.results_button.setToolTip("Show or hide the reviewers' win rate and each pairwise judge's agreement: "
                                       "hidden while you rate, so the others' verdicts cannot lead you")
        for w in (QLabel("Sample:"), self.sample_box, self.new_button, self.judge_button, self.export_button,
                  self.results_button):
            top.addWidget(w)
        self.empty = QLabel(EMPTY)
        self.empty.setWordWrap(True)
        self.empty.setObjectName("hint")
        layout.addWidget(self.empty)
        self.card = QWidget()
        layout.addWidget(self.card, 100)
        self._build_card()
        self.results = QLabel()
        self.results.setWordWrap(True)
        self.results.setTextFormat(Qt.TextFormat.PlainText)
        self.results.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.results.setVisible(False)
        layout.addWidget(self.results)
        layout.addStretch(1)      # with no sample, the word sits under the title, not in the middle of the page
        self.sample_box.currentIndexChanged.connect(self._sample_chosen)
        self.new_button.clicked.connect(self.new_sample)
        self.judge_button.clicked.connect(self.ask_judge)
        self.export_button.clicked.connect(self.export_packs)
        self.results_button.toggled.connect(self._show_results)
        self._show()

    def _build_card(self) -> None:
        card = QVBoxLayout(self.card)
        card.setContentsMargins(0, 0, 0, 0)
        self.question = QLabel()
        self.question.setObjectName("cardQuestion")
        self.question.setWordWrap(True)
        self.question.setTextFormat(Qt.TextFormat.PlainText)
        self.reference = QLabel()
        self.reference.setObjectName("hint")
        self.reference.setWordWrap(True)
        self.reference.setTextFormat(Qt.TextFormat.PlainText)
        card.addWidget(self.question)
        card.addWidget(self.reference)
        answers = QGridLayout()
        self.left, self.right = _text_box(), _text_box()
        answers.addWidget(QLabel("Answer 1 (left)"), 0, 0)
        answers.addWidget(QLabel("Answer 2 (right)"), 0, 1)
        answers.addWidget(self.left, 1, 0)
        answers.addWidget(self.right, 1, 1)
        card.addLayout(answers, 1)
        row = QHBoxLayout()
        self.side_buttons: dict[str, QPushButton] = {}
        for side, text in SIDES:
            button = QPushButton(text)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(lambda _=False, s=side: self.perform(s))
            self.side_buttons[side] = button
            row.addWidget(button)
        self.undo_button = QPushButton("&Undo (U)")
        self.undo_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.undo_button.clicked.connect(lambda: self.perform("undo"))
        row.addStretch(1)
        row.addWidget(self.undo_button)
        card.addLayout(row)
        self.said = QLabel()
        self.said.setWordWrap(True)
        self.progress = QLabel()
        self.progress.setObjectName("hint")
        card.addWidget(self.said)
        card.addWidget(self.progress)

    # --- reading ---------------------------------------------------------------------------------------------------
    def source(self) -> ProjectPairs | PackPairs | None:
        review = self.state.review_source()
        return None if review is None else review.pairs()

    def refresh(self, runs: list[str] | None = None) -> None:
        source = self.source()
        if source is None:
            return
        for w in (self.new_button, self.judge_button, self.export_button, self.results_button):
            w.setVisible(source.can_sample)         # a pack: rate its pairs, nothing else
        self.state.run_read("pairwise", _samples, source, on_done=self.show_samples)

    def show_samples(self, samples: list[PairSample]) -> None:
        keep = self.sample
        self.sample_box.blockSignals(True)
        self.sample_box.clear()
        for s in samples:
            self.sample_box.addItem(s.title(), s.id)
        self.sample_box.blockSignals(False)
        if not samples:
            self.sample, self.desk = None, None
            self._show()
            return
        index = self.sample_box.findData(keep) if keep is not None else -1
        self.sample_box.setCurrentIndex(index if index >= 0 else len(samples) - 1)
        self._sample_chosen()

    def select_sample(self, sample: int) -> None:
        self.sample = sample
        self.refresh()

    def _sample_chosen(self) -> None:
        sample = self.sample_box.currentData()
        if sample is None:
            return
        self.sample = int(sample)
        source = self.source()
        if source is not None:
            self.state.run_read("pairwise.items", _items, source, self.sample, self.state.reviewer(),
                                on_done=self.show_items)
        self._read_results()

    def show_items(self, items: list[PairItem]) -> None:
        self.desk = PairDesk(items)
        self._show()
        self.setFocus()

    def _read_results(self) -> None:
        source = self.source()
        if self.sample is not None and self.results.isVisible() and source is not None:
            self.results.setText("Reading the results…")
            self.state.run_read("pairwise.report", _report, source, self.sample, on_done=self.show_report)

    def show_report(self, report: PairReport | None) -> None:
        self.results.setText("" if report is None else "\n".join(report.lines()[1:]))

    def _show_results(self, on: bool) -> None:
        self.results.setVisible(on)
        self._read_results()

    def changes_arrived(self, changes: Changes) -> None:
        """New samples or runs: the list again; ratings and judgments: the results (the desk keeps its place)."""
        if changes.touches(Area.REVIEW, Area.RUNS):
            self.refresh()
        elif changes.touches(Area.RATINGS, Area.JUDGMENTS):
            self._read_results()

    # --- showing ---------------------------------------------------------------------------------------------------
    def _show(self) -> None:
        desk = self.desk
        self.empty.setVisible(self.sample_box.count() == 0)
        self.card.setVisible(desk is not None)
        self.judge_button.setEnabled(self.sample is not None)
        self.export_button.setEnabled(self.sample is not None)
        self.results_button.setEnabled(self.sample is not None)
        if desk is None:
            return
        item = desk.current()
        for button in self.side_buttons.values():
            button.setEnabled(item is not None)
        self.undo_button.setEnabled(self.state.undo_stack.canUndo() and not desk.pending)
        self.progress.setText(desk.progress())
        if item is None:
            self.question.setText("Every pair of this sample is rated.")
            self.reference.clear()
            self.left.clear()
            self.right.clear()
            self.said.setText("Results shows which run the reviewers prefer; Up goes back to a pair.")
            return
        self.question.setText(item.question)
        self.reference.setText(f"Reference: {item.reference}" if item.reference else "")
        left, right = item.sides()
        self.left.setPlainText(left)
        self.right.setPlainText(right)
        self.said.setText(desk.said_words(item))
        self.shown_at = time.monotonic()

    # --- keys and writes -------------------------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        named = {Qt.Key.Key_Down: "Down", Qt.Key.Key_Up: "Up", Qt.Key.Key_Backspace: "Backspace",
                 Qt.Key.Key_Z: "Z"}.get(Qt.Key(event.key()), "")
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        action = action_for(event.text(), named, ctrl) if not event.isAutoRepeat() else None
        if action is None or self.desk is None:
            super().keyPressEvent(event)
            return
        self.perform(action)
        event.accept()

    def perform(self, action: str) -> None:
        desk, sample = self.desk, self.sample
        if desk is None or sample is None:
            return
        if action in ("next", "previous"):
            desk.step(1 if action == "next" else -1)
        elif action == "undo":
            self._undo(desk)
        else:
            self._rate(desk, sample, action)
        self._show()

    def _rate(self, desk: PairDesk, sample: int, side: str) -> None:
        reviewer = self.state.reviewer(ask=True)
        if not reviewer:
            self.said.setText("Ratings carry your name: give it to rate (Preferences › Reviewer).")
            return
        rated = desk.rate(side)
        if rated is None:
            return
        item, preference = rated
        seconds = time.monotonic() - self.shown_at
        source = self.source()
        assert source is not None

        def write(ctx: TaskContext) -> int:
            return source.rate(sample, item.position, reviewer, preference, seconds)

        def failed(message: str, details: str) -> None:
            desk.failed(item.position)
            self._show()
            self.state.show_error(f"The rating of pair {item.position} was not saved: {message}", details)

        def saved(rating: int) -> None:
            said = desk.committed(item.position, rating)
            if said is not None:
                self.state.undo_stack.push(self._command(desk, sample, item, said, rating))
            self._show()

        self.state.run_write("Rating a pair", write, on_done=saved, on_error=failed)

    def _command(self, desk: PairDesk, sample: int, item: PairItem, said: str,
                 rating: int) -> EditCommand[None, int]:
        """The rating on the window's undo stack: undo withdraws it, redo rates the pair again the same way."""
        source, reviewer, made = self.source(), self.state.reviewer(), [rating]
        assert source is not None
        preference = None if said == "skip" else said

        def undo(ctx: TaskContext) -> None:
            source.withdraw(made[0])

        def redo(ctx: TaskContext) -> int:
            return source.rate(sample, item.position, reviewer, preference, None)

        def undone(_: None) -> None:
            desk.undone(item.position)
            self._show()

        def redone(new: int) -> None:
            made[0] = new
            desk.redone(item.position, said, new)
            self._show()

        return EditCommand(self.state, f"rate pair {item.position} of pair sample {sample}", undo, redo,
                           undone=undone, redone=redone)

    def _undo(self, desk: PairDesk) -> None:
        if desk.pending:
            self.said.setText("A rating is still saving: undo once it is saved.")
            return
        self.state.undo_stack.undo()

    # --- actions ---------------------------------------------------------------------------------------------------
    def new_sample(self) -> None:
        runs = self.state.run_names()
        if len(runs) < 2:
            self.state.show_error("A pair sample compares two runs: import a second run first.")
            return
        dialog = NewPairsDialog(runs, self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        run_a, run_b, size = dialog.choice()
        self.state.run_task("Drawing pairs", _draw, self.state.opened(), run_a, run_b, size,
                            on_done=self.select_sample)

    def export_packs(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        if self.sample is None:
            return
        names, ok = QInputDialog.getText(self, "Export pairwise packs", "Reviewers, separated by commas:")
        reviewers = [n.strip() for n in names.split(",") if n.strip()] if ok else []
        if not reviewers:
            return
        folder = QFileDialog.getExistingDirectory(self, "Write the packs to")
        if folder:
            self.state.run_task("Exporting pairwise packs", _export, self.state.opened(), self.sample, reviewers,
                                folder, on_done=self._exported)

    def _exported(self, made: list[PairPackInfo]) -> None:
        self.state.status(f"{len(made)} pairwise pack(s) written to {Path(made[0].path).parent}: send each reviewer "
                          "theirs, then File › Import Review Packs…" if made else "no pack written", 15000)

    def ask_judge(self) -> None:
        if self.sample is not None:
            self.state.run_read("pairwise.judges", _llm_judges, self.state.opened(), on_done=self._judge_with)

    def _judge_with(self, names: list[str]) -> None:
        if not names:
            self.state.show_error("No LLM judge yet: add one on the Judges page; its endpoint, model and key judge "
                                  "the pairs.")
            return
        name, ok = QInputDialog.getItem(self, "Judge pairs", "The LLM judge to ask (both orders of every pair):",
                                        names, 0, False)
        if ok and name and self.sample is not None:
            self.state.run_task(f"Judging pairs with {name}", _judge, self.state.opened(), self.sample, name,
                                on_done=self._judged)

    def _judged(self, done: PairJudging) -> None:
        self.state.status(f"{done.judge}: {done.judged} pair(s) judged in both orders, {done.unparsed} order(s) "
                          f"unparsed; {done.calls} calls")
        self._read_results()
