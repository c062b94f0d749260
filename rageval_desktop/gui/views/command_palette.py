"""Ctrl+K: every command by name — the window's menu actions and every page's buttons (run judges, new sample,
record audit, export, each golden-set tool) — filtered as you type, run with Enter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMenuBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


@dataclass(frozen=True)
class Command:
    name: str
    keys: str
    run: Callable[[], None]


def from_action(action: QAction) -> Command:
    return Command(action.text().replace("&", ""), action.shortcut().toString(), action.trigger)


def from_button(page: str, button: QPushButton, show: Callable[[], None]) -> Command:
    """A page's button: the palette shows the page, then presses the button (its own checks then apply)."""
    def run() -> None:
        show()
        if button.isEnabled():
            button.click()

    return Command(f"{page} › {button.text().replace('&', '').rstrip('.…')}", "", run)


def commands_of(menu_bar: QMenuBar, pages: Sequence[tuple[str, QWidget, Callable[[], None]]]) -> list[Command]:
    """The menus' enabled actions, then each page's buttons (title, page, what shows it)."""
    commands = [from_action(a) for menu in menu_bar.findChildren(QMenu) for a in menu.actions()
                if not a.isSeparator() and a.menu() is None and a.text() and a.isEnabled()]
    for title, widget, show in pages:
        commands += [from_button(title, button, show) for button in widget.findChildren(QPushButton) if button.text()]
    return commands


class CommandPalette(QDialog):
    def __init__(self, commands: list[Command] | list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Commands")
        self.resize(620, 460)
        self.commands = [c if isinstance(c, Command) else from_action(c) for c in commands
                         if isinstance(c, Command) or (c.text() and c.isEnabled())]
        layout = QVBoxLayout(self)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Type to find a command…  (e.g. 'run judges', 'sample', 'export')")
        self.list = QListWidget()
        layout.addWidget(self.filter)
        layout.addWidget(self.list)
        self.filter.textChanged.connect(self.refill)
        self.list.itemActivated.connect(self.run)
        self.chosen: Command | None = None
        self.refill("")

    def refill(self, text: str) -> None:
        self.list.clear()
        words = text.lower().split()
        for i, command in enumerate(self.commands):
            if all(w in command.name.lower() for w in words):
                item = QListWidgetItem(f"{command.name}    {command.keys}" if command.keys else command.name)
                item.setData(Qt.ItemDataRole.UserRole, i)
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
        self.chosen = self.commands[item.data(Qt.ItemDataRole.UserRole)]
        self.accept()
        self.chosen.run()
