"""The review card's parts: the guide beside it (the metric's scale for people and the team's guidelines), the
dialogs it opens (guidelines, a reference to fix) and how its buttons are made and worded."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QResizeEvent, QTextCharFormat, QTextCursor, QTextDocument, QTextOption
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTextBrowser,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from rageval_desktop.core.review.guidelines import HumanRubric
    from rageval_desktop.gui.state import AppState

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


def wrap_words(text: str, width: int, advance: Callable[[str], int], most: int = 2) -> list[str]:
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


def short_anchor(anchor: str | None, limit: int = 24) -> str:
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


def card_button(text: str, tip: str) -> QPushButton:
    """A button under the card: Tab reaches it, but a click does not take the keyboard from the card (keys keep
    rating after a click)."""
    button = QPushButton(text)
    button.setToolTip(tip)
    button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    return button


class ReviewGuide(QWidget):
    """Beside the card: the metric's scale for people (an anchor sentence per score) and the team's guidelines
    (markdown kept in the project; raw HTML in it is not rendered, links are not followed)."""

    def __init__(self, state: AppState, source: Callable[[], Any], parent: QWidget) -> None:
        super().__init__(parent)
        self.state, self.source = state, source
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

    def show_scale(self, scale: HumanRubric, markdown: str) -> None:
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
        source = self.source()
        if self.for_metric is None or source is None or not source.can_sample:
            return
        dialog = GuidelinesDialog(self.for_metric, self.markdown, self)
        dialog.accepted.connect(lambda: self.save(dialog.editor.toPlainText()))
        dialog.open()

    def save(self, text: str) -> None:
        source, metric = self.source(), self.for_metric

        def saved(kept: str) -> None:
            if self.for_metric == metric:
                self.show_guidelines(kept)

        self.state.run_task(f"Saving the {metric} guidelines",
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


class ScoreRow(QWidget):
    """The scale's buttons under the card, one per score ("4 · Mostly correct"), the reviewer's standing score
    pressed. The scale's words show when the row has room for all of them, else the key above the words wrapped
    over two lines, else the bare keys (the words stay in the tooltip and the guide): a narrow window is never
    widened by them."""

    scored = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.buttons: list[QPushButton] = []

    def set_scale(self, scale: HumanRubric) -> None:
        while self.row.count():
            item = self.row.takeAt(0)
            button = item.widget() if item is not None else None
            if button is not None:
                button.deleteLater()
        self.buttons = []
        for point in scale.points:
            # the key in the label; Alt+key (the mnemonic) also works when the focus is elsewhere
            text = f"&{point.label}" if point.label == point.key else f"{point.label}  [&{point.key}]"
            short = short_anchor(point.anchor)
            button_text = text
            if short and point.label == point.key:     # "4 · Mostly correct": the scale in words on the button
                text = f"&{point.label} · {short}"
            button = card_button(text, point.anchor or f"score {point.key}")
            button.setObjectName("scoreButton")
            button.setCheckable(True)   # the row's standing rating shows as the pressed button
            button.setMinimumHeight(34)
            button.setProperty("score", point.score)
            button.setProperty("full_text", text)
            button.setProperty("short_text", button_text)
            button.clicked.connect(lambda _=False, s=point.score: self.scored.emit(s))
            self.buttons.append(button)
            # may shrink below its text on a narrow window (the key stays readable) rather than widen the window
            button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            button.setMinimumWidth(56)
            self.row.addWidget(button, 1)
        self.fit()

    def show_score(self, score: float | None) -> None:
        """The standing score pressed (None: none, as before a rating, or blind)."""
        for button in self.buttons:
            button.setChecked(score is not None and button.property("score") == score)

    def fit(self) -> None:
        if not self.buttons:
            return
        room = self.width() - 22
        metrics = self.buttons[0].fontMetrics()
        need = sum(metrics.horizontalAdvance(str(b.property("full_text")).replace("&", "")) + 36
                   for b in self.buttons)
        if need <= room:
            for b in self.buttons:
                b.setText(str(b.property("full_text")))
                b.setMinimumHeight(34)
            return
        # not room for every word on one line: the key above, the words below, wrapped over at most two lines of
        # the button's share of the row ("1" / "Completely" / "incorrect") — cut only where a word is longer than
        # the share; the bare key where not even a few letters fit
        share = room // len(self.buttons) - 20
        lines = 1
        for b in self.buttons:
            full, short = str(b.property("full_text")), str(b.property("short_text"))
            head, sep, words = full.partition(" · ")
            if not sep or share < metrics.horizontalAdvance("Wxyz"):
                b.setText(short)
                continue
            wrapped = wrap_words(words, share, metrics.horizontalAdvance, most=2)
            wrapped = [metrics.elidedText(line, Qt.TextElideMode.ElideRight, share) for line in wrapped]
            b.setText("\n".join([head, *wrapped]))
            lines = max(lines, 1 + len(wrapped))
        for b in self.buttons:
            b.setMinimumHeight(max(34, 12 + lines * metrics.lineSpacing()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()


ACTIONS = (("skip", "&Skip", "Skip this row: it comes back after the rows not seen yet; its judges stay hidden"),
           ("next_unrated", "&Next unrated", "Go to the next row you have not rated (skipped rows come after the rows "
            "not seen yet)"),
           ("comment", "C&omment…", "Add a comment to the next rating"),
           ("reference", "Fix &reference…", "Correct the golden row's reference answer (an undoable edit with its "
            "reason, kept in the row's history)"),
           ("undo", "&Undo", "Take back the last rating"))


class ActionRow(QWidget):
    """The desk's other buttons under the scale, right-aligned, each naming its key (Preferences › Review keys)."""

    triggered = Signal(str)     # the action's name, as the desk's keys name it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        self.buttons: dict[str, QPushButton] = {}
        for name, _, tip in ACTIONS:
            button = self.buttons[name] = card_button("", tip)
            button.clicked.connect(lambda _=False, n=name: self.triggered.emit(n))
            row.addWidget(button)
        self.set_keys({"skip": "s", "next_unrated": "n", "comment": "c", "reference": "r", "undo": "u"})

    def set_keys(self, keys: dict[str, str]) -> None:
        for name, text, _ in ACTIONS:
            self.buttons[name].setText(f"{text}  [{keys.get(name, '').upper()}]")


KEYS_HELP = ("{keys} rate · {next}/{previous} move · {next_unrated} next unrated · {skip} skip · {comment} comment · "
             "{undo} undo · F1 all keys")


class ProgressRow(QWidget):
    """Above the card: how many are rated (a bar), where the reviewer is in words (the desk's line), and the keys."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.bar = QProgressBar()
        self.bar.setObjectName("reviewProgressBar")
        self.bar.setFormat("%v / %m rated")
        self.bar.setMaximumWidth(260)
        self.bar.setRange(0, 1)
        self.line = QLabel()
        self.line.setObjectName("reviewProgress")
        self.line.setTextFormat(Qt.TextFormat.PlainText)
        self.line.setWordWrap(True)
        self.keys = QLabel()
        self.keys.setObjectName("hint")
        self.keys.setWordWrap(True)          # wraps on a narrow window instead of widening it
        self.keys.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.bar)
        row.addWidget(self.line, 1)
        row.addWidget(self.keys, 1)

    def set_keys(self, scale_keys: list[str], actions: dict[str, str]) -> None:
        said = "number keys" if all(k.isdigit() for k in scale_keys) else "/".join(scale_keys)
        self.keys.setText(KEYS_HELP.format(keys=said, **actions))

    def show_progress(self, rated: int, total: int, line: str, tip: str = "") -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(rated)
        self.line.setText(line)
        self.line.setToolTip(tip)

