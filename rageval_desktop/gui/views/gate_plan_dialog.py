"""Compare → Plan gate…: what each cell of the gate can detect, and a configuration that gates only what the data can
honour (`rageval gate plan`, core.metrics.gate_plan). The plan is computed on the read lane; saving it to the project
is a write (the Compare page then decides under it), saving it as a file is for the repository."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.gui import operations
from rageval_desktop.gui.models.records_model import RecordsModel
from rageval_desktop.gui.views.common import records_table

if TYPE_CHECKING:
    from rageval_desktop.core.metrics.gate_config import GateConfig
    from rageval_desktop.gui.state import AppState

ASSUME_ALL = "every answer anew (cautious)"


class GatePlanDialog(QDialog):
    def __init__(self, state: AppState, baseline: str, runs: list[str], like: str | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Plan the gate against {baseline}")
        self.state, self.baseline = state, baseline
        self.config: GateConfig | None = None
        layout = QVBoxLayout(self)
        intro = QLabel("Per cell: its questions, the drop it can detect with 80% power at a 5% family-wise error, "
                       "the tolerance it can honour, and the questions a wanted tolerance would need. Slices that "
                       "cannot reach the largest tolerance are merged; 'all' is always gated.")
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(intro)
        layout.addLayout(self._choices(baseline, runs, like))
        self._body(layout)
        self._wire()
        self.resize(900, 520)
        self.compute()

    def _choices(self, baseline: str, runs: list[str], like: str | None) -> QHBoxLayout:
        """How much pull requests change answers, the wanted tolerance and the largest."""
        row = QHBoxLayout()
        self.like = QComboBox()
        for run in runs:
            if run != baseline:
                self.like.addItem(f"as much as {run} did", run)
        self.like.addItem(ASSUME_ALL, None)
        if like is not None and self.like.findData(like) >= 0:
            self.like.setCurrentIndex(self.like.findData(like))
        self.tolerance = QDoubleSpinBox()
        self.tolerance.setRange(0.5, 100)
        self.tolerance.setValue(5.0)
        self.tolerance.setSuffix(" points")
        self.largest = QDoubleSpinBox()
        self.largest.setRange(1, 100)
        self.largest.setValue(20.0)
        self.largest.setSuffix(" points")
        for text, widget in (("Pull requests change answers:", self.like), ("Wanted &tolerance:", self.tolerance),
                             ("&Largest:", self.largest)):
            label = QLabel(text)
            label.setBuddy(widget)
            row.addWidget(label)
            row.addWidget(widget)
        row.addStretch(1)
        return row

    def _body(self, layout: QVBoxLayout) -> None:
        """The plan's table (and the wait said where it will appear), its summary, and the saving buttons."""
        self.model = RecordsModel([("slice", "slice"), ("metric", "metric"), ("n", "n"), ("detects", "detects"),
                                   ("tolerance", "tolerance"), ("needed", "n for wanted"), ("gated", "gated"),
                                   ("why", "why")], self)
        self.model.header_tips = {"detects": "the smallest drop (points) caught with 80% power",
                                  "tolerance": "the drop this cell is gated at: the wanted one, or the smallest it "
                                               "can honour",
                                  "needed": "questions this cell would need to catch the wanted tolerance"}
        self.table = records_table(self.model, "gatePlan")
        layout.addWidget(self.table, 1)
        # a plan takes seconds on a large project: the wait is said where the plan will appear, not under it
        self.waiting = QLabel("Planning the gate: reading each cell's questions and the smallest drop it can "
                              "detect…")
        self.waiting.setObjectName("hint")
        self.waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.waiting.setWordWrap(True)
        layout.addWidget(self.waiting, 1)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.summary)
        buttons = QHBoxLayout()
        self.save_button = QPushButton("&Save to project")
        self.save_button.setToolTip("Compare, reports and rageval gate decide under it (rageval gate plan --save)")
        self.file_button = QPushButton("Save as &file…")
        self.file_button.setToolTip("For your repository: rageval gate --config FILE (rageval gate plan --out)")
        close = QPushButton("Close")
        for b in (self.save_button, self.file_button):
            b.setEnabled(False)
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        close.clicked.connect(self.reject)
        self.save_button.clicked.connect(self.save)
        self.file_button.clicked.connect(self.save_file)

    def _wire(self) -> None:
        """A changed choice plans again."""
        for box in (self.tolerance, self.largest):
            box.valueChanged.connect(self.compute)
        self.like.currentIndexChanged.connect(self.compute)

    def compute(self, *_: object) -> None:
        if self.largest.value() < self.tolerance.value():
            self.summary.setText("The largest tolerance must be at least the wanted one.")
            return
        self.save_button.setEnabled(False)
        self.file_button.setEnabled(False)
        self.summary.clear()
        self.table.setVisible(False)
        self.waiting.setVisible(True)
        self.state.run_read("gate-plan", operations.gate_plan, self.state.project, self.baseline,
                            self.like.currentData(), self.tolerance.value(), self.largest.value(),
                            on_done=self.show_plan)

    def show_plan(self, found: dict[str, Any]) -> None:
        self.config = found["config"]
        self.waiting.setVisible(False)
        self.table.setVisible(True)
        records = [{"slice": r["slice"] + (f" ({', '.join(r['merges'])})" if r.get("merges") else ""),
                    "metric": r["metric"], "n": r["n"],
                    "detects": None if r["detectable"] is None else round(r["detectable"], 1),
                    "tolerance": r["tolerance"] if r["gated"] else None, "needed": r["needed"],
                    "gated": "yes" if r["gated"] else "no", "why": r["why"], "why__tip": r["why"]}
                   for r in found["cells"]]
        self.model.set_records(records)
        self.table.resizeColumnsToContents()
        merged = "; ".join(f"slices merged as '{k}': {', '.join(v)}" for k, v in found["groups"].items())
        left = "; ".join(f"{x['metric']} ({x['why']})" for x in found["left_out"])
        self.summary.setText(f"{len(self.config.cells)} cell(s) gated. Assumed: {found['assumption']}."
                             + (f" {merged}." if merged else "")
                             + (f" Not planned, so not gated under this plan: {left}." if left else ""))
        self.save_button.setEnabled(bool(self.config.cells))
        self.file_button.setEnabled(bool(self.config.cells))

    def save(self) -> None:
        if self.config is None:
            return
        config = self.config

        def saved(_: object) -> None:
            self.state.status(f"gate configuration saved: {len(config.cells)} cell(s)", 8000)
            self.accept()

        self.state.run_task("Saving the gate's configuration", operations.save_gate_config, self.state.opened(),
                            config, on_done=saved)

    def save_file(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        if self.config is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save the gate's configuration", "gate.json", "JSON (*.json)")
        if path:
            self.state.run_task("Writing the gate's configuration", operations.write_gate_config, self.config, path,
                                on_done=lambda p: self.state.status(f"written: {p} (rageval gate --config {p})",
                                                                    8000))
