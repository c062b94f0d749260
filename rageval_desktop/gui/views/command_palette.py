"""Ctrl+K: every action of the window by name (with its shortcut), filtered as you type, run with Enter."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import QDialog, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget


class CommandPalette(QDialog):
    def __init__(self, actions: list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Commands")
        self.resize(560, 420)
        self.actions_ = [a for a in actions if a.text() and a.isEnabled()]
        layout = QVBoxLayout(self)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Type to find a command…")
        self.list = QListWidget()
        layout.addWidget(self.filter)
        layout.addWidget(self.list)
        self.filter.textChanged.connect(self.refill)
        self.list.itemActivated.connect(self.run)
        self.chosen: QAction | None = None
        self.refill("")

    def refill(self, text: str) -> None:
        self.list.clear()
        words = text.lower().split()
        for action in self.actions_:
            name = action.text().replace("&", "")
            if all(w in name.lower() for w in words):
                keys = action.shortcut().toString()
                item = QListWidgetItem(f"{name}    {keys}" if keys else name)
                item.setData(Qt.ItemDataRole.UserRole, self.actions_.index(action))
                self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up):
            self.list.keyPressEvent(event)
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.list.currentItem():
            self.run(self.list.currentItem())
            return
        super().keyPressEvent(event)

    def run(self, item: QListWidgetItem) -> None:
        self.chosen = self.actions_[item.data(Qt.ItemDataRole.UserRole)]
        self.accept()
        self.chosen.trigger()
