"""Small building blocks every page uses: the page frame (margins, a title row) and a records table."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QTableView, QVBoxLayout, QWidget

from rageval_desktop.gui.models.records_model import RecordsModel


def page_frame(widget: QWidget, title: str) -> tuple[QVBoxLayout, QHBoxLayout]:
    """(the page's layout, its title row with a stretch after the title, for buttons on the right)."""
    layout = QVBoxLayout(widget)
    layout.setContentsMargins(12, 10, 6, 6)
    top = QHBoxLayout()
    head = QLabel(title)
    head.setObjectName("viewTitle")
    top.addWidget(head)
    top.addStretch(1)
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
    return view
