"""File → Export review pack…: a sample, the reviewers (one pack each), how many reviewers see each row, and
the folder the packs go to. The values go to core.review.packs through a worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)


def hint(text: str = "") -> QLabel:
    """A line of the dialog's small print, wrapped."""
    label = QLabel(text)
    label.setObjectName("hint")
    label.setWordWrap(True)
    return label


class PackExportDialog(QDialog):
    def __init__(self, samples: list[dict[str, Any]], folder: Path, parent: QWidget | None = None,
                 current: int | None = None, rates: tuple[float, float] = (0.0, 0.0)) -> None:
        super().__init__(parent)
        self.samples, self.rates = {s["id"]: s for s in samples}, rates
        self.setWindowTitle("Export review packs")
        layout = QVBoxLayout(self)
        layout.addWidget(hint("One file per reviewer with the rows to rate — blind: no judge verdicts, no keys, no "
                              "other runs. Reviewers open it with RAGEval Desktop, rate, and send it back; import it "
                              "with File → Import Review Packs…."))
        form = QFormLayout()
        self.sample_box = QComboBox()
        for s in samples:
            what = "rows" if s["unit"] == "row" else f"{s['unit']}s"
            self.sample_box.addItem(f"#{s['id']} · {s['run']} · {s['metric']} · {s['rows']} {what}", s["id"])
        if current is not None and self.sample_box.findData(current) >= 0:
            self.sample_box.setCurrentIndex(self.sample_box.findData(current))
        self.reviewers = QLineEdit()
        self.reviewers.setPlaceholderText("ann, bob, cyd")
        self.reviewers.setToolTip("The reviewers' names, separated by commas: one pack each")
        self.overlap = QSpinBox()
        self.overlap.setRange(1, 10)
        self.overlap.setToolTip("How many reviewers see each row (2 or more measures how much reviewers agree)")
        self.folder = QLineEdit(str(folder))
        browse = QPushButton("Choose…")
        browse.clicked.connect(self.choose)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        form.addRow("&Sample:", self.sample_box)
        form.addRow("&Reviewers:", self.reviewers)
        form.addRow("Reviewers per &row:", self.overlap)
        folder_label = QLabel("&Folder:")     # a row of two widgets: the label needs its buddy set by hand (was a
        folder_label.setBuddy(self.folder)    # literal "&Folder:")
        form.addRow(folder_label, row)
        layout.addLayout(form)
        self.hides, self.note = hint(), hint()     # what each pack hides (core.review.packs.hide_checks); a problem
        layout.addWidget(self.hides)
        layout.addWidget(self.note)
        for changed in (self.sample_box.currentIndexChanged, self.reviewers.textChanged, self.overlap.valueChanged):
            changed.connect(self.describe_hidden)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        self.buttons.accepted.connect(self.check)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.resize(560, 340)
        self.describe_hidden()

    def describe_hidden(self, *_: object) -> None:
        """How many rows each pack holds and the checks hidden among them, for the sample and reviewers named."""
        from rageval_desktop.core.review.packs import expected_checks

        gold_rate, retest_rate = self.rates
        if not gold_rate and not retest_rate:
            self.hides.setText("No checks are hidden in the packs (the project's gold and retest rates are 0; "
                               "rageval reviewers sets them).")
            return
        sample = self.samples.get(self.sample_box.currentData())
        names = self.names()
        rates = (f"one row in {round(1 / gold_rate)} a gold item" if gold_rate else "no gold items") + ", " + (
            f"one in {round(1 / retest_rate)} a retest" if retest_rate else "no retests")
        if sample is None or not names or self.overlap.value() > len(names):
            self.hides.setText(f"Each pack hides checks among its rows: {rates} (rows settled without the reviewer, "
                               "and rows they rated before). The reviewer cannot tell them apart; importing reads "
                               "them apart (Team page).")
            return
        each, gold, retests = expected_checks(int(sample["rows"]), len(names), self.overlap.value(), gold_rate,
                                              retest_rate)
        self.hides.setText(f"Each pack holds up to {each} rows of the sample, and hides among them about {gold} gold "
                           f"item(s) and {retests} retest(s) ({rates}; fewer when the project has fewer to offer). "
                           "The reviewer cannot tell them apart; importing reads them apart (Team page).")

    def names(self) -> list[str]:
        return [n.strip() for n in self.reviewers.text().split(",") if n.strip()]

    def choose(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Folder for the packs", self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    def check(self) -> None:
        names = self.names()
        if self.sample_box.currentData() is None:
            self.note.setText("There is no sample yet: draw one in Review first.")
        elif not names:
            self.note.setText("Name at least one reviewer.")
        elif self.overlap.value() > len(names):
            self.note.setText(f"Each row can go to at most {len(names)} reviewer(s): the ones named.")
        else:
            self.accept()

    def values(self) -> tuple[int, list[str], Path, int]:
        return self.sample_box.currentData(), self.names(), Path(self.folder.text()), self.overlap.value()
