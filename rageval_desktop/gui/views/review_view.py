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
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QKeyEvent, QTextCharFormat, QTextCursor, QTextDocument, QTextOption
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTextBrowser,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.review.targets import unit
from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui.models.desk import Action, Desk, Rating
from rageval_desktop.gui.page_numbers import ABSTAINED
from rageval_desktop.gui.prefs import review_keys
from rageval_desktop.gui.undo import EditCommand
from rageval_desktop.gui.views.common import TextDialog, TopRow
from rageval_desktop.gui.views.detail_pane import DetailPane

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.review.licence import Standing
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.state import AppState

KEYS_HELP = ("{keys} rate · {next}/{previous} move · {next_unrated} next unrated · {skip} skip · {comment} comment · "
             "{undo} undo · F1 all keys")
UNIT_HINT = {"row": "", "passage": " (per passage)", "nugget": " (per nugget)", "citation": " (per citation)"}
MARKDOWN = QTextDocument.MarkdownFeature.MarkdownDialectGitHub | QTextDocument.MarkdownFeature.MarkdownNoHTML


class ReferenceDialog(QDialog):
    """The reference answer of a golden row, to correct, with the reason the edit keeps."""

    def __init__(self, golden_id: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Fix the reference of {golden_id}")
        self.resize(640, 360)
        layout = QVBoxLayout(self)
        label = QLabel("&Reference answer (the golden set's; every run is judged against it):")
        self.text = QPlainTextEdit(text)
        label.setBuddy(self.text)
        why = QLabel("&Why (kept in the row's history):")
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("e.g. the reference was out of date")
        why.setBuddy(self.reason)
        for w in (label, self.text, why, self.reason):
            layout.addWidget(w)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        original = text

        def check() -> None:
            save.setEnabled(bool(self.text.toPlainText().strip()) and self.text.toPlainText() != original
                            and bool(self.reason.text().strip()))

        self.text.textChanged.connect(check)
        self.reason.textChanged.connect(check)
        check()

    def values(self) -> tuple[str, str]:
        return self.text.toPlainText().strip(), self.reason.text().strip()


def wrap_words(text: str, width: int, advance: Any, most: int = 2) -> list[str]:
    """`text` broken at spaces into at most `most` lines no wider than `width` (by `advance`, the font's width of a
    string); what does not fit goes on the last line (to be elided by the caller)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines) <= most and advance(f"{lines[-1]} {word}") <= width:
            lines[-1] = f"{lines[-1]} {word}"
        elif len(lines) < most:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}"
    return lines


def _short_anchor(anchor: str | None, limit: int = 24) -> str:
    """The first words of a scale point's anchor ("Mostly correct: a minor detail…" -> "Mostly correct")."""
    if not anchor:
        return ""
    head = anchor.split(":", 1)[0].split(",", 1)[0].strip().rstrip(".")
    if len(head) <= limit:
        return head
    words, out = head.split(), ""
    for w in words:
        if len(out) + len(w) + 1 > limit - 1:
            break
        out = f"{out} {w}".strip()
    return (out or head[:limit - 1]) + "…"


def _card_button(text: str, tip: str) -> QPushButton:
    """A button under the card: Tab reaches it, but a click does not take the keyboard from the card (keys keep
    rating after a click)."""
    button = QPushButton(text)
    button.setToolTip(tip)
    button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    return button


class ReviewGuide(QWidget):
    """Beside the card: the metric's scale for people (an anchor sentence per score) and the team's guidelines
    (markdown kept in the project; raw HTML in it is not rendered, links are not followed)."""

    def __init__(self, view: ReviewView) -> None:
        super().__init__(view)
        self.view = view
        self.for_metric: str | None = None   # not `metric`: that name is QPaintDevice's virtual metric()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 0, 0)
        self.scale = QTextEdit()
        self.scale.setObjectName("reviewScale")
        self.scale.setReadOnly(True)
        self.scale.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        head = QHBoxLayout()
        title = QLabel("Guidelines")
        title.setObjectName("sectionTitle")
        self.edit_button = QPushButton("Edi&t guidelines…")
        self.edit_button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.edit_button.setToolTip("Write the team's guidelines for this metric (markdown, kept in the project)")
        self.edit_button.clicked.connect(self.edit)
        head.addWidget(title)
        head.addStretch(1)
        head.addWidget(self.edit_button)
        self.text = QTextBrowser()
        self.text.setObjectName("reviewGuidelines")
        self.text.setOpenLinks(False)
        self.text.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.text.setPlaceholderText("No guidelines yet: Edit guidelines…")
        self.text.setToolTip("The team's rules for this metric: what counts as partial, how to treat refusals…")
        self.text.setWordWrapMode(QTextOption.WrapMode.WordWrap)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.scale)
        holder = QWidget()
        inner = QVBoxLayout(holder)
        inner.setContentsMargins(0, 4, 0, 0)
        inner.addLayout(head)
        inner.addWidget(self.text, 1)
        split.addWidget(holder)
        split.setSizes([260, 200])
        layout.addWidget(split)
        self.markdown = ""

    def show_scale(self, scale: Any, markdown: str) -> None:
        self.for_metric = scale.metric
        self.scale.clear()
        cur = self.scale.textCursor()
        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Weight.Bold)
        plain = QTextCharFormat()
        cur.insertText(f"{scale.metric}\n", bold)
        if scale.criterion:
            cur.insertText(scale.criterion + "\n", plain)
        for point in scale.points:
            key = f"  [{point.key}]" if point.label != point.key else ""
            cur.insertText(f"\n{point.label}{key}  ", bold)
            cur.insertText(point.anchor or "—", plain)
        self.scale.moveCursor(QTextCursor.MoveOperation.Start)
        self.show_guidelines(markdown)

    def show_guidelines(self, markdown: str) -> None:
        self.markdown = markdown
        self.text.document().setMarkdown(markdown, MARKDOWN)

    def edit(self) -> None:
        source = self.view.source()
        if self.for_metric is None or source is None or not source.can_sample:
            return
        dialog = GuidelinesDialog(self.for_metric, self.markdown, self)
        dialog.accepted.connect(lambda: self.save(dialog.editor.toPlainText()))
        dialog.open()

    def save(self, text: str) -> None:
        source, metric = self.view.source(), self.for_metric

        def saved(kept: str) -> None:
            if self.for_metric == metric:
                self.show_guidelines(kept)

        self.view.state.run_task(f"Saving the {metric} guidelines",
                                   lambda ctx: source.set_guidelines(metric, text), on_done=saved)


class GuidelinesDialog(QDialog):
    def __init__(self, metric: str, markdown: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Guidelines for {metric}")
        self.resize(720, 520)
        layout = QVBoxLayout(self)
        hint = QLabel("Markdown: # headings, **bold**, - lists. Every reviewer of this project sees them beside "
                      "the card.")
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        self.editor = QPlainTextEdit(markdown)
        self.editor.setObjectName("guidelinesEditor")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(hint)
        layout.addWidget(self.editor, 1)
        layout.addWidget(buttons)


class ReviewView(QWidget):
    shows = frozenset({Area.JUDGMENTS})
    rated = Signal(int)   # row id, after the rating is committed (tests and benchmarks wait on it)

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 6, 6)
        top = self.top = TopRow("Review")
        self.sample_box = QComboBox()
        self.sample_box.setMinimumWidth(220)
        label = QLabel("Sam&ple:")
        label.setBuddy(self.sample_box)
        top.addWidget(label)
        top.addWidget(self.sample_box)
        self.run_box = QComboBox()
        self.metric_box = QComboBox()
        for m in METRICS:   # rows, and per item: passages, nuggets, citations (core.review.targets)
            self.metric_box.addItem(m + UNIT_HINT[unit(m)], m)
        self.metric_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.metric_box.setMinimumContentsLength(14)   # the list opens as wide as its longest entry
        self.size_box = QSpinBox()
        self.size_box.setRange(5, 2000)
        self.size_box.setValue(40)
        self.size_chosen = False     # the box follows the plan's proposal until a reviewer sets a size
        self._abstain_for: tuple[str, str] | None = None   # the (run, metric) the mode box's "left by" items are for
        self._licences: Standing | None = None   # the judges' licences (and ratings left out) at the last read
        self.size_box.setSuffix(" to rate")
        self.size_box.setToolTip("How many targets to draw: rows, or passages, nuggets or citations for the "
                                 "metrics judged per item")
        self.mode_box = QComboBox()
        from rageval_desktop.core.review.sampling import MODES

        for mode, what in MODES.items():
            self.mode_box.addItem(mode, mode)
            self.mode_box.setItemData(self.mode_box.count() - 1, what, Qt.ItemDataRole.ToolTipRole)
        self.mode_box.setToolTip("How to draw: stratified (representative), or disagreement / uncertain first — "
                                 "drawn with unequal probabilities that the audit and corrected estimates weight back")
        self.mode_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode_box.setMinimumContentsLength(22)     # "left by <judge> (n)" readable; the list opens wider
        self.new_button = QPushButton("&New sample")
        self.plan_text = ""          # what the planner says of the sample the boxes describe (its tooltip too)
        self.plan: dict[str, Any] = {}
        self.plan_for: tuple[str, str, str, int] | None = None    # the (run, metric, mode, size) it is for
        self._plan_timer = QTimer(self)
        self._plan_timer.setSingleShot(True)
        self._plan_timer.setInterval(400)
        self._plan_timer.timeout.connect(self.refresh_plan)
        self.state.track_timer(self._plan_timer)     # stopped when the project or the window closes
        for box in (self.run_box, self.metric_box, self.mode_box):
            box.currentIndexChanged.connect(self._describe_changed)
        self.size_box.valueChanged.connect(self._size_set)
        self.extend_button = QPushButton("E&xtend +10")
        self.prompt_button = QPushButton("Judge's &prompt…")
        self.prompt_button.setToolTip("The prompt an LLM judge of this metric receives for this row")
        for w in (self.run_box, self.metric_box, self.size_box, self.mode_box, self.new_button, self.extend_button,
                  self.prompt_button):
            w.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            top.addWidget(w)
        layout.addLayout(top)
        status = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setObjectName("reviewProgressBar")
        self.progress.setFormat("%v / %m rated")
        self.progress.setMaximumWidth(260)
        self.progress.setRange(0, 1)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("reviewProgress")
        self.progress_label.setTextFormat(Qt.TextFormat.PlainText)
        self.keys_label = QLabel(KEYS_HELP.format(keys="number keys", **review_keys()))
        self.keys_label.setObjectName("hint")
        self.keys_label.setWordWrap(True)          # wraps on a narrow window instead of widening it
        self.keys_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.progress_label.setWordWrap(True)
        status.addWidget(self.progress)
        status.addWidget(self.progress_label, 1)
        status.addWidget(self.keys_label, 1)
        layout.addLayout(status)
        self.detail = DetailPane()
        self.detail.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.guide = ReviewGuide(self)
        split = QSplitter()
        split.setObjectName("reviewSplit")
        split.addWidget(self.detail)
        split.addWidget(self.guide)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([640, 420])
        layout.addWidget(split, 1)
        self.buttons_row = QHBoxLayout()
        self.score_buttons: list[QPushButton] = []
        self.skip_button = _card_button("&Skip  [S]", "Skip this row: it comes back after the rows not seen yet; "
                                        "its judges stay hidden")
        self.next_button = _card_button("&Next unrated  [N]", "Go to the next row you have not rated (skipped rows "
                                        "come after the rows not seen yet)")
        self.comment_button = _card_button("C&omment…  [C]", "Add a comment to the next rating")
        self.reference_button = _card_button("Fix &reference…  [R]", "Correct the golden row's reference answer "
                                             "(an undoable edit with its reason, kept in the row's history)")
        self.undo_button = _card_button("&Undo  [U]", "Take back the last rating")
        for button, name in ((self.reference_button, "reference"), (self.skip_button, "skip"),
                             (self.next_button, "next_unrated"), (self.comment_button, "comment"),
                             (self.undo_button, "undo")):
            button.clicked.connect(lambda _=False, n=name: self._act(Action(n)))
        layout.addLayout(self.buttons_row)
        self.reveal = QLabel()
        self.reveal.setObjectName("reveal")
        self.reveal.setWordWrap(True)
        self.reveal.setTextFormat(Qt.TextFormat.PlainText)
        actions = QHBoxLayout()            # below the scale: the scale's buttons get the row's width
        actions.addStretch(1)
        for button in (self.skip_button, self.next_button, self.comment_button, self.reference_button,
                       self.undo_button):
            actions.addWidget(button)
        layout.addLayout(actions)
        layout.addWidget(self.reveal)      # what a rating did, the whole width (it names licences it moved)
        self.new_button.clicked.connect(self.new_sample)
        self.extend_button.clicked.connect(self.extend_sample)
        self.prompt_button.clicked.connect(self.show_prompt)
        self.sample_box.currentIndexChanged.connect(self.load_sample)
        self.desk: Desk | None = None      # the sample being rated: queue, position, ratings (gui/models/desk.py)
        self.shown_at = time.monotonic()
        self.all_passages = False
        self.action_keys = review_keys()            # remappable in Preferences › Review keys
        self.keys: dict[str, float] = {}                       # key -> score, from the metric's scale
        self._details: dict[int, Any] = {}
        self._scale_metric: str | None = None

    # the desk's state, read where the card is drawn (and by tests)
    @property
    def sample(self) -> Any:
        return self.desk.sample if self.desk is not None else None

    @property
    def index(self) -> int:
        return self.desk.index if self.desk is not None else 0

    @index.setter
    def index(self, value: int) -> None:
        if self.desk is not None:
            self.desk.index = value

    @property
    def check(self) -> Any:
        return self.desk.check if self.desk is not None else None

    @property
    def mine(self) -> dict[tuple[int, int], float | None]:
        return self.desk.mine if self.desk is not None else {}

    @property
    def saving(self) -> bool:
        return self.desk is not None and (self.desk.busy or bool(self.desk.pending))

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

    def source(self) -> Any:
        """Where samples and ratings live: the project, or the review pack this window opened."""
        return self.state.review_source()

    def _build_scale(self, metric: str) -> None:
        """Score buttons and the guide for the metric's scale (1–5, 0–3, or No/Yes), rebuilt when it changes."""
        from rageval_desktop.core.review.guidelines import human_rubric

        if metric == self._scale_metric:
            return
        self._scale_metric = metric
        source = self.source()
        scale = source.scale(metric) if source is not None else human_rubric(metric)
        while self.buttons_row.count():
            item = self.buttons_row.takeAt(0)
            button = item.widget() if item is not None else None
            if button is not None:
                button.deleteLater()
        self.score_buttons = []
        self.keys = {point.key: point.score for point in scale.points}
        self.action_keys = review_keys()
        k = {a: v.upper() for a, v in self.action_keys.items()}
        for button, text in ((self.skip_button, f"&Skip  [{k['skip']}]"),
                             (self.next_button, f"&Next unrated  [{k['next_unrated']}]"),
                             (self.comment_button, f"C&omment…  [{k['comment']}]"),
                             (self.reference_button, f"Fix &reference…  [{k['reference']}]"),
                             (self.undo_button, f"&Undo  [{k['undo']}]")):
            button.setText(text)
        self.keys_label.setText(KEYS_HELP.format(keys="number keys" if all(k.isdigit() for k in self.keys)
                                                 else "/".join(self.keys), **self.action_keys))
        for point in scale.points:
            # the key in the label; Alt+key (the mnemonic) also works when the focus is elsewhere
            text = f"&{point.label}" if point.label == point.key else f"{point.label}  [&{point.key}]"
            short = _short_anchor(point.anchor)
            button_text = text
            if short and point.label == point.key:     # "4 · Mostly correct": the scale in words on the button
                text = f"&{point.label} · {short}"
            button = _card_button(text, point.anchor or f"score {point.key}")
            button.setObjectName("scoreButton")
            button.setCheckable(True)   # the row's standing rating shows as the pressed button
            button.setMinimumHeight(34)
            button.setProperty("score", point.score)
            button.setProperty("full_text", text)
            button.setProperty("short_text", button_text)
            button.clicked.connect(lambda _=False, s=point.score: self._act(Action("score", s)))
            self.score_buttons.append(button)
            # may shrink below its text on a narrow window (the key stays readable) rather than widen the window
            button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            button.setMinimumWidth(56)
            self.buttons_row.addWidget(button, 1)
        self.guide.show_scale(scale, source.guidelines(metric) if source is not None else "")
        self._fit_score_buttons()

    def _fit_score_buttons(self) -> None:
        """The scale's words on its buttons when the row has room for all of them, else the bare keys (the words
        stay in the tooltip and the guide): a narrow window is never widened by them."""
        if not self.score_buttons:
            return
        room = self.width() - 40
        metrics = self.score_buttons[0].fontMetrics()
        need = sum(metrics.horizontalAdvance(str(b.property("full_text")).replace("&", "")) + 36
                   for b in self.score_buttons)
        if need <= room:
            for b in self.score_buttons:
                b.setText(str(b.property("full_text")))
                b.setMinimumHeight(34)
            return
        # not room for every word on one line: the key above, the words below, wrapped over at most two lines of
        # the button's share of the row ("1" / "Completely" / "incorrect") — cut only where a word is longer than
        # the share; the bare key where not even a few letters fit
        share = room // len(self.score_buttons) - 20
        lines = 1
        for b in self.score_buttons:
            full, short = str(b.property("full_text")), str(b.property("short_text"))
            head, sep, words = full.partition(" · ")
            if not sep or share < metrics.horizontalAdvance("Wxyz"):
                b.setText(short)
                continue
            wrapped = wrap_words(words, share, metrics.horizontalAdvance, most=2)
            wrapped = [metrics.elidedText(line, Qt.TextElideMode.ElideRight, share) for line in wrapped]
            b.setText("\n".join([head, *wrapped]))
            lines = max(lines, 1 + len(wrapped))
        for b in self.score_buttons:
            b.setMinimumHeight(max(34, 12 + lines * metrics.lineSpacing()))

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._fit_score_buttons()

    # --- samples -------------------------------------------------------------------------------
    def refresh(self, runs: list[str]) -> None:
        source = self.source()
        sampling = source is None or source.can_sample      # a pack: rate its rows, nothing else
        for w in (self.run_box, self.metric_box, self.size_box, self.mode_box, self.new_button, self.extend_button,
                  self.prompt_button):
            self.top.bar.set_shown(w, sampling)
        self.guide.edit_button.setVisible(sampling)
        self.reference_button.setVisible(sampling)     # a pack has no golden set to edit
        if not sampling:
            self.guide.text.setPlaceholderText("No guidelines came with this pack.")
        keep = self.sample_box.currentData()
        self.run_box.clear()
        for r in runs:
            self.run_box.addItem(r, r)
        self.run_box.setCurrentIndex(max(self.run_box.count() - 1, 0))
        self.sample_box.blockSignals(True)
        self.sample_box.clear()
        for s in (source.samples() if source is not None else []):
            what = "rows" if s["unit"] == "row" else f"{s['unit']}s"
            mode = "" if s.get("mode", "stratified") == "stratified" else f" · {s['mode']}"
            self.sample_box.addItem(f"#{s['id']} · {s['run']} · {s['metric']} · {s['rows']} {what}{mode}", s["id"])
        index = self.sample_box.findData(keep)
        self.sample_box.setCurrentIndex(index if index >= 0 else self.sample_box.count() - 1)
        self.sample_box.blockSignals(False)
        self.load_sample()

    def new_sample(self) -> None:
        run, metric = self.run_box.currentData(), self.metric_box.currentData()
        project, size, seed = self.state.project, self.size_box.value(), int(time.time()) % 100_000
        mode = self.mode_box.currentData()
        if run and metric and project is not None and mode.startswith(ABSTAINED):
            judge = mode[len(ABSTAINED):]
            self.state.run_task(f"Drawing the rows {judge} leaves to people", _draw_abstained, project, judge, run,
                                size, on_done=lambda sample: self._drawn(sample, None))
            return
        if run and metric and project is not None:  # values read here, on the GUI thread; the worker gets copies
            from rageval_desktop.core.review.sampling import create_sample

            said = self.plan if self.plan_for == (run, metric, mode, size) else {}
            self.state.run_task("Drawing a review sample", lambda ctx: create_sample(project, run, metric, size,
                                                                                       seed=seed, mode=mode),
                                on_done=lambda sample: self._drawn(sample, said.get("warning")))

    def refresh_plan(self) -> None:
        """Before anything is drawn: how many ratings the sample the boxes describe needs, and what its size can
        decide (core.review.audit_plan, read off the GUI thread), shown on New sample's tooltip."""
        run, metric = self.run_box.currentData(), self.metric_box.currentData()
        project, size, mode = self.state.project, self.size_box.value(), self.mode_box.currentData()
        if not (run and metric and project is not None):
            return
        key = (run, metric, mode, size)
        self.state.run_read("review-plan", _plan, project, run, metric, mode, size,
                            on_done=lambda plan: self._planned(key, plan))
        if (run, metric) != self._abstain_for:
            self.state.run_read("review-abstain", _abstainers, project, run, metric,
                                on_done=lambda found: self._abstainers_found((run, metric), found))

    def _abstainers_found(self, key: tuple[str, str], found: list[dict[str, Any]]) -> None:
        """The mode box offers, after the sampling modes, the rows each selective judge of the metric leaves to
        people on the run (core.review.selective)."""
        self._abstain_for = key
        keep = self.mode_box.currentData()
        self.mode_box.blockSignals(True)
        for i in reversed(range(self.mode_box.count())):
            if str(self.mode_box.itemData(i)).startswith(ABSTAINED):
                self.mode_box.removeItem(i)
        for f in found:
            self.mode_box.addItem(f"left by {f['judge']} ({f['left']})", ABSTAINED + f["judge"])
            self.mode_box.setItemData(
                self.mode_box.count() - 1,
                f"The {f['left']} of {f['rows']} rows of the run that {f['judge']} leaves to people: it decides the "
                f"rest alone (confidence ≥ {f['level']:.2f}, agreement with people ≥ 90%, probability 90%). Rated, "
                "they give the run's pass rate with the judge (rageval selective --run). They are not a sample of "
                "the run: the audit leaves them out.", Qt.ItemDataRole.ToolTipRole)
        index = self.mode_box.findData(keep)
        self.mode_box.setCurrentIndex(index if index >= 0 else 0)
        self.mode_box.blockSignals(False)

    def _describe_changed(self, _index: int) -> None:
        """Another run, metric or mode: the size box follows the plan for it again."""
        self.size_chosen = False
        self._plan_timer.start()

    def _size_set(self, _value: int) -> None:
        self.size_chosen = True
        self._plan_timer.start()

    def _planned(self, key: tuple[str, str, str, int], plan: dict[str, Any]) -> None:
        from rageval_desktop.core.review.audit_plan import describe

        proposed = plan.get("ratings") if plan else None
        self.plan_for, self.plan = key, plan
        self.plan_text = describe(plan) if plan else ""
        self.new_button.setToolTip(f"Draw a new sample.\n\n{self.plan_text}" if plan else "Draw a new sample.")
        if self.size_chosen:
            return
        if proposed and key[3] != proposed:            # propose the plan's size in the box
            self.size_box.blockSignals(True)
            self.size_box.setValue(min(int(proposed), self.size_box.maximum()))
            self.size_box.blockSignals(False)
            self._plan_timer.start()                   # what the proposed size decides, for the tooltip
        self.size_box.setToolTip(
            f"{self.size_box.value()} to rate, as the plan proposes. Set another size to see what it can decide."
            if proposed else "How many targets to draw: rows, or passages, nuggets or citations for the metrics "
            "judged per item. The plan proposes no size for this run (see New sample's tooltip).")

    def _drawn(self, sample: Any, warning: str | None) -> None:
        """The sample, and what its size can decide, as planned before it was drawn (said when it most likely
        cannot: issue 46)."""
        self.select_sample(sample.id)
        if warning:
            self.state.status(f"Sample #{sample.id} drawn. {warning[0].upper()}{warning[1:]}.", 15_000)

    def extend_sample(self) -> None:
        from rageval_desktop.core.review.sampling import extend_sample

        project = self.state.project
        if self.sample is not None and project is not None:
            sid = self.sample.id
            self.state.run_task("Extending the sample", lambda ctx: extend_sample(project, sid, 10),
                                  on_done=lambda s: self.select_sample(s.id))

    def select_sample(self, sample_id: int) -> None:
        self.sample_box.blockSignals(True)
        self.refresh(self.state.run_names())
        self.sample_box.setCurrentIndex(self.sample_box.findData(sample_id))
        self.sample_box.blockSignals(False)
        self.load_sample()

    def load_sample(self, *_: object) -> None:
        sid = self.sample_box.currentData()
        source = self.source()
        if sid is None or source is None:
            self.desk = None
            self.detail.show_detail(None)
            self.progress.setRange(0, 1)
            self.progress.setValue(0)
            self.progress_label.setText("No sample yet: choose a run and a metric, then New sample.")
            self._build_scale(self.metric_box.currentData() or "correctness")
            return
        sample = source.sample(sid)
        for box, value in ((self.run_box, sample.run), (self.metric_box, sample.metric)):
            if box.findData(value) >= 0:   # "New sample" draws the same kind of sample unless changed
                box.setCurrentIndex(box.findData(value))
        self._details.clear()
        self._scale_metric = None
        self._build_scale(sample.metric)
        reviewer = self.state.reviewer()
        self.desk = Desk.open(sample, source.my_ratings(sid, reviewer))
        self.show_row()
        self.setFocus()
        self._ask_check()
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

    def open_row(self, row_id: int, metric: str | None = None) -> bool:
        """Show a rated row on the card (a false accept clicked on the Audit page): the newest sample of the metric
        that holds it. False when no sample does."""
        source = self.source()
        if source is None or not source.can_sample:
            return False
        for s in reversed(source.samples()):
            if metric and s["metric"] != metric:
                continue
            sample = source.sample(s["id"])
            if row_id in sample.row_ids:
                self.select_sample(s["id"])
                if self.sample is not None and self.sample.id == s["id"]:
                    self.index = self.sample.row_ids.index(row_id)
                    self.show_row()
                return True
        return False

    # --- showing -------------------------------------------------------------------------------
    def _target(self) -> tuple[int, int, str | None]:
        """(row, item, key) at the current position: a check due in the queue, or the sample's target."""
        assert self.desk is not None
        return self.desk.target()

    def show_row(self) -> None:
        from rageval_desktop.core.review.card import blinded, revealed, side_by_side
        from rageval_desktop.core.review.targets import card, reads_passages

        desk = self.desk
        if desk is None or not desk.sample.row_ids:
            return
        row_id, item, key = desk.target()
        if row_id not in self._details:  # a row is read once per sample; judgments arriving later refresh it
            self._details[row_id] = self.source().detail(row_id)
        detail = self._details[row_id]
        rated, mine = desk.shown_rated()
        shown = revealed(mine, rated)
        what = self.sample.unit
        # blind: the judges' verdicts, latency, cost and tokens stay hidden until this reviewer has rated the target
        metric = self.sample.metric
        fold = None if reads_passages(metric) or self.all_passages else (
            f"the {metric} rubric reads the answer and the reference, not the passages")
        if fold != self.detail.fold_passages:
            self.detail.fold_passages = fold
            self.detail.detail = None                  # drawn again with the passages folded or not
        self.detail.show_detail(detail if shown else blinded(detail), card(detail, metric, item, key))
        self._draw_progress()
        for button in self.score_buttons:
            button.setChecked(shown and button.property("score") == mine)
        if shown and self.pack_mode:
            self.reveal.setText(f"You rated this {what} {mine:g}; saved in the pack.")
        elif shown:
            self.reveal.setText(side_by_side(detail, self.sample.metric, mine, item=item, key=key))
        elif rated:
            self.reveal.setText(f"You skipped this {what}; " + ("rate it when you are ready." if self.pack_mode else
                                                                "the judges stay hidden until you rate it."))
        elif self.pack_mode:      # a pack carries no verdicts: nothing is hidden
            self.reveal.setText(f"Rate this {what} on the scale; your rating is saved in the pack.")
        else:
            self.reveal.setText(f"Judge verdicts are hidden until you rate this {what}.")
        self.shown_at = time.monotonic()

    def _draw_progress(self) -> None:
        """The bar and the line above the card (position, your answer, skips, the next check of the judge)."""
        desk = self.desk
        if desk is None:
            return
        self.progress.setRange(0, len(desk.targets))
        self.progress.setValue(desk.rated_count())        # ratings only: a skipped row is still to do
        line, tip = desk.progress(self.pack_mode)
        self.progress_label.setText(line)
        self.progress_label.setToolTip(tip)

    def show_prompt(self) -> None:
        """The LLM prompt for this target, one click away from the human rubric (it shows no verdict)."""
        if self.sample is None or not self.sample.row_ids:
            return
        source, metric = self.source(), self.sample.metric
        row_id, item, key = self._target()
        self.state.run_task("Rendering the judge's prompt", lambda ctx: source.judge_prompt(metric, row_id,
                                                                                               item, key),
                              on_done=lambda text: TextDialog("The judge's prompt", text, self).open())

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
        """What a key means on the desk: a score of the metric's scale, or one of the review keys."""
        key, text = event.key(), event.text()
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if text.lower() in self.keys and not ctrl:
            return Action("score", self.keys[text.lower()], text)
        if key == Qt.Key.Key_Down and not ctrl:
            return Action("next", text="Down")
        if key == Qt.Key.Key_Up and not ctrl:
            return Action("previous", text="Up")
        if key == Qt.Key.Key_Z and ctrl:
            return Action("undo", text="Ctrl+Z")
        mapped = {k: a for a, k in self.action_keys.items()}
        name = mapped.get(text.lower()) if not ctrl and text else None
        return Action(name, text=text) if name else None

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
            self.fix_reference()
        elif name == "passages":
            self.all_passages = not self.all_passages     # the passages a rubric does not read: shown or folded
            self.show_row()
        elif name == "comment":
            self.ask_comment()
        elif name == "undo":
            self.undo()

    def keys_changed(self) -> None:
        """Preferences › Review keys was saved: the keys, the buttons and the help line follow."""
        metric = self._scale_metric or (self.sample.metric if self.sample is not None else "correctness")
        self._scale_metric = None
        self._build_scale(metric)

    def fix_reference(self) -> None:
        """R (and Fix reference…): the reviewer corrects the golden row's reference answer from the card. An
        undoable golden edit with its reason, kept in the row's history; the judgments made against the old
        reference are marked as such where reports show them."""
        if self.sample is None or not self.sample.row_ids or self.pack_mode:
            return
        row_id, _, _ = self._target()
        detail = self._details.get(row_id)
        golden = detail.facts.get("golden row") if detail is not None else None
        if not golden or golden == "unlinked":
            self.reveal.setText("This row is not linked to a golden row: there is no reference to fix.")
            return
        assert detail is not None
        dialog = ReferenceDialog(golden, detail.gold_answer or "", self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            self.setFocus()
            return
        text, reason = dialog.values()

        def done(result: Any) -> None:
            self._details.pop(row_id, None)         # read again: the card shows the new reference
            self.show_row()
            self.reveal.setText(f"Reference of {golden} fixed ({result.label}); Ctrl+Z takes it back.")

        self.state.run_op("Fixing the reference", "edit golden row",
                          {"id": golden, "fields": {"gold_answer": text}, "reason": reason}, on_done=done)
        self.setFocus()

    def ask_comment(self) -> None:
        text, ok = QInputDialog.getText(self, "Comment", "Comment for this row's rating:")
        if ok and self.desk is not None:
            self.desk.comment = text.strip() or None
            self._draw_progress()

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
        desk = self.desk
        if not reviewer or desk is None:
            return
        if desk.check is not None:
            self._save_check(reviewer, score)
            return
        given = desk.rate(score, skipped=skipped, seconds=round(time.monotonic() - self.shown_at, 2))
        self.show_row()
        source, metric = self.source(), desk.sample.metric
        (row_id, item), number = given.target, given.index + 1
        self.state.run_write(f"Rating {desk.sample.unit} {number}",
                             lambda ctx: source.rate(row_id, metric, reviewer, given.score, sample_id=given.sample_id,
                                                     comment=given.comment, seconds=given.seconds, skipped=skipped,
                                                     item=item, item_key=given.key),
                             on_done=lambda rating: self._committed(desk, given, rating),
                             on_error=lambda message, details: self._not_saved(desk, given, message, details))

    def _committed(self, desk: Desk, given: Rating, rating: Any) -> None:
        """A rating's write committed: on the undo stack, said under the card (beside the judges it was blind to)."""
        desk.committed(given, rating.score)
        self.state.undo_stack.push(rating_command(self, given.sample_id, given.index, rating,
                                                  dict(comment=given.comment, seconds=given.seconds)))
        if desk is not self.desk:       # another sample is open now: the rating is kept, there is nothing to draw
            return
        self._draw_progress()
        self.reveal.setText(self._said(desk, given, rating))
        self.rated.emit(given.target[0])
        if not desk.complete:
            self._ask_check()
        self._read_licences()
        self._apply_waiting()

    def _said(self, desk: Desk, given: Rating, rating: Any) -> str:
        from rageval_desktop.core.review.card import side_by_side

        unit_name, number = desk.sample.unit.capitalize(), given.index + 1
        if given.skipped:
            what = f"{unit_name} {number} skipped (its judges stay hidden)."
        elif self.pack_mode:
            what = f"{unit_name} {number} saved in the pack: you {rating.score:g}."
        else:
            row_id, item = given.target
            if row_id not in self._details:
                self._details[row_id] = self.source().detail(row_id)
            line = side_by_side(self._details[row_id], desk.sample.metric, rating.score, item=item, key=given.key)
            what = f"{unit_name} {number} saved: {line}."
        shown = desk.targets[desk.index]
        if desk.complete:
            what = "Sample complete. " + what
        elif desk.check is None and shown in desk.mine and desk.mine[shown] is None:
            what += f" Back to the skipped: {len(desk.targets) - desk.rated_count()} left to rate."
        if rating.held:
            what += (f" Your ratings of {desk.sample.metric} are set aside by a lead: they are saved and do not count "
                     "until you are brought back (Team page).")
        return what

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
    def _ask_check(self) -> None:
        """Ask (in a worker) whether a check is due in this reviewer's queue; show it in place of the next target.
        It looks like any target: the card, the keys and the progress line do not change."""
        source, desk, reviewer = self.source(), self.desk, self.state.reviewer()
        if source is None or desk is None or not reviewer or self.pack_mode:
            return
        sid = desk.sample.id

        def arrived(check: Any) -> None:
            if check is None or self.desk is not desk or desk.check is not None:
                return
            said = self.reveal.text()        # what the last save said stays (it names the row just rated)
            desk.check = check
            self.show_row()
            self.reveal.setText(said)

        self.state.run_read("review-check", lambda ctx: source.due_check(sid, reviewer), on_done=arrived)

    def _save_check(self, reviewer: str, score: float | None) -> None:
        from rageval_desktop.core.review.card import side_by_side

        desk = self.desk
        assert desk is not None and desk.check is not None
        check, source, sid = desk.check, self.source(), desk.sample.id
        seconds = round(time.monotonic() - self.shown_at, 2)
        self.set_busy(True)

        def done(operation: int) -> None:
            desk.check = None
            self.state.undo_stack.push(check_command(self, sid, check, operation))
            if desk is self.desk:
                self.show_row()
                if score is None:
                    self.reveal.setText("Skipped.")
                else:
                    line = side_by_side(self._details[check.row_id], check.metric, score, item=check.item,
                                        key=check.item_key)
                    self.reveal.setText(f"Saved: {line}.")
                self.rated.emit(check.row_id)
                self._ask_check()
            self.set_busy(False)

        def failed(message: str, details: str) -> None:
            self.set_busy(False)
            self.state.show_error(message, details)

        self.state.run_write("Saving the rating", lambda ctx: source.record_check(sid, reviewer, check, score, seconds),
                             on_done=done, on_error=failed)

    def check_undone(self, sample_id: int, check: Any) -> None:
        if self.desk is None or self.desk.sample.id != sample_id:
            return
        self.desk.check = check
        self.show_row()
        self.reveal.setText("Undid the last rating.")

    def changes_arrived(self, changes: object) -> None:
        """New judgments arrived (a job is running): re-read rows when they are next shown (the card in front of a
        reviewer does not move)."""
        self._details.clear()

    def undo(self) -> None:
        """u (and Ctrl+Z): the window's undo stack takes back the last edit, a rating here."""
        if self.state.undo_stack.canUndo():
            self.state.undo_stack.undo()
        else:
            self.reveal.setText("Nothing to undo.")

    def rating_undone(self, sample_id: int, index: int, rating: Any) -> None:
        if self.desk is None or self.desk.sample.id != sample_id:
            return
        self.desk.undone(index, (rating.run_row_id, rating.item))
        self.show_row()
        self.reveal.setText(f"Undid the rating of {self.desk.sample.unit} {index + 1}.")
        self.rated.emit(rating.run_row_id)

    def rating_redone(self, sample_id: int, index: int, rating: Any) -> None:
        if self.desk is None or self.desk.sample.id != sample_id:
            return
        self.desk.redone((rating.run_row_id, rating.item), rating.score)
        self.show_row()
        self.reveal.setText(f"Redid the rating of {self.desk.sample.unit} {index + 1}.")
        self.rated.emit(rating.run_row_id)


def _saving(view: ReviewView) -> Callable[[bool], None]:
    return view.set_busy


def rating_command(view: ReviewView, sample_id: int, index: int, rating: Any, extra: dict) -> EditCommand:
    """A rating on the window's undo stack: undo withdraws it, redo rates again (a new rating, same values)."""
    source, made = view.source(), [rating]

    def undo(ctx: Any) -> None:
        source.withdraw(made[0].id)

    def redo(ctx: Any) -> Any:
        r = made[0]
        return source.rate(r.run_row_id, r.metric, r.reviewer, r.score, sample_id=sample_id, skipped=r.skipped,
                           item=r.item, item_key=r.item_key, **extra)

    def redone(new: Any) -> None:
        made[0] = new
        view.rating_redone(sample_id, index, new)

    label = (f"rate {'row' if not rating.item else 'item'} {index + 1} of sample {sample_id}"
             + (" (skipped)" if rating.skipped else f": {rating.score:g}"))
    return EditCommand(view.state, label, undo, redo, undone=lambda _r: view.rating_undone(sample_id, index, made[0]),
                       redone=redone, busy=_saving(view))


def check_command(view: ReviewView, sample_id: int, check: Any, operation: int) -> EditCommand:
    """A check's rating on the window's undo stack: undo withdraws it (the check is shown again), redo rates it
    again with the same score."""
    source, made = view.source(), [operation]

    def undo(ctx: Any) -> None:
        source.withdraw_check(made[0])

    def redo(ctx: Any) -> int:
        from rageval_desktop.core import ops
        from rageval_desktop.core.store import oplog

        op = oplog.get(source.project, made[0])
        if op is None or op.undone_by is None:
            raise RagevalError("its undo did not happen")
        again = ops.redo(source.project, int(op.undone_by), initiator="gui").operation
        if again is None:
            raise RagevalError("redoing it changed nothing")
        return again

    def redone(new: int) -> None:
        made[0] = new
        if view.desk is not None and view.desk.check == check:
            view.desk.check = None
            view.show_row()

    return EditCommand(view.state, f"rate row {check.row_id} of sample {sample_id}", undo, redo,
                       undone=lambda _r: view.check_undone(sample_id, check), redone=redone, busy=_saving(view))


def _abstainers(project: Project, run: str, metric: str, ctx: TaskContext) -> list[dict[str, object]]:
    """A worker: `page_numbers.abstainers`, in the helper process."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.read(page_numbers.abstainers, project, ctx, run, metric)


def _draw_abstained(project: Any, judge: str, run: str, size: int, ctx: Any) -> Any:
    """A worker: the sample of the rows `judge` leaves to people on `run` (all of them when `size` covers them)."""
    from rageval_desktop.core.judges.registry import get_judge
    from rageval_desktop.core.review import selective

    return selective.abstained_sample(project, get_judge(project, judge), run, size=size)


def _plan(project: Project, run: str, metric: str, mode: str, size: int, ctx: TaskContext) -> dict[str, object]:
    """A worker: `page_numbers.review_plan`, in the helper process."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.read(page_numbers.review_plan, project, ctx, run, metric, mode, size)
