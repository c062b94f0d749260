"""What the window shows with no project open: the three ways in, and the recent projects."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget, QPushButton, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from rageval_desktop.gui.main_window import MainWindow


class WelcomePage(QWidget):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        layout = QVBoxLayout(self)
        layout.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel("RAGEval Desktop")
        title.setObjectName("welcomeTitle")
        subtitle = QLabel("Is the new version of your RAG system better than the old one — on every slice?\n"
                          "Drop a .rageval project, a golden set or a run here, or:")
        subtitle.setObjectName("welcomeSubtitle")
        layout.addWidget(title)
        layout.addWidget(subtitle)
        for text, slot in (("Open the &demo project", window.open_demo), ("&New project…", window.new_project),
                           ("&Open project…", window.choose_project)):
            button = QPushButton(text)
            button.setMinimumWidth(260)
            button.clicked.connect(slot)
            layout.addWidget(button)
        self.recent = QListWidget()
        self.recent.setMaximumHeight(160)
        self.recent.setMinimumWidth(420)
        self.recent.itemActivated.connect(lambda item: window.open_path(item.data(Qt.ItemDataRole.UserRole)))
        layout.addSpacing(12)
        layout.addWidget(QLabel("Recent projects"))
        layout.addWidget(self.recent)

    def showEvent(self, event) -> None:  # noqa: ANN001
        self.recent.clear()
        for path in self.window_.recent_projects():
            self.recent.addItem(Path(path).name)
            item = self.recent.item(self.recent.count() - 1)
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
        super().showEvent(event)
