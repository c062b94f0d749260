"""The rows page: the golden set or a run's rows as a table read in pages off the GUI thread, with its filters
(the triage bar), its slice, the golden set's tools, and the detail pane of the row chosen.

It was part of the main window (issue 48: "the window is a frame"); it asks the window only what `RowsHost` says —
the project, the lanes, which table the navigation chose, and the golden-set actions — and tells it how many rows it
lists (`counted`, for the status bar) and when a listing is shown (`shown`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from PySide6 import QtCore
from PySide6.QtCore import QModelIndex, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.gui.prefs import settings
from rageval_desktop.gui.views.detail_pane import DetailPane
from rageval_desktop.gui.views.golden_tools import GoldenBar, GoldenBarActions, GoldenBarHost
from rageval_desktop.gui.views.triage_bar import ColumnChooser

if TYPE_CHECKING:
    from rageval_desktop.core.review.licence import Licence
    from rageval_desktop.core.store import browse
    from rageval_desktop.core.store.changes import Changes
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.core.store.queries import RowDetail
    from rageval_desktop.gui.models.lazy_table import Listing, RowsPage
    from rageval_desktop.gui.state import AppState, Page
    from rageval_desktop.gui.views.command_palette import Command
    from rageval_desktop.gui.views.nav_list import NavKey
    from rageval_desktop.gui.views.triage_bar import TriageBar

ROW_HEIGHT = 24
DETAIL_WIDTH = 380      # the detail pane's default width (px): a passage line reads without wrapping every few words


def _pop_up(box: QComboBox) -> None:
    box.setFocus()
    box.showPopup()


P = TypeVar("P", bound="Page")
T = TypeVar("T")


class RowsHost(GoldenBarHost, Protocol):
    """What the rows page asks of the window it sits in."""

    state: AppState
    pages: QStackedWidget

    def run_task(self, label: str, fn: Callable[..., T], *args: object,
                 on_done: Callable[[T], object] | None = None) -> object: ...
    def show_error(self, message: str, details: str = "") -> None: ...
    def select_nav(self, key: str) -> None: ...
    def view(self, cls: type[P]) -> P: ...
    def run_names(self) -> list[str]: ...
    def current_key(self) -> NavKey | None: ...
    def show_current(self) -> None: ...



ROW_DETAIL = "row detail"    # the read lane of the table's selected row


def _row_detail(project: Project, row_id: int | str, golden: bool, selective: dict[str, Licence],
                ctx: object = None) -> tuple[RowDetail, dict[str, str]]:
    """A worker: a golden or run row's detail, and for a run row what each selectively licensed judge does with it."""
    from rageval_desktop.core.review.licence import row_calls
    from rageval_desktop.core.store import queries

    if golden:
        return queries.golden_row_detail(project, str(row_id)), {}
    run_row = int(row_id)
    return queries.run_row_detail(project, run_row), row_calls(project, run_row, selective) if selective else {}


class RowsView(QSplitter):
    shown = Signal(int)      # a listing of the table is shown (how many rows)
    counted = Signal(str)    # what the status bar says of the table ("72 rows", "listing…", "")
    row_shown = Signal(object)   # the detail pane shows this row (its id: a run row's number, a golden row's id)

    def __init__(self, host: RowsHost, golden: GoldenBarActions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.golden = golden
        self.slice_box = QComboBox()
        self.slice_box.setObjectName("sliceBox")
        self.slice_box.currentIndexChanged.connect(self._on_slice)
        self.view_title = QLabel()
        self.view_title.setObjectName("viewTitle")
        slice_label = QLabel("S&lice:")
        slice_label.setBuddy(self.slice_box)
        top = QHBoxLayout()
        top.addWidget(self.view_title)
        top.addStretch(1)
        top.addWidget(slice_label)
        top.addWidget(self.slice_box)

        self.table = QTableView()
        self.table.setObjectName("rows")
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(QtCore.Qt.TextElideMode.ElideRight)
        vh = self.table.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # never ResizeToContents (72 s at 100k rows)
        vh.setDefaultSectionSize(ROW_HEIGHT)
        vh.setMinimumWidth(44)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setTextElideMode(QtCore.Qt.TextElideMode.ElideMiddle)   # a long judge name keeps both ends
        header.setHighlightSections(False)
        header.setSectionsClickable(True)        # click a header: sort in SQL (LazyTableModel.sort)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(-1, QtCore.Qt.SortOrder.AscendingOrder)
        header.sortIndicatorChanged.connect(self._on_sort)
        self.columns = ColumnChooser(self.table)
        self._orders: dict[str, tuple[int, bool]] = {}   # table key -> the sort the user chose
        self._keep_row: Any = None       # the row the user was on when a sort was asked (selected again after)
        self._select_after: Any = None   # a row to select when the listing being read arrives (show_row)
        self.rows_pending = False        # a listing of the table (filter, sort) is being read
        self._failing: dict[tuple[str, int, str], list[int]] = {}   # (project, run id, class) -> rows, until a change
        self._selective: dict[str, Licence] = {}   # judges holding a selective licence (licence.selective_held)

        center = QWidget()
        cl = QVBoxLayout(center)
        cl.setContentsMargins(12, 10, 6, 6)
        cl.addLayout(top)
        self.golden_bar = GoldenBar(golden, host, center)
        self.golden_bar.setVisible(False)
        cl.addWidget(self.golden_bar)
        self._center = cl
        self._triage: TriageBar | None = None   # the filter row is built when a table is first shown
        self.promote_button = QPushButton("Add to &golden set…")
        self.promote_button.setToolTip("A failing row becomes a draft golden row (source: production failure)")
        self.promote_button.clicked.connect(golden.promote_current_row)
        self.promote_button.setVisible(False)
        top.addWidget(self.promote_button)
        cl.addWidget(self.table)
        self.detail = DetailPane()
        self.raw_toggle = QCheckBox("Show raw judge &outputs")
        self.raw_toggle.toggled.connect(self.detail.set_show_raw)
        detail_box = QWidget()
        dl = QVBoxLayout(detail_box)
        dl.setContentsMargins(0, 6, 0, 0)
        dl.addWidget(self.raw_toggle)
        dl.addWidget(self.detail)
        self.addWidget(center)
        self.addWidget(detail_box)
        self.setStretchFactor(0, 1)   # a wider window widens the table; the detail pane keeps its width
        self.setStretchFactor(1, 0)
        self._detail_width_set = False
        self.splitterMoved.connect(lambda *_: settings().setValue("detail_width", self.sizes()[1]))

    # --- what the window asks ---------------------------------------------------------------------------------------
    def showing(self) -> bool:
        """This page is the one the window shows."""
        return self.host.pages.currentWidget() is self

    def relist(self) -> None:
        """The table the navigation chose, listed again under the filters and the sort (read off the GUI thread)."""
        self.show_key(self.host.current_key())

    def show_key(self, key: NavKey | None) -> None:
        """Show the golden set or a run (`key` from the navigation): its filter row, then its listing when read."""
        from rageval_desktop.core.metrics import triage
        from rageval_desktop.gui.models.lazy_table import read_listing

        QTimer.singleShot(0, self.restore_detail_width)   # after the page is laid out
        project = self.host.project
        if project is None or key is None:
            return
        kind = "golden" if key[0] == "golden" else "run"
        if kind != self.triage.kind or kind == "run":
            judges = [] if kind == "golden" else [
                (name, *triage.scale_of(metric)) for _, name, metric in triage.run_columns(project)[0]]
            self.triage.set_kind(kind, judges)
        source = self.current_source()
        if source is None:
            return
        order = self._orders.get(kind)
        order = order if order and order[0] < len(source.columns) else None
        self.counted.emit("listing…")     # the count comes with the listing
        # the ids under these filters and this sort are read off the GUI thread; what is shown stays until they come
        self._read_rows(lambda ctx: read_listing(project, source, order),
                        lambda listing: self._show_rows(kind, source, order, listing))

    def show_row(self, row_id: int) -> None:
        """Select a row of the listing shown, or of the one being read (when it arrives)."""
        from rageval_desktop.gui.models.lazy_table import LazyTableModel

        self._select_after = row_id          # when the run's listing arrives (it is read off the GUI thread)
        model = self.table.model()
        if not self.rows_pending and isinstance(model, LazyTableModel) and self.showing():
            self._select_after = None
            row = model.row_of(row_id)
            if row >= 0:
                self.table.selectRow(row)
                self.table.scrollTo(model.index(row, 0))

    def clear_rows(self) -> None:
        """The project closed: no table, no detail."""
        self.table.setModel(None)
        self.detail.show_detail(None)

    def changed(self, changes: Changes) -> None:
        """A committed write: failure classes follow the gold ids, the runs and the judges' verdicts; the detail its
        row's judgments and ratings; the selective licences the audits, ratings and settings."""
        from rageval_desktop.core.store.changes import Area

        if changes.touches(Area.GOLDEN, Area.RUNS, Area.JUDGES, Area.JUDGMENTS):
            self._failing.clear()
        if not changes.touches(Area.GOLDEN, Area.RUNS, Area.CORPUS, Area.JUDGES) and \
                changes.touches(Area.JUDGMENTS, Area.JOBS, Area.RATINGS) and self.showing():
            self.on_row(self.table.currentIndex())
        if changes.touches(Area.JUDGES, Area.RATINGS, Area.AUDIT, Area.SETTINGS, Area.REVIEW):
            self.read_selective()

    def _on_slice(self, *_: Any) -> None:
        self.host.state.current_slice = self.slice_box.currentData()
        self.host.show_current()

    def choose_slice(self) -> None:
        self.slice_box.setFocus()
        self.slice_box.showPopup()

    def focus_search(self) -> None:
        self.triage.search.setFocus()
        self.triage.search.selectAll()

    def palette_commands(self, show: Callable[[], None], search: Callable[[], None]) -> list[Command]:
        """The run table's filters by name (Ctrl+K): each shows the rows page (`show`), then presses the button,
        toggles the box or opens the list."""
        from rageval_desktop.gui.views.command_palette import Command

        bar = self.triage

        def on_rows(then: Callable[[], Any]) -> Callable[[], None]:
            def run() -> None:
                show()
                then()
            return run

        out = [Command(f"Run table › {b.text().replace('&', '').rstrip('.…')}", "", on_rows(b.click))
               for b in (bar.clear_button, bar.columns_button, bar.review_button)]
        out.append(Command("Run table › Disagreements (show only rows where judges or humans disagree)", "",
                           on_rows(bar.disagree.toggle)))
        for name, box in (("status", bar.status), ("failure class", bar.failure), ("judge score", bar.judge),
                          ("human rating", bar.human)):
            out.append(Command(f"Run table › Filter by {name}…", "", on_rows(functools.partial(_pop_up, box))))
        out.append(Command("Run table › Search rows", "Ctrl+F", search))
        return out

    def current_source(self) -> browse.TableSource | None:
        from rageval_desktop.core.metrics import triage

        key = self.host.current_key()
        if key is None or key[0] not in ("golden", "run"):
            return None
        kind, arg = key
        project = self.host.project
        if project is None or (kind == "run" and arg is None):
            return None
        if arg is not None:
            self.host.state.current_run = arg[1]
        filters = self.triage.filters(self.slice_box.currentData())
        if kind == "golden" or arg is None:
            return triage.golden_source(filters)
        run_id, run = arg
        failing = self._failing.get((str(project.path), run_id, filters.failure)) if filters.failure else None
        if filters.failure and failing is None:
            self._classify(run_id, run, filters.failure)   # in a worker; the listing follows when it is done
            return None
        return triage.run_source(project, run_id, run, filters, failing)

    def _classify(self, run_id: int, run: str, failure: str) -> None:
        """A failure-class filter: classify the run's rows on a worker (seconds at 200k rows), then list them."""
        from rageval_desktop.core.metrics import triage

        self.counted.emit(f"finding {failure} failures…")
        project = self.host.project
        if project is None:
            return
        key = (str(project.path), run_id, failure)

        def done(ids: list[int]) -> None:
            self._failing[key] = ids
            self.relist()

        self.host.run_read("failure classes", lambda ctx: triage.failing_ids(project, run, failure), on_done=done)

    def _show_rows(self, kind: str, source: Any, order: tuple[int, bool] | None, listing: Listing) -> None:
        from rageval_desktop.gui.models.lazy_table import LazyTableModel

        if self.host.project is None:
            return
        model = LazyTableModel(self.host.project, source, self.table, order, listing=listing, reader=self._read_rows,
                               page_reader=self._read_page)
        model.sorted_to.connect(lambda _order, model=model: self._reselect(model))
        old: Any = self.table.model()
        # the same table shown again (after saving a version, an edit, an import): keep the row the user was on
        same = isinstance(old, LazyTableModel) and old.source.key == source.key
        keep_id = old.row_id(self.table.currentIndex().row()) if same and self.table.currentIndex().isValid() else None
        self.table.setModel(model)
        if old is not None:
            old.deleteLater()
        for col, spec in enumerate(source.columns):
            self.table.setColumnWidth(col, spec.width)
        header = self.table.horizontalHeader()
        header.blockSignals(True)
        sort = QtCore.Qt.SortOrder
        header.setSortIndicator(*(model.order[0], sort.DescendingOrder if model.order[1] else sort.AscendingOrder)
                                if model.order else (-1, sort.AscendingOrder))
        header.blockSignals(False)
        self.columns.apply(kind)
        self.table.selectionModel().currentRowChanged.connect(self.on_row)
        self.view_title.setText(source.title)
        filtered = self.triage.filters(None).active
        n = model.rowCount()
        self.triage.show_count(n, filtered)
        if self.showing():     # another page may have been chosen meanwhile
            self.counted.emit(f"{n:,} rows" + (" (filtered)" if filtered else ""))
        is_golden = source.key.startswith("golden")
        self.golden_bar.setVisible(is_golden)
        self.promote_button.setVisible(not is_golden)
        if is_golden:
            self.golden_bar.refresh()
        self.detail.show_detail(None)
        if self._select_after is not None:
            keep_id, self._select_after = self._select_after, None
        if n:
            row = max(model.row_of(keep_id), 0) if keep_id is not None else 0
            self.table.selectRow(row)
            self.table.scrollTo(model.index(row, 0))
        self.shown.emit(n)

    @property
    def triage(self) -> TriageBar:
        """The filter row above the tables, built on first use (the first window shows sooner)."""
        if self._triage is None:
            from rageval_desktop.gui.views.triage_bar import TriageBar

            bar = TriageBar(self)
            bar.changed.connect(self.relist)
            button = bar.columns_button
            button.clicked.connect(lambda: self.columns.menu().exec(button.mapToGlobal(button.rect().bottomLeft())))
            bar.review_button.clicked.connect(self.review_listed)
            self._center.insertWidget(self._center.indexOf(self.golden_bar) + 1, bar)
            self._triage = bar
        return self._triage

    def restore_detail_width(self) -> None:
        """Once laid out: the detail pane at the width the user last chose; by default DETAIL_WIDTH, or 38% of the page
        on a narrow window (at 1024 px the judges' scores stay beside the id, not past the table's edge)."""
        total = sum(self.sizes())
        if self._detail_width_set or total < 500 or not self.isVisible():
            return
        self._detail_width_set = True
        chosen = settings().value("detail_width")
        width = int(str(chosen)) if chosen else min(DETAIL_WIDTH, int(total * 0.38))
        width = max(160, min(width, total - 300))
        self.setSizes([total - width, width])

    def _on_sort(self, column: int, order: QtCore.Qt.SortOrder) -> None:
        """A header click: the model re-lists its ids in SQL on the read lane (the old order stays painted until the
        new one arrives); the row the user was on stays selected."""
        from rageval_desktop.gui.models.lazy_table import LazyTableModel

        model = self.table.model()
        if not isinstance(model, LazyTableModel) or column < 0:
            return
        current = self.table.currentIndex()
        keep = model.row_id(current.row()) if current.isValid() else None
        wanted = (column, order == QtCore.Qt.SortOrder.DescendingOrder)
        if model.source.columns[column].sort:
            self._orders["golden" if model.source.key.startswith("golden") else "run"] = wanted
        self._keep_row = keep
        model.sort(column, order)

    def _reselect(self, model: Any) -> None:     # a LazyTableModel
        """After a sort arrived: the row the user was on, where it is now."""
        keep, self._keep_row = self._keep_row, None
        if id(self.table.model()) != id(model):      # (another listing replaced it meanwhile)
            return
        if keep is not None and (row := int(model.row_of(keep))) >= 0:
            self.table.selectRow(row)
            self.table.scrollTo(model.index(row, 0))

    def _read_rows(self, fn: Callable[[object], Listing], on_done: Callable[[Listing], object]) -> None:
        """The run table's reads (its ids under a filter or a sort): the read lane, the newest request wins."""
        self.rows_pending = True      # cleared when the newest read lands, or fails (read_finished)
        self.host.run_read("rows", fn, on_done=on_done)

    def _read_page(self, page_no: int, fn: Callable[[object], RowsPage | None],
                   on_done: Callable[[RowsPage | None], object]) -> None:
        """A page of the table's rows, scrolled to: the read lane, a page's read its own (no page drops another)."""
        self.host.run_read(f"rows page {page_no}", fn, on_done=on_done, announce=False)

    def review_listed(self) -> None:
        """"Review these": the rows listed now (filters and sort as shown) become a review sample."""
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.metrics import triage
        from rageval_desktop.core.review.sampling import MAX_CHOSEN, sample_of_rows
        from rageval_desktop.gui.models.lazy_table import LazyTableModel

        model = self.table.model()
        if not isinstance(model, LazyTableModel) or not model.source.key.startswith("run") or not model.rowCount():
            self.host.show_error("Nothing to review: list some rows of a run first.")
            return
        project, run = self.host.project, self.host.state.current_run
        if project is None or run is None:
            return
        metrics = triage.run_columns(project)[1] or triage.row_metrics()
        metric, ok = QInputDialog.getItem(self, "Review these rows",
                                          f"Rate the {min(model.rowCount(), MAX_CHOSEN):,} listed rows for:",
                                          metrics, 0, False)
        if not ok:
            return
        model.fetch_all()
        ids = [int(model.row_id(r)) for r in range(min(model.rowCount(), MAX_CHOSEN))]     # a run's rows
        what = triage.describe(self.triage.filters(self.slice_box.currentData()))

        def show(sample: Any) -> None:
            self.host.select_nav("review")
            from rageval_desktop.gui.views.review_view import ReviewView

            self.host.view(ReviewView).select_sample(sample.id)

        self.host.run_task("Making a review sample",
                           lambda ctx: sample_of_rows(project, run, metric, ids, reason=what), on_done=show)

    def on_row(self, current: QModelIndex, _previous: QModelIndex | None = None) -> None:
        """The selected row's detail, read on the read lane (`ROW_DETAIL`: a newer selection's read wins)."""
        model: Any = self.table.model()
        if self.host.project is None or model is None or not current.isValid():
            return
        row_id = model.row_id(current.row())

        def show(found: tuple[RowDetail, dict[str, str]]) -> None:
            self.detail.show_detail(found[0], calls=found[1])
            self.row_shown.emit(row_id)

        self.host.run_read(ROW_DETAIL, _row_detail, self.host.project, row_id, model.source.key.startswith("golden"),
                           self._selective, on_done=show, announce=False)     # no page waits for it

    @property
    def selective(self) -> dict[str, Licence]:
        """The judges holding a selective licence, as last read (by name)."""
        return self._selective

    def read_selective(self) -> None:
        """The judges holding a selective licence (an agreement each: on the read lane), so that the detail pane says
        of each row whether such a judge decides it or leaves it to people."""
        from rageval_desktop.core.review.licence import selective_held

        def arrived(held: dict[str, Any]) -> None:
            self._selective = held
            if self.showing():
                self.on_row(self.table.currentIndex())

        self._selective = {}
        if self.host.project is not None:
            self.host.run_read("selective licences", lambda project, ctx=None: selective_held(project),
                               self.host.project, on_done=arrived, announce=False)      # no page waits for it

    def fill_slices(self) -> None:
        from rageval_desktop.core.store import browse

        assert self.host.project is not None
        keep = self.slice_box.currentData()
        self.slice_box.blockSignals(True)
        self.slice_box.clear()
        self.slice_box.addItem("All slices", None)
        for name in browse.list_slices(self.host.project):
            self.slice_box.addItem(name, name)
        index = self.slice_box.findData(keep)
        self.slice_box.setCurrentIndex(max(index, 0))
        self.slice_box.blockSignals(False)
