"""A QAbstractTableModel over a core TableSource: holds ids only and fetches visible rows in pages.

The ids come in one of two ways. In the window they are read on the read lane, off the GUI thread (`listing` given,
and `reader` for sorts), with the first page of rows: a sort or filter over 200k rows costs the GUI thread nothing,
and the old order stays painted until the new one is ready (the newest request wins). The pages scrolled to are read
on the read lane too (`page_reader`): a cell of a page not yet read paints empty until its page lands (issue 78: the
GUI thread read each page as it scrolled). Without readers (headless uses, tests of the SQL) the first screens' worth
is read at once and the rest in chunks on later turns of the event loop (Qt's canFetchMore/fetchMore), from one
cursor over the id query, and pages when asked. `loaded` says when every id is known (the row count is final);
`sorted_to` when a sort asked of the read lane has arrived; `pages_pending` whether pages asked are still out."""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
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
ASKED = 3               # pages asked of the read lane at once, at most: a fast scroll reads where it stops

_Index = QModelIndex | QPersistentModelIndex


Key = int | str                  # a row's id: a run row's number, a golden row's id
RowsPage = dict[Key, tuple]          # a page's rows by id


@dataclass(frozen=True)
class Listing:
    """A table's ids in order, and its first page's rows, read together on the read lane."""
    ids: list[Key]
    first: RowsPage


# reader(fn, on_done): runs fn(ctx) off the GUI thread and calls on_done(result) on it, unless a newer read of the
# same table came since (the window's read lane)
Reader = Callable[[Callable[[object], Listing], Callable[[Listing], object]], None]
# page_reader(page_no, fn, on_done): the same, a page at a time (a page's read never drops another's)
PageReader = Callable[[int, Callable[[object], RowsPage | None], Callable[[RowsPage | None], object]], None]


def read_listing(project: Project, source: TableSource, order: tuple[int, bool] | None) -> Listing:
    """In a worker: the ids under the source's filters and `order`, and the rows of the first page."""
    ids = source.ids(project, order)
    return Listing(ids, source.page(project, ids[:PAGE]))


class LazyTableModel(QAbstractTableModel):
    loaded = Signal(int)    # every id is known: how many
    sorted_to = Signal(object)   # a sort read off the GUI thread is shown: its (column, descending)

    def __init__(self, project: Project, source: TableSource, parent: Any = None,
                 order: tuple[int, bool] | None = None, *, listing: Listing | None = None,
                 reader: Reader | None = None, page_reader: PageReader | None = None) -> None:
        super().__init__(parent)
        self.project, self.source, self.order, self.reader = project, source, order, reader
        self.page_reader = page_reader
        self._ids: list[Key] = []
        self._cursor: Any = None
        self._pages: OrderedDict[int, RowsPage] = OrderedDict()
        self._asked: dict[int, None] = {}   # pages asked of the read lane, not yet landed, oldest first
        self._wanted: dict[int, None] = {}  # pages painted empty since the last ask
        self._listing = 0                   # which listing the pages belong to (a sort makes a new one)
        self.pending: tuple[int, bool] | None = None     # a sort asked of the read lane, not yet shown
        if listing is not None:
            self._ids = list(listing.ids)
            self._pages[0] = listing.first
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
        self.reader(lambda ctx: read_listing(project, source, wanted), lambda found: self._sorted(wanted, found))

    def _sorted(self, order: tuple[int, bool], listing: Listing) -> None:
        self.beginResetModel()
        self.order, self._ids, self._cursor, self.pending = order, list(listing.ids), None, None
        self._pages.clear()
        self._pages[0] = listing.first
        self._asked, self._wanted = {}, {}
        self._listing += 1
        self.endResetModel()
        self.sorted_to.emit(order)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        col = self.source.columns[index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole and col.kind in ("number", "score", "money", "ms", "count"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        tip = role == Qt.ItemDataRole.ToolTipRole and col.kind == "text"
        mark = role == Qt.ItemDataRole.ForegroundRole and col.header == "gold@5"
        if not (role == Qt.ItemDataRole.DisplayRole or tip or mark):
            return None
        values = self._painted(index.row())
        if values is None:              # its page is being read: empty until it lands
            return None
        value = values[index.column()]
        if tip:
            return None if value is None else str(value)[:1000]
        if mark:
            worse, better = verdict_colours()
            return QColor(better) if value == "yes" else QColor(worse) if value == "no" else None
        return self._display(value, col.kind)

    # --- ours ----------------------------------------------------------------------------------
    def row_id(self, row: int) -> Key:
        return self._ids[row]

    def row_of(self, row_id: Key) -> int:
        try:
            return self._ids.index(row_id)
        except ValueError:
            if self._cursor is None:
                return -1
        self.fetch_all()
        return self.row_of(row_id)

    @property
    def pages_pending(self) -> bool:
        return bool(self._asked or self._wanted)

    def row_values(self, row: int) -> tuple:
        """A row's values, its page read now if not held (headless uses and tests; painting asks `_painted`)."""
        page_no = row // PAGE
        page = self._pages.get(page_no)
        if page is None:
            page = self._keep(page_no, self.source.page(self.project, self._page_ids(page_no)))
        else:
            self._pages.move_to_end(page_no)
        return page.get(self._ids[row]) or (None,) * len(self.source.columns)

    def _painted(self, row: int) -> tuple | None:
        """A row's values for painting: its page when held; without a page reader, read now; else its page is asked
        of the read lane and None is painted until it lands (then its rows are painted again)."""
        page_no = row // PAGE
        if self.page_reader is None or page_no in self._pages:
            return self.row_values(row)
        if page_no not in self._asked and page_no not in self._wanted:
            self._wanted[page_no] = None      # asked on the next turn of the event loop: a paint's pages at once
            if len(self._wanted) == 1:
                QTimer.singleShot(0, self, self._ask)
        return None

    def _ask(self) -> None:
        """The pages the last paints wanted, asked of the read lane — the newest `ASKED` of them: a scroll's jumps
        in one turn of the event loop read only where it stopped; an ask not started when newer ones push it out
        reads nothing."""
        wanted, self._wanted = list(self._wanted)[-ASKED:], {}
        for page_no in wanted:
            if page_no not in self._pages and page_no not in self._asked:
                self._ask_page(page_no)

    def _ask_page(self, page_no: int) -> None:
        self._asked[page_no] = None
        while len(self._asked) > ASKED:
            del self._asked[next(iter(self._asked))]
        project, source, ids, listing, asked = self.project, self.source, self._page_ids(page_no), self._listing, \
            self._asked
        reader = self.page_reader
        assert reader is not None

        def read(ctx: object) -> RowsPage | None:
            return source.page(project, ids) if page_no in asked else None

        reader(page_no, read, lambda page: self._landed(listing, page_no, page))

    def _landed(self, listing: int, page_no: int, page: RowsPage | None) -> None:
        if listing != self._listing or page is None:   # a sort came since (the rows moved), or scrolled past
            return
        self._asked.pop(page_no, None)
        self._keep(page_no, page)
        first, last = page_no * PAGE, min((page_no + 1) * PAGE, len(self._ids)) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.source.columns) - 1))

    def _page_ids(self, page_no: int) -> list[Key]:
        return self._ids[page_no * PAGE:(page_no + 1) * PAGE]

    def _keep(self, page_no: int, page: RowsPage) -> RowsPage:
        self._pages[page_no] = page
        while len(self._pages) > MAX_PAGES:
            self._pages.popitem(last=False)
        return page

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
