"""A page added by a test: one module (this one) and one line in the page list — nothing of the window changes."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout

from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui.state import AppState, Page


class RunsCountPage(Page):
    shows = frozenset({Area.RUNS})
    refresh_delay_ms = 0

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.label = QLabel()
        QVBoxLayout(self).addWidget(self.label)
        self.refreshes = 0

    def refresh(self, runs: list[str]) -> None:
        self.refreshes += 1
        self.label.setText(f"{len(runs)} runs; current: {self.state.current_run}")
