"""The import wizard: what the file is → a preview of its first rows → the layout detected → a mapping of the columns
it does not recognise (drop-downs) → a summary (rows, linked, unlinked, new slices) → Import.

Everything it shows comes from `core.importers.preview` (read in a worker; nothing is written until Import), and
errors are phrased for the app — never `--map` advice.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from rageval_desktop.core.importers.golden_import import LABELS, kept_text
from rageval_desktop.gui import workers
from rageval_desktop.gui.views.common import fit_dialog

if TYPE_CHECKING:
    from rageval_desktop.core.importers.preview import Preview

KINDS = (("run", "Outputs of a RAG run"), ("golden", "Golden set"), ("corpus", "Corpus chunks"))
def formats() -> list[tuple[str, str]]:
    """The Format box: detection, then every layout the importers declare (core.importers.layouts.LAYOUTS), once."""
    from rageval_desktop.core.importers.layouts import LAYOUTS

    names = dict.fromkeys(lay.name for kind in LAYOUTS.values() for lay in kind)
    return [("", "Detect from columns"), *((name, name) for name in names)]


KEEP = "(keep as is)"


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


def summary_text(kind: str, s: dict[str, Any]) -> str:
    """What the import will do, in words: rows (for a run, linked and unlinked), new slices, labels kept or cleared,
    the first warnings."""
    parts = [f"{s['rows']:,} rows"]
    if kind == "run":
        parts += [f"{s['linked']:,} linked to the golden set", f"{s['unlinked']:,} unlinked"
                  + (" (they get no retrieval metrics)" if s["unlinked"] else "")]
    if s.get("new_slices"):
        parts.append("new slices: " + ", ".join(s["new_slices"]))
    notes = []
    if s.get("kept"):
        notes.append(kept_text(s["kept"]).capitalize() + ".")
    clears = s.get("clears") or {}
    if clears:
        notes.append("Empty cells would clear " + ", ".join(f"the {LABELS[f]} of {n:,} row(s)"
                                                          for f, n in clears.items())
                     + ": import is refused unless you tick the box below.")
    return ("Will import " + " · ".join(parts) + "." + "".join("\n" + n for n in notes)
            + "".join("\n" + w[:1].upper() + w[1:] for w in s.get("warnings", [])[:3]))



class ImportDialog(QDialog):
    def __init__(self, path: Path, run_names: set[str], parent: QWidget | None = None, project: Any = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Import {path.name}")
        fit_dialog(self, 1040, 600)
        self.path, self.run_names, self.project = path, run_names, project
        self.current: Any = None          # the latest Preview
        self._used: dict[str, str] = {}   # the mapping the latest preview was made with
        self._pending = 0                 # previews asked for; only the newest answer is shown
        self._guessing = True             # the first preview may correct the kind guessed from the file's name
        outer = QVBoxLayout(self)
        outer.addLayout(self._what(path, run_names))
        outer.addLayout(self._body(), 1)
        self._end(outer)
        self.boxes: dict[str, QComboBox] = {}
        self._debounce = QTimer(self)
        self._debounce.setObjectName("previewDelay")
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(150)
        self._debounce.timeout.connect(self.refresh_preview)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self.format.currentIndexChanged.connect(lambda _i: self._debounce.start())
        self.run_name.textChanged.connect(self._update)
        self._kind_changed()

    def _what(self, path: Path, run_names: set[str]) -> QFormLayout:
        """1. What the file is: its kind (guessed from its name), the run's name, its format."""
        form = QFormLayout()
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
        for key, label in formats():
            self.format.addItem(label, key)
        form.addRow("&Format:", self.format)
        return form

    def _body(self) -> QHBoxLayout:
        """2. The file's first rows and the layout detected; 3. the column mapping."""
        body = QHBoxLayout()
        left = QGroupBox("The file's first rows")
        ll = QVBoxLayout(left)
        self.head = QTableWidget()
        self.head.setObjectName("importPreview")
        self.head.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.head.setWordWrap(False)
        self.head.verticalHeader().setDefaultSectionSize(22)
        ll.addWidget(self.head)
        self.detected = QLabel("Reading the file…")
        self.detected.setObjectName("importDetected")
        self.detected.setWordWrap(True)
        self.detected.setTextFormat(Qt.TextFormat.PlainText)
        ll.addWidget(self.detected)
        body.addWidget(left, 3)
        # 3. the column mapping
        right = QGroupBox("Columns")
        rl = QVBoxLayout(right)
        self.mapping_table = QTableWidget(0, 2)
        self.mapping_table.setObjectName("importMapping")
        self.mapping_table.setHorizontalHeaderLabels(["In the file", "Import as"])
        self.mapping_table.verticalHeader().setVisible(False)
        self.mapping_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        rl.addWidget(self.mapping_table)
        body.addWidget(right, 2)
        return body

    def _end(self, outer: QVBoxLayout) -> None:
        """4. The summary, what clears labels, the problem if any, and Import."""
        self.summary = QLabel()
        self.summary.setObjectName("importSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        outer.addWidget(self.summary)
        self.clear_labels = QCheckBox("Clear labels the file leaves empty")
        self.clear_labels.setObjectName("clearLabels")
        self.clear_labels.setToolTip("Empty cells in a label column (gold chunk ids, slice, gold answer) clear what "
                                     "the rows have. A column left out of the file always keeps what is stored.")
        self.clear_labels.setVisible(False)
        self.clear_labels.toggled.connect(lambda _on: self._update())
        outer.addWidget(self.clear_labels)
        self.problem = QLabel()
        self.problem.setObjectName("problem")
        self.problem.setWordWrap(True)
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        outer.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Import")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        outer.addWidget(self.buttons)

    # --- the preview ---------------------------------------------------------------------------
    def _kind_changed(self, *_: object) -> None:
        self.boxes.clear()
        self.mapping_table.setRowCount(0)
        self._debounce.start()
        self._update()

    def mapping(self) -> dict[str, str]:
        """file column -> the column it is imported as (only the ones the user changed)."""
        return {col: box.currentData() for col, box in self.boxes.items() if box.currentData()}

    def preview_settled(self) -> bool:
        """The preview shows the mapping chosen now (no change waiting for it)."""
        return not self._debounce.isActive() and self.mapping() == self._used

    def refresh_preview(self) -> None:
        from rageval_desktop.core.importers.preview import preview

        kind = self.kind.currentData()
        path, project, fmt, mapping = self.path, self.project, self.format.currentData() or None, self.mapping()
        self._pending += 1
        ticket = self._pending
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(False)

        # (a preview that lands after the dialog closed is dropped: its table is gone)
        def done(result: Any) -> None:
            if isValid(self) and ticket == self._pending:
                self._used = mapping
                self.show_preview(result)

        def failed(message: str, _details: str) -> None:
            if isValid(self) and ticket == self._pending:
                self.current = None
                self.detected.setText("")
                self.problem.setText(message)
                self._update()

        workers.start(lambda ctx: preview(project, path, kind, fmt=fmt, mapping=mapping), on_done=done,
                      on_error=failed)

    def show_preview(self, p: Preview) -> None:
        guessing, self._guessing = self._guessing, False
        if guessing and p.fits and p.kind not in p.fits:      # its columns say what it is: that kind, once
            self.kind.setCurrentIndex([k for k, _ in KINDS].index(p.fits[0]))
            return
        self.current = p
        self.head.clear()
        self.head.setColumnCount(len(p.columns))
        self.head.setRowCount(len(p.head))
        self.head.setHorizontalHeaderLabels(p.columns)
        for r, row in enumerate(p.head):
            for c, value in enumerate(row):
                self.head.setItem(r, c, QTableWidgetItem(value))   # items never interpret markup
        self.head.resizeColumnsToContents()
        for c in range(self.head.columnCount()):
            self.head.setColumnWidth(c, min(self.head.columnWidth(c), 220))
        if p.layout:
            self.detected.setText(f"{p.rows:,} rows · detected layout: {p.layout} {p.kind}")
        elif p.kind == "corpus":
            self.detected.setText(f"{p.rows:,} rows · a corpus needs chunk_id and text (+ doc_id, position)")
        else:
            self.detected.setText(f"{p.rows:,} rows · no {p.kind} layout matches yet; closest: {p.closest}, "
                                  f"which still needs {', '.join(p.missing)}. Map the columns on the right.")
        self._fill_mapping(p)
        clears = (p.summary or {}).get("clears") or {}
        self.clear_labels.setVisible(bool(clears))
        self.summary.setText(summary_text(p.kind, p.summary) if p.summary else "")
        self.problem.setText(p.error or "")
        self._update()

    def _fill_mapping(self, p: Preview) -> None:
        if p.kind == "corpus":
            self.mapping_table.setRowCount(0)
            return
        targets = [t for t, _ in p.targets]
        required = {t for t, req in p.targets if req}
        keep = self.mapping() or p.suggested   # the user's choices win; else the suggestions
        self.boxes.clear()
        self.mapping_table.setRowCount(len(p.columns))
        for r, col in enumerate(p.columns):
            self.mapping_table.setItem(r, 0, QTableWidgetItem(col))
            box = QComboBox()
            box.addItem(KEEP if col in targets else "kept as metadata", "")
            for t in targets:
                if t != col:
                    box.addItem(t + (" (required)" if t in required else ""), t)
            index = box.findData(keep.get(col, ""))
            box.setCurrentIndex(max(index, 0))
            box.currentIndexChanged.connect(lambda _i: self._debounce.start())
            self.boxes[col] = box
            self.mapping_table.setCellWidget(r, 1, box)
        if self.mapping() != self._used:
            self._debounce.start()   # suggestions applied: preview again with them, so the summary is what Import does

    def _update(self) -> None:
        is_run = self.kind.currentData() == "run"
        self.run_name.setVisible(is_run)
        self.run_label.setVisible(is_run)
        self.format.setEnabled(self.kind.currentData() != "corpus")
        name = self.run_name.text().strip()
        problem = ""
        if not self.clear_labels.isHidden() and not self.clear_labels.isChecked():
            problem = ("Tick 'Clear labels the file leaves empty' to clear them, or leave that column out of the "
                       "file to keep what is stored.")
        elif is_run and not name:
            problem = "The run needs a name."
        elif is_run and name in self.run_names:
            problem = f"A run named '{name}' already exists."
        ready = (self.current is not None and not self.current.error and self.current.layout is not None
                 and self.mapping() == self._used and not self._debounce.isActive())
        if problem:
            self.problem.setText(problem)
        elif self.current is not None:
            self.problem.setText(self.current.error or "")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ready and not problem)

    def choice(self) -> tuple[str, str | None, str | None, dict[str, str]]:
        """(kind, run name, format or None, column mapping)."""
        return (self.kind.currentData(), self.run_name.text().strip() or None, self.format.currentData() or None,
                self.mapping())

    @property
    def allow_clearing(self) -> bool:
        """The reviewer confirmed that empty label cells clear what the rows have."""
        return not self.clear_labels.isHidden() and self.clear_labels.isChecked()
