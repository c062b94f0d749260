"""What the window shows with no project open: a centred card with the ways in (the demo, a new project, an
existing one, a file to import) beside the recent projects."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from PySide6.QtGui import QShowEvent


class WelcomeHost(Protocol):
    """What the welcome page asks of the session (gui/session.py; it imports no window: no cycle)."""

    def open_demo(self) -> None: ...
    def new_project(self) -> None: ...
    def choose_project(self) -> None: ...
    def open_path(self, path: str | Path) -> None: ...
    def recent_projects(self) -> list[str]: ...

CARD_WIDTH = 860
NO_RECENT = "No recent projects yet.\nOpen the demo to look around: it is\noffline and takes a few seconds."


class WelcomePage(QWidget):
    def __init__(self, window: WelcomeHost, choose_import: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.window_ = window
        outer = QVBoxLayout(self)
        outer.addStretch(1)
        row = QHBoxLayout()
        row.addStretch(1)
        card = QFrame()
        card.setObjectName("welcomeCard")
        card.setMaximumWidth(CARD_WIDTH)
        card.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        row.addWidget(card, 20)
        row.addStretch(1)
        outer.addLayout(row)
        outer.addStretch(2)

        grid = QGridLayout(card)
        grid.setContentsMargins(28, 24, 28, 24)
        grid.setHorizontalSpacing(32)
        grid.setVerticalSpacing(8)
        title = QLabel("RAGEval Desktop")
        title.setObjectName("welcomeTitle")
        subtitle = QLabel("Is the new version of your RAG system better than the old one — on every slice?\n"
                          "Drop a .rageval project, a golden set or a run anywhere on this window, or:")
        subtitle.setObjectName("welcomeSubtitle")
        subtitle.setWordWrap(True)
        grid.addWidget(title, 0, 0, 1, 2)
        grid.addWidget(subtitle, 1, 0, 1, 2)
        grid.addLayout(self._start(window, choose_import), 2, 0)
        grid.addLayout(self._recent(), 2, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)

    def _start(self, window: WelcomeHost, choose_import: Callable[[], None]) -> QVBoxLayout:
        """The ways in: the demo, a new project, a project file, a file to import."""
        start = QVBoxLayout()
        start.setSpacing(10)
        head = QLabel("Start")
        head.setObjectName("sectionTitle")
        start.addWidget(head)
        self.buttons: dict[str, QPushButton] = {}
        for key, text, note, slot in (
                ("demo", "Open the &demo project", "Python docs, two runs, judges, and ratings to audit",
                 window.open_demo),
                ("new", "&New project…", "An empty project file you fill with imports", window.new_project),
                ("open", "&Open project…", "A .rageval file", window.choose_project),
                ("import", "&Import a file…", "A golden set or a run: a new project is made for it",
                 choose_import)):  # with no project open, a new one is made beside the file
            button = QPushButton(text)
            button.setObjectName("welcomeButton")
            button.setMinimumHeight(36)
            button.setToolTip(note)
            button.clicked.connect(slot)
            self.buttons[key] = button
            hint = QLabel(note)
            hint.setObjectName("hint")
            start.addWidget(button)
            start.addWidget(hint)
        start.addStretch(1)
        return start

    def _recent(self) -> QVBoxLayout:
        """The recent projects (filled when the page shows), or a word that there are none."""
        recent_box = QVBoxLayout()
        head = QLabel("Recent projects")
        head.setObjectName("sectionTitle")
        recent_box.addWidget(head)
        self.recent = QListWidget()
        self.recent.setObjectName("recentProjects")
        self.recent.setMinimumWidth(320)
        self.recent.setMinimumHeight(220)
        self.recent.itemActivated.connect(self._open_item)
        self.empty = QLabel(NO_RECENT)
        self.empty.setObjectName("hint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        recent_box.addWidget(self.recent, 1)
        recent_box.addWidget(self.empty, 1)
        return recent_box

    def _open_item(self, item: QListWidgetItem) -> None:
        self.window_.open_path(item.data(Qt.ItemDataRole.UserRole))

    def showEvent(self, event: QShowEvent) -> None:
        self.recent.clear()
        for path in self.window_.recent_projects():
            item = QListWidgetItem(f"{Path(path).name}\n{Path(path).parent}")
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            self.recent.addItem(item)
        has = self.recent.count() > 0
        self.recent.setVisible(has)
        self.empty.setVisible(not has)
        super().showEvent(event)
