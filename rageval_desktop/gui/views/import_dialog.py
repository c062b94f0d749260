"""Asks what a dropped or chosen file is (golden set, run, corpus) and, for a run, its name."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

KINDS = (("run", "Outputs of a RAG run"), ("golden", "Golden set"), ("corpus", "Corpus chunks"))


def guess_kind(path: Path) -> str:
    name = path.name.lower()
    if "golden" in name or "gold" in name or "testset" in name:
        return "golden"
    if "corpus" in name or "chunks" in name:
        return "corpus"
    return "run"


def guess_run_name(path: Path, taken: set[str]) -> str:
    stem = path.name.split(".")[0]
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}-{n}", n + 1
    return name


class ImportDialog(QDialog):
    def __init__(self, path: Path, run_names: set[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import")
        self.path = path
        self.run_names = run_names
        form = QFormLayout(self)
        file_label = QLabel(path.name)
        file_label.setToolTip(str(path))
        form.addRow("File:", file_label)
        self.kind = QComboBox()
        for key, label in KINDS:
            self.kind.addItem(label, key)
        self.kind.setCurrentIndex([k for k, _ in KINDS].index(guess_kind(path)))
        form.addRow("&What is it:", self.kind)
        self.run_name = QLineEdit(guess_run_name(path, run_names))
        self.run_label = QLabel("Run &name:")
        self.run_label.setBuddy(self.run_name)
        form.addRow(self.run_label, self.run_name)
        self.format = QComboBox()
        for key, label in (("", "Detect from columns"), ("native", "native"), ("ragas", "ragas"),
                           ("open-rag-eval", "open-rag-eval"), ("hf-cookbook", "HF cookbook")):
            self.format.addItem(label, key)
        form.addRow("&Format:", self.format)
        self.problem = QLabel()
        self.problem.setObjectName("problem")
        form.addRow(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Import")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.kind.currentIndexChanged.connect(self._update)
        self.run_name.textChanged.connect(self._update)
        self._update()

    def _update(self) -> None:
        is_run = self.kind.currentData() == "run"
        self.run_name.setVisible(is_run)
        self.run_label.setVisible(is_run)
        self.format.setEnabled(self.kind.currentData() != "corpus")
        name = self.run_name.text().strip()
        problem = ""
        if is_run and not name:
            problem = "The run needs a name."
        elif is_run and name in self.run_names:
            problem = f"A run named '{name}' already exists."
        self.problem.setText(problem)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problem)

    def choice(self) -> tuple[str, str | None, str | None]:
        """(kind, run name, format or None)."""
        return (self.kind.currentData(), self.run_name.text().strip() or None, self.format.currentData() or None)
