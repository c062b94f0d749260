"""Small building blocks every page uses: the page frame (margins, a title row) and a records table."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QFont, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QPlainTextEdit,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.gui.models.records_model import RecordsModel

DIALOG_MOST = QSize(1000, 700)    # a dialog fits a 1024x768 screen with its frame and a panel


def fit_dialog(dialog: QWidget, width: int, height: int) -> None:
    """Size a dialog to (width, height), but never beyond DIALOG_MOST nor the window it opens over (less a margin):
    at 1024x768 every dialog shows whole, its content scrolling instead."""
    most = QSize(DIALOG_MOST)
    parent = dialog.parentWidget()
    if parent is not None and parent.window().isVisible():
        room = parent.window().size()
        most = most.boundedTo(QSize(max(480, room.width() - 24), max(360, room.height() - 24)))
    dialog.resize(min(width, most.width()), min(height, most.height()))


def page_frame(widget: QWidget, title: str) -> tuple[QVBoxLayout, TopRow]:
    """(the page's layout, its title row: widgets added to it line up on the right and overflow into a menu)."""
    layout = QVBoxLayout(widget)
    layout.setContentsMargins(12, 10, 6, 6)
    top = TopRow(title)
    layout.addLayout(top)
    return layout, top


def records_table(model: RecordsModel, name: str = "", *, sortable: bool = True) -> QTableView:
    """A read-only table over a RecordsModel: whole rows selected, one at a time, no row numbers; a header click
    sorts unless `sortable` is off (a page that reads a row by its place in a list of its own)."""
    view = QTableView()
    if name:
        view.setObjectName(name)
    view.setModel(model)
    view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QTableView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)   # the model's own order first
    view.setSortingEnabled(sortable)    # then a header click sorts (RecordsModel.sort; "all" stays last)
    return view


class TopRow(QHBoxLayout):
    """A page's title row: the title on the left; buttons and pickers added with `addWidget` go into a ButtonBar on
    the right, which wraps onto a second row rather than set the window's minimum width."""

    def __init__(self, title: str) -> None:
        super().__init__()
        head = QLabel(title)
        head.setObjectName("viewTitle")
        super().addWidget(head, 0, Qt.AlignmentFlag.AlignTop)
        self.bar = ButtonBar([], align_right=True)
        super().addWidget(self.bar, 1)

    def addWidget(self, widget: QWidget, *args: object) -> None:
        self.bar.add(widget)

    def addStretch(self, stretch: int | None = 0) -> None:  # the bar lines its widgets up on the right already
        pass


class FlowLayout(QLayout):
    """Widgets left to right, wrapping onto the next line when the width runs out (Qt's flow layout example);
    with `align_right` each line sits on the right. Its height follows its width (heightForWidth)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 6, align_right: bool = False) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.align_right = align_right
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        width = sum(i.sizeHint().width() + self._spacing for i in self._items if not i.isEmpty())
        height = max((i.sizeHint().height() for i in self._items if not i.isEmpty()), default=0)
        return QSize(width, height)

    def minimumSize(self) -> QSize:  # noqa: N802
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, move: bool) -> int:
        lines: list[list[tuple[QLayoutItem, QSize]]] = [[]]
        used = 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if lines[-1] and used + self._spacing + hint.width() > rect.width():
                lines.append([])
                used = 0
            used += (self._spacing if lines[-1] else 0) + hint.width()
            lines[-1].append((item, hint))
        y = rect.y()
        for line in lines:
            if not line:
                continue
            height = max(h.height() for _, h in line)
            width = sum(h.width() for _, h in line) + self._spacing * (len(line) - 1)
            x = rect.x() + (max(0, rect.width() - width) if self.align_right else 0)
            for item, hint in line:
                if move:
                    item.setGeometry(QRect(QPoint(x, y + (height - hint.height()) // 2),
                                           QSize(min(hint.width(), rect.width()), hint.height())))
                x += hint.width() + self._spacing
            y += height + self._spacing
        return max(0, y - self._spacing - rect.y())


class ButtonBar(QWidget):
    """A row of buttons and pickers that fits any window width: what does not fit wraps onto another row, in
    view and working (was a toolbar whose » overflow button Qt disabled for widgets: the controls past it could
    not be reached at all)."""

    def __init__(self, widgets: list[QWidget], parent: QWidget | None = None, align_right: bool = False) -> None:
        super().__init__(parent)
        self.flow = FlowLayout(self, align_right=align_right)
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        for w in widgets:
            self.add(w)

    def add(self, widget: QWidget) -> None:
        self.flow.addWidget(widget)

    def set_shown(self, widget: QWidget, shown: bool) -> None:
        """Show or hide one of the bar's widgets."""
        widget.setVisible(shown)


class TextDialog(QDialog):
    """Read-only text (monospace, never interpreted as markup), an optional chart above it, and a Close button."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None, png: bytes | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        fit_dialog(self, 900, 720 if png else 560)
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
