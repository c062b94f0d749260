"""The navigation list: the golden set, the runs, then each page (gui/pages.py) under its section, with counts. It
is given values (the project's counts and runs), never reads the project; each item's key is ("golden", None),
("run", (run_id, name)) or (page key, None)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from rageval_desktop.gui import pages as page_list

# what an item of the list stands for: ("golden", None), ("run", (run id, name)) or (a page's key, None)
NavKey = tuple[str, tuple[int, str] | None]

KEY = Qt.ItemDataRole.UserRole


class NavList(QListWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("nav")
        self.setFixedWidth(210)

    def fill(self, info: dict[str, Any], runs: list[tuple[int, str, int]]) -> None:
        """The items for a project (`info`: queries.project_info; `runs`: browse.list_runs), keeping the one chosen
        (else the golden set). Quietly: the current-item signal does not fire — the caller shows the page chosen."""
        item = self.currentItem()
        keep = item.data(KEY) if item else ("golden", None)
        self.blockSignals(True)
        try:
            self.clear()
            self._item(f"Golden set  ({info['golden_rows']})", ("golden", None))
            self._header("RUNS")
            for run_id, name, rows in runs:
                self._item(f"{name}  ({rows:,})", ("run", (run_id, name)))
            section = None
            for spec in page_list.PAGES:
                if spec.section != section:
                    section = spec.section
                    self._header(section)
                count = f"  ({info[spec.counted]})" if spec.counted else ""
                self._item(spec.title + count, (spec.key, None))
            keys = [self.item(i).data(KEY) for i in range(self.count())]
            self.setCurrentRow(keys.index(keep) if keep in keys else 0)
        finally:
            self.blockSignals(False)

    def current_key(self) -> NavKey | None:
        item = self.currentItem()
        key: NavKey | None = item.data(KEY) if item is not None else None     # (a key set by this list)
        return key

    def select_key(self, kind: str) -> None:
        """The first item of that kind (a page's key, "golden")."""
        for i in range(self.count()):
            key = self.item(i).data(KEY)
            if key and key[0] == kind:
                self.setCurrentRow(i)
                return

    def select_run(self, name: str) -> None:
        for i in range(self.count()):
            key = self.item(i).data(KEY)
            if key and key[0] == "run" and key[1][1] == name:
                self.setCurrentRow(i)

    def _item(self, text: str, key: NavKey) -> None:
        item = QListWidgetItem(text)
        item.setData(KEY, key)
        self.addItem(item)

    def _header(self, text: str) -> None:
        header = QListWidgetItem(text)
        header.setFlags(Qt.ItemFlag.NoItemFlags)
        header.setData(KEY, None)
        self.addItem(header)
