"""A table model over a short list of dicts (judges, jobs): lists that fit on one screen, read in one query."""

from __future__ import annotations

from typing import Any, TypeAlias

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from rageval_desktop.gui.appearance import is_dark, verdict_colours

_Index = QModelIndex | QPersistentModelIndex
# ≥ 4.5:1 on the table's base in each theme (WCAG AA; tests/gui/test_contrast.py measures the pages)
# a list of records as core reads them (jobs, samples: one dict a row), as a page's read hands it to its table
Records: TypeAlias = list[dict[str, Any]]

STATUS_COLOURS = {"retired": "#5f6368", "failed": "#b3261e", "interrupted": "#a14f00", "cancelled": "#a14f00",
                  "running": "#1967d2", "done": "#1e7043", "active": "#1e7043"}
STATUS_COLOURS_DARK = {"retired": "#9aa0a6", "failed": "#f28b82", "interrupted": "#fdd663", "cancelled": "#fdd663",
                       "running": "#8ab4f8", "done": "#81c995", "active": "#81c995"}


class RecordsModel(QAbstractTableModel):
    def __init__(self, columns: list[tuple[str, str]], parent: Any = None, scored: set[str] | None = None,
                 deltas: set[str] | None = None, heat: bool = False) -> None:
        super().__init__(parent)
        self.columns = columns          # (key, header)
        self.records: list[dict[str, Any]] = []
        self.scored = scored or set()   # 0-100 columns: cells tinted by value
        self.deltas = deltas or set()   # signed differences: red below zero, green above
        self.heat = heat                # counts tinted by their share of the largest (a confusion heatmap)
        self.header_tips: dict[str, str] = {}   # column key -> what the column means

    def set_records(self, records: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        first = self.columns[0][0] if self.columns else ""
        self.records = ([r for r in records if r.get(first) in self.PINNED]
                        + [r for r in records if r.get(first) not in self.PINNED])
        if self._sort is not None:
            self._sorted(*self._sort)
        self.endResetModel()

    _sort: tuple[int, bool] | None = None
    PINNED = ("all",)   # a summary row ("all") stays first whatever the sort: in view above the fold at 720 px

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Click a header: sort by that column (numbers as numbers, empty values last; "all" stays first)."""
        if not 0 <= column < len(self.columns):
            return
        self.layoutAboutToBeChanged.emit()
        self._sort = (column, order == Qt.SortOrder.DescendingOrder)
        self._sorted(*self._sort)
        self.layoutChanged.emit()

    def _sorted(self, column: int, descending: bool) -> None:
        key = self.columns[column][0]
        pinned = [r for r in self.records if r.get(self.columns[0][0]) in self.PINNED]
        rest = [r for r in self.records if r.get(self.columns[0][0]) not in self.PINNED]
        present = [r for r in rest if r.get(key) is not None]
        empty = [r for r in rest if r.get(key) is None]

        def value(r: dict[str, Any]) -> tuple[int, Any]:
            v = r.get(key)
            return (0, v) if isinstance(v, (int, float)) else (1, str(v).casefold())

        present.sort(key=value, reverse=descending)
        self.records[:] = pinned + present + empty

    def record(self, row: int) -> dict[str, Any]:
        return self.records[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns[section][1]
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return self.header_tips.get(self.columns[section][0])
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        key = self.columns[index.column()][0]
        value = self.records[index.row()].get(key)
        record = self.records[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if f"{key}__text" in record:           # what the cell says, when more than its sortable value
                return record[f"{key}__text"]
            if value is None:
                return "—" if key in self.scored or key in self.deltas else ""
            if isinstance(value, float):
                if key in self.deltas:
                    return f"{value:+.1f}"
                small = 0 < abs(value) < 0.01 and key not in self.scored  # costs per query
                return f"{value:.5f}" if small else f"{value:.1f}"
            return str(value)
        if role == Qt.ItemDataRole.BackgroundRole and key in self.scored and isinstance(value, (int, float)):
            return score_colour(float(value))
        if role == Qt.ItemDataRole.BackgroundRole and self.heat and isinstance(value, int) and value > 0:
            top = max((v for r in self.records for v in r.values() if isinstance(v, int)), default=1) or 1
            share = value / top
            return QColor(round(255 - 85 * share), round(255 - 50 * share), 255)
        tinted = (key in self.scored and isinstance(value, (int, float))) or (self.heat and isinstance(value, int)
                                                                          and value > 0)
        if role == Qt.ItemDataRole.ForegroundRole and tinted:
            return QColor("#202124")  # dark text on the pastel tint, in light and dark themes alike
        if role == Qt.ItemDataRole.ForegroundRole and key in self.deltas and isinstance(value, (int, float)):
            if record.get(f"{key}__noise"):        # its CI includes 0: no colour says better or worse
                return None
            worse, better = verdict_colours()
            return QColor(worse) if value < 0 else QColor(better) if value > 0 else None
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, (int, float)):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and key == "status" and value in STATUS_COLOURS:
            return QColor((STATUS_COLOURS_DARK if is_dark() else STATUS_COLOURS)[value])
        if role == Qt.ItemDataRole.ToolTipRole and value is not None:
            return self.records[index.row()].get(f"{key}__tip") or str(value)
        return None


def score_colour(value: float) -> QColor:
    """A quiet red -> amber -> green tint for a 0-100 score (readable with dark text)."""
    v = max(0.0, min(100.0, value)) / 100.0
    red, amber, green = (252, 232, 230), (254, 243, 214), (230, 244, 234)
    a, b, t = (red, amber, v * 2) if v < 0.5 else (amber, green, (v - 0.5) * 2)
    return QColor(*(round(x + (y - x) * t) for x, y in zip(a, b, strict=True)))
