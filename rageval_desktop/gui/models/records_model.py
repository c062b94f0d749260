"""A table model over a short list of dicts (judges, jobs): lists that fit on one screen, read in one query."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

_Index = QModelIndex | QPersistentModelIndex
STATUS_COLOURS = {"retired": "#80868b", "failed": "#b3261e", "interrupted": "#b06000", "cancelled": "#b06000",
                  "running": "#1a73e8", "done": "#1f7a4d", "active": "#1f7a4d"}


class RecordsModel(QAbstractTableModel):
    def __init__(self, columns: list[tuple[str, str]], parent: Any = None) -> None:
        super().__init__(parent)
        self.columns = columns          # (key, header)
        self.records: list[dict[str, Any]] = []

    def set_records(self, records: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        self.records = records
        self.endResetModel()

    def record(self, row: int) -> dict[str, Any]:
        return self.records[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns[section][1]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        key = self.columns[index.column()][0]
        value = self.records[index.row()].get(key)
        if role == Qt.ItemDataRole.DisplayRole:
            return "" if value is None else str(value)
        if role == Qt.ItemDataRole.ForegroundRole and key == "status" and value in STATUS_COLOURS:
            return QColor(STATUS_COLOURS[value])
        if role == Qt.ItemDataRole.ToolTipRole and value is not None:
            return str(value)
        return None
