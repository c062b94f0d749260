"""A QAbstractTableModel over a core TableSource: holds ids only and fetches visible rows in pages.

The ids come in one of two ways. In the window they are read on the read lane, off the GUI thread (`ids` given, and
`reader` for sorts): a sort or filter over 200k rows costs the GUI thread nothing, and the old order stays painted
until the new one is ready (the newest request wins). Without a reader (headless uses, tests of the SQL) the first
screens' worth is read at once and the rest in chunks on later turns of the event loop (Qt's
canFetchMore/fetchMore), from one cursor over the id query. `loaded` says when every id is known (the row count is
final); `sorted_to` when a sort asked of the read lane has arrived."""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor

from rageval_desktop.core.store.browse import TableSource
from rageval_desktop.gui.appearance import verdict_colours

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project

PAGE = 200
MAX_PAGES = 50          # ~10k rows cached; memory stays flat however far one scrolls
FIRST_IDS = 2000        # ids read before the first paint (a few screens)
ID_CHUNK = 50_000       # ids read per later turn of the event loop
PREVIEW_CHARS = 300     # table cells show a one-line preview; the detail pane shows all

_Index = QModelIndex | QPersistentModelIndex


# reader(fn, on_done): runs fn(ctx) off the GUI thread and calls on_done(result) on it, unless a newer read of the
# same table came since (the window's read lane)
Reader = Callable[[Callable[[Any], Any], Callable[[Any], None]], None]


class LazyTableModel(QAbstractTableModel):
    loaded = Signal(int)    # every id is known: how many
    sorted_to = Signal(object)   # a sort read off the GUI thread is shown: its (column, descending)

    def __init__(self, project: Project, source: TableSource, parent: Any = None,
                 order: tuple[int, bool] | None = None, *, ids: list[Any] | None = None,
                 reader: Reader | None = None) -> None:
        super().__init__(parent)
        self.project, self.source, self.order, self.reader = project, source, order, reader
        self._ids: list[Any] = []
        self._cursor: Any = None
        self._pages: OrderedDict[int, dict[Any, tuple]] = OrderedDict()
        self.pending: tuple[int, bool] | None = None     # a sort asked of the read lane, not yet shown
        if ids is not None:
            self._ids = list(ids)
        else:
            self._start_ids()

    # --- ids, a chunk at a time ----------------------------------------------------------------
    def _start_ids(self) -> None:
        self._cursor = self.source.id_cursor(self.project, self.order)
        self._ids = [r[0] for r in self._cursor.fetchmany(FIRST_IDS)]
        if len(self._ids) < FIRST_IDS:
            self._cursor = None
        else:
            QTimer.singleShot(0, self, self._fetch_rest)

    @property
    def complete(self) -> bool:
        return self._cursor is None

    def canFetchMore(self, parent: _Index = QModelIndex()) -> bool:  # noqa: B008, N802 - Qt's name
        return not parent.isValid() and self._cursor is not None

    def fetchMore(self, parent: _Index = QModelIndex()) -> None:  # noqa: B008, N802 - Qt's name
        if parent.isValid() or self._cursor is None:
            return
        try:
            more = [r[0] for r in self._cursor.fetchmany(ID_CHUNK)]
        except sqlite3.Error:   # the project was closed meanwhile: this listing is gone with it
            self._cursor = None
            return
        if more:
            self.beginInsertRows(QModelIndex(), len(self._ids), len(self._ids) + len(more) - 1)
            self._ids.extend(more)
            self.endInsertRows()
        if len(more) < ID_CHUNK:
            self._cursor = None
            self.loaded.emit(len(self._ids))

    def _fetch_rest(self) -> None:
        if self._cursor is not None:
            self.fetchMore()
        if self._cursor is not None:
            QTimer.singleShot(0, self, self._fetch_rest)

    def fetch_all(self) -> None:
        while self._cursor is not None:
            self.fetchMore()

    # --- Qt API --------------------------------------------------------------------------------
    @property
    def cached_pages(self) -> list[int]:
        """The page numbers held in memory (oldest first): a 20k-row table keeps a few, never all."""
        return list(self._pages)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.source.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if orientation == Qt.Orientation.Horizontal:
                return self.source.columns[section].header
            return section + 1
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            col = self.source.columns[section]
            return (col.tip + "\n" if col.tip else "") + "Click to sort; right-click to choose columns."
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort in SQL: one id query, then only the painted page is fetched. With a reader the query runs off the
        GUI thread and the old order stays painted until the new one arrives."""
        if not 0 <= column < len(self.source.columns) or not self.source.columns[column].sort:
            return
        wanted = (column, order == Qt.SortOrder.DescendingOrder)
        if self.reader is None:
            self.beginResetModel()
            self.order = wanted
            self._start_ids()
            self._pages.clear()
            self.endResetModel()
            return
        self.pending = wanted
        project, source = self.project, self.source
        self.reader(lambda ctx: source.ids(project, wanted), lambda ids: self._sorted(wanted, ids))

    def _sorted(self, order: tuple[int, bool], ids: list[Any]) -> None:
        self.beginResetModel()
        self.order, self._ids, self._cursor, self.pending = order, ids, None, None
        self._pages.clear()
        self.endResetModel()
        self.sorted_to.emit(order)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        col = self.source.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(self.row_values(index.row())[index.column()], col.kind)
        if role == Qt.ItemDataRole.ToolTipRole and col.kind == "text":
            value = self.row_values(index.row())[index.column()]
            return None if value is None else str(value)[:1000]
        if role == Qt.ItemDataRole.TextAlignmentRole and col.kind in ("number", "score", "money", "ms", "count"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and col.header == "gold@5":
            value = self.row_values(index.row())[index.column()]
            worse, better = verdict_colours()
            return QColor(better) if value == "yes" else QColor(worse) if value == "no" else None
        return None

    # --- ours ----------------------------------------------------------------------------------
    def row_id(self, row: int) -> Any:
        return self._ids[row]

    def row_of(self, row_id: Any) -> int:
        try:
            return self._ids.index(row_id)
        except ValueError:
            if self._cursor is None:
                return -1
        self.fetch_all()
        return self.row_of(row_id)

    def row_values(self, row: int) -> tuple:
        page_no = row // PAGE
        page = self._pages.get(page_no)
        if page is None:
            ids = self._ids[page_no * PAGE:(page_no + 1) * PAGE]
            page = self.source.page(self.project, ids)
            self._pages[page_no] = page
            while len(self._pages) > MAX_PAGES:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end(page_no)
        return page.get(self._ids[row]) or (None,) * len(self.source.columns)

    @staticmethod
    def _display(value: Any, kind: str) -> str:
        if value is None:
            return ""
        if kind == "ms":
            return f"{value:,.0f} ms"
        if kind == "money":
            return f"${value:.5f}"
        if kind == "score":
            return f"{value:.3g}"
        if isinstance(value, str):
            text = value[:PREVIEW_CHARS]
            return " ".join(text.split())
        return str(value)
