"""A notice across the top of the workspace: what a background follow-up found (near-duplicates after an import,
the integrity check after an unclean shutdown), with the actions that follow from it. It never blocks: the user
keeps working, reads it when ready, and closes it (Esc on the bar, or ×)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

if TYPE_CHECKING:
    from PySide6.QtGui import QKeyEvent

TONES = ("info", "ok", "warning", "error")


class NoticeBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noticeBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(10, 6, 6, 6)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)   # text from data stays text
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._layout.addWidget(self.label, 1)
        self.buttons: list[QPushButton] = []
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAccessibleName("Dismiss notice")
        self.close_button.clicked.connect(lambda: self.dismiss())
        self._layout.addWidget(self.close_button)
        self.tone = "info"
        self.topic = ""
        self.setVisible(False)

    def show_notice(self, text: str, actions: Sequence[tuple[str, Callable[[], None]]] = (), *, tone: str = "info",
                    topic: str = "") -> None:
        """`topic` names what the notice is about: a newer notice on the same topic replaces it."""
        assert tone in TONES
        for button in self.buttons:
            self._layout.removeWidget(button)
            button.hide()          # at once: deleteLater waits for the event loop
            button.deleteLater()
        self.buttons = []
        for label, act in actions:
            button = QPushButton(label)
            button.clicked.connect(act)
            self._layout.insertWidget(self._layout.count() - 1, button)
            button.show()   # a child added to a bar already shown is not shown with it
            self.buttons.append(button)
        self.tone, self.topic = tone, topic
        self.setProperty("tone", tone)
        self.style().unpolish(self)
        self.style().polish(self)
        self.label.setText(text)
        self.setVisible(True)

    def dismiss(self, topic: str | None = None) -> None:
        """Hide the notice (only if it is about `topic`, when given)."""
        if topic is None or topic == self.topic:
            self.setVisible(False)
            self.topic = ""

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if event.key() == Qt.Key.Key_Escape:
            self.dismiss()
            return
        super().keyPressEvent(event)
