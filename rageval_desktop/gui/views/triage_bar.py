"""The filter row above the golden and run tables (LangSmith's habits): search, status, failure class, a judge's
score range, human rating, disagreements; a column chooser; "Review these" turns the listed rows into a sample.

The bar only collects values: `filters()` returns a core `Filters`, and the window builds the SQL listing from it
(`review.triage`). It never reads the project.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QHideEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QTableView,
    QWidget,
)

if TYPE_CHECKING:
    from rageval_desktop.core.metrics.triage import Filters
from rageval_desktop.gui.prefs import settings
from rageval_desktop.gui.views.common import ButtonBar

SEARCH_DELAY_MS = 250   # typing pauses this long before the listing is re-queried


class TriageBar(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        from rageval_desktop.core.metrics import triage  # with the first table, not the first window

        super().__init__(parent)
        self.kind = "run"
        self.scales: dict[str, tuple[float, float]] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        self.search = QLineEdit()
        self.search.setObjectName("tableSearch")
        self.search.setPlaceholderText("Search question and answer…  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(180)
        self.search.setFixedWidth(240)
        self.status = QComboBox()
        self.failure = QComboBox()
        self.failure.addItem("Outcome: any", None)
        for name in triage.FAILURES:
            self.failure.addItem("failing (any class)" if name == "any" else f"{name} failures", name)
        self.judge = QComboBox()
        self.low = _score_box("≥ ")
        self.high = _score_box("≤ ")
        self.low.setToolTip("The chosen judge's score at least this")
        self.high.setToolTip("The chosen judge's score at most this")
        self.human = QComboBox()
        self.human.addItem("Human: any", None)
        for key, tip in triage.HUMAN.items():
            self.human.addItem(f"Human: {key}", key)
            self.human.setItemData(self.human.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.disagree = QCheckBox("&Disagreements")
        self.disagree.setToolTip("Rows where judges disagree with each other or with a human about pass or fail")
        self.columns_button = QPushButton("Colu&mns…")
        self.columns_button.setToolTip("Choose the columns to show (also: right-click a column header)")
        self.review_button = QPushButton("Review t&hese…")
        self.review_button.setToolTip("Make a review sample of the rows listed now")
        self.clear_button = QPushButton("Clear &filters")
        self.clear_button.setToolTip("Clear every filter and the search (Ctrl+Shift+F)")
        self.count = QLabel()
        self.count.setObjectName("hint")
        # one flow, the search first: on a narrow pane the controls wrap onto a second row, all in view
        self.bar = ButtonBar([self.search, self.status, self.failure, self.judge, self.low, self.high, self.human,
                              self.disagree, self.clear_button, self.columns_button, self.review_button, self.count])
        layout.addWidget(self.bar, 1)
        self._timer = QTimer(self)
        self._timer.setObjectName("searchDelay")
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DELAY_MS)
        self._timer.timeout.connect(self.changed)
        self.search.textChanged.connect(lambda _t: self._timer.start())
        self.search.returnPressed.connect(self._now)
        for box in (self.status, self.failure, self.human):
            box.currentIndexChanged.connect(self._now)
        self.judge.currentIndexChanged.connect(self._judge_changed)
        for spin in (self.low, self.high):
            spin.valueChanged.connect(lambda _v: self._timer.start())
        self.disagree.toggled.connect(self._now)
        self.clear_button.clicked.connect(self.clear)
        self.set_kind("run", [])

    def hideEvent(self, event: QHideEvent) -> None:   # a closing window leaves no search pending
        self._timer.stop()
        super().hideEvent(event)

    def _now(self, *_: object) -> None:
        self._timer.stop()
        self.changed.emit()

    def _judge_changed(self, *_: object) -> None:
        name = self.judge.currentData()
        scale = self.scales.get(name) if name is not None else None
        for spin in (self.low, self.high):
            spin.setEnabled(scale is not None)
        if scale is not None:
            low, high = scale
            for spin in (self.low, self.high):
                spin.blockSignals(True)
                spin.setRange(low, high)
                spin.blockSignals(False)
            self.low.setValue(low)
            self.high.setValue(high)
        self._now()

    def set_kind(self, kind: str, judges: list[tuple[str, float, float]]) -> None:
        """Golden or run filters; `judges` = (name, low, high) of the run table's judge columns."""
        from rageval_desktop.core.metrics import triage  # with the first table, not the first window

        self.kind = kind
        run = kind == "run"
        widgets = [self.failure, self.judge, self.low, self.high, self.human, self.disagree, self.review_button]
        for w in widgets:
            self.bar.set_shown(w, run)
        self.search.setPlaceholderText("Search question and answer…  (Ctrl+F)" if run else
                                       "Search question, gold answer and id…  (Ctrl+F)")
        keep_status, keep_judge = self.status.currentData(), self.judge.currentData()
        for box in (self.status, self.judge):
            box.blockSignals(True)
            box.clear()
        self.status.addItem("Status: any", None)
        for name in (triage.RUN_STATUSES if run else triage.GOLDEN_STATUSES):
            self.status.addItem(name, name)
        self.judge.addItem("Judge score: any", None)
        # the item's data is the judge's name (a string compares equal when the list is rebuilt; a tuple did not,
        # and the choice snapped back to "Any judge score" on every listing); its scale is kept beside it
        self.scales = {name: (low, high) for name, low, high in judges}
        for name, _low, _high in judges:
            self.judge.addItem(f"{name} score", name)
        self.status.setCurrentIndex(max(self.status.findData(keep_status), 0))
        self.judge.setCurrentIndex(max(self.judge.findData(keep_judge), 0))
        for box in (self.status, self.judge):
            box.blockSignals(False)
        enabled = self.judge.currentData() is not None
        self.low.setEnabled(enabled)
        self.high.setEnabled(enabled)

    def filters(self, slice_tag: str | None) -> Filters:
        from rageval_desktop.core.metrics import triage  # with the first table, not the first window

        judge = self.judge.currentData() if self.kind == "run" else None
        run = self.kind == "run"
        return triage.Filters(search=self.search.text(), slice_tag=slice_tag, status=self.status.currentData(),
                       failure=self.failure.currentData() if run else None,
                       judge=judge,
                       score_min=self.low.value() if judge else None, score_max=self.high.value() if judge else None,
                       human=self.human.currentData() if run else None,
                       disagreements=run and self.disagree.isChecked())

    def clear(self) -> None:
        for w in (self.search, self.status, self.failure, self.judge, self.human, self.disagree):
            w.blockSignals(True)
        self.search.clear()
        for box in (self.status, self.failure, self.judge, self.human):
            box.setCurrentIndex(0)
        self.disagree.setChecked(False)
        for w in (self.search, self.status, self.failure, self.judge, self.human, self.disagree):
            w.blockSignals(False)
        self._judge_changed()

    def show_count(self, shown: int, active: bool) -> None:
        self.count.setText(f"{shown:,} listed" if active else "")


def _score_box(prefix: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setPrefix(prefix)
    box.setDecimals(2)
    box.setSingleStep(0.5)
    box.setEnabled(False)
    box.setKeyboardTracking(False)
    return box


class ColumnChooser:
    """Which columns a table shows, per table kind, remembered in the user's settings (by column name)."""

    def __init__(self, table: QTableView) -> None:

        self.table = table
        header = table.horizontalHeader()
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(lambda pos: self.menu().exec(header.mapToGlobal(pos)))
        self.kind = "run"

    def _key(self) -> str:
        return f"hidden_columns/{self.kind}"

    def hidden(self) -> set[str]:
        value = settings().value(self._key(), []) or []
        return {value} if isinstance(value, str) else {str(v) for v in value} if isinstance(value, list | tuple) \
            else set()

    def apply(self, kind: str) -> None:
        self.kind = kind
        model, hidden = self.table.model(), self.hidden()
        for col in range(model.columnCount()):
            self.table.setColumnHidden(col, model.headerData(col, Qt.Orientation.Horizontal) in hidden)

    def set_shown(self, name: str, shown: bool) -> None:
        hidden = self.hidden() - {name} if shown else self.hidden() | {name}
        settings().setValue(self._key(), sorted(hidden))
        self.apply(self.kind)

    def menu(self) -> QMenu:
        menu = QMenu(self.table)
        model = self.table.model()
        for col in range(model.columnCount() if model is not None else 0):
            name = model.headerData(col, Qt.Orientation.Horizontal)
            act = QAction(name, menu)
            act.setCheckable(True)
            act.setChecked(not self.table.isColumnHidden(col))
            act.setEnabled(col != 0)   # the id column stays: rows must stay identifiable
            act.toggled.connect(lambda on, n=name: self.set_shown(n, on))
            menu.addAction(act)
        return menu
