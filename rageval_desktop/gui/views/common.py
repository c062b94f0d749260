"""Small building blocks every page uses: the page frame (margins, a title row) and a records table."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QFont, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QTableView,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.gui.models.records_model import RecordsModel


def page_frame(widget: QWidget, title: str) -> tuple[QVBoxLayout, TopRow]:
    """(the page's layout, its title row: widgets added to it line up on the right and overflow into a menu)."""
    layout = QVBoxLayout(widget)
    layout.setContentsMargins(12, 10, 6, 6)
    top = TopRow(title)
    layout.addLayout(top)
    return layout, top


def records_table(model: RecordsModel, name: str = "") -> QTableView:
    """A read-only table over a RecordsModel: whole rows selected, one at a time, no row numbers."""
    view = QTableView()
    if name:
        view.setObjectName(name)
    view.setModel(model)
    view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QTableView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)   # the model's own order first
    view.setSortingEnabled(True)    # then a header click sorts (RecordsModel.sort; "all" stays last)
    return view


class TopRow(QHBoxLayout):
    """A page's title row: the title on the left; buttons and pickers added with `addWidget` go into a ButtonBar on
    the right, so the row never sets the window's minimum width."""

    def __init__(self, title: str) -> None:
        super().__init__()
        head = QLabel(title)
        head.setObjectName("viewTitle")
        super().addWidget(head)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.bar = ButtonBar([spacer])
        super().addWidget(self.bar, 1)

    def addWidget(self, widget: QWidget, *args: object) -> None:  # type: ignore[override]
        self.bar.add(widget)

    def addStretch(self, stretch: int = 0) -> None:  # the bar's spacer already pushes everything right
        pass


class ButtonBar(QToolBar):
    """A row of buttons and pickers that fits any window width: what does not fit moves into the toolbar's »
    overflow menu instead of widening the window (a row of nine buttons made it 1,400 px wide)."""

    def __init__(self, widgets: list[QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMovable(False)
        self.setFloatable(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._actions: dict[int, QAction] = {}
        for w in widgets:
            self.add(w)

    def add(self, widget: QWidget) -> None:
        self._actions[id(widget)] = self.addWidget(widget)

    def set_shown(self, widget: QWidget, shown: bool) -> None:
        """Show or hide one of the bar's widgets (inside a toolbar, its action decides)."""
        self._actions[id(widget)].setVisible(shown)


class TextDialog(QDialog):
    """Read-only text (monospace, never interpreted as markup), an optional chart above it, and a Close button."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None, png: bytes | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(900, 720 if png else 560)
        layout = QVBoxLayout(self)
        if png:
            chart = QLabel()
            pixmap = QPixmap()
            pixmap.loadFromData(png, "PNG")
            chart.setPixmap(pixmap)
            layout.addWidget(chart)
        view = QPlainTextEdit(text)
        view.setReadOnly(True)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        view.setFont(mono)
        layout.addWidget(view)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


def warn(parent: QWidget, message: str, details: str = "") -> None:
    """A warning box whose text is shown as characters (never as markup), details behind a button."""
    from PySide6.QtWidgets import QMessageBox

    box = QMessageBox(QMessageBox.Icon.Warning, "RAGEval Desktop", message, QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    if details:
        box.setDetailedText(details)
    box.open()
