"""Rewrite a judge's rubric with a live preview of the prompt for a real row; saving validates the template
and clones the judge onto the new rubric version (the judge people rated against is never changed)."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.core.judges.rubrics import FIELDS, Rubric, RubricInvalid, validate_template
from rageval_desktop.gui.views.common import fit_dialog


class RubricEditor(QDialog):
    def __init__(self, rubric: Rubric, fields: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Rubric {rubric.name} v{rubric.version}")
        fit_dialog(self, 1200, 700)      # within 1000x700 and the window it opens over
        self.rubric, self.fields = rubric, fields
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        layout = QVBoxLayout(self)
        fields_label = QLabel("Fields: " + ", ".join("${" + f + "}" for f in FIELDS) +
                              ". Saving creates a new rubric version: by default a new judge that uses it.")
        fields_label.setWordWrap(True)      # was one line that opened the dialog 1,353 px wide
        layout.addWidget(fields_label)
        panes = QHBoxLayout()
        self.editor = QPlainTextEdit(rubric.template)
        self.editor.setFont(mono)
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setFont(mono)
        left, right = QVBoxLayout(), QVBoxLayout()
        label = QLabel("&Template")
        label.setBuddy(self.editor)
        left.addWidget(label)
        left.addWidget(self.editor)
        right.addWidget(QLabel("Prompt for the selected row (preview)"))
        right.addWidget(self.preview)
        panes.addLayout(left, 1)
        panes.addLayout(right, 1)
        layout.addLayout(panes)
        self.problem = QLabel()
        self.problem.setObjectName("problem")
        layout.addWidget(self.problem)
        self.in_place = QCheckBox("Give this &judge the new version (as `rageval judges edit --rubric`: it keeps its "
                                  "name and history; its licence expires until an audit of it as it is now)")
        self.in_place.setToolTip("Unchecked: a new judge uses the new version and this one stays as it was, so the "
                                 "two can be compared on the same rows")
        layout.addWidget(self.in_place)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.editor.textChanged.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        text = self.editor.toPlainText()
        try:
            validate_template(text, self.rubric.output_format)
        except RubricInvalid as exc:
            self.problem.setText(str(exc))
            self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(False)
            return
        self.problem.setText("")
        changed = text != self.rubric.template
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(changed)
        draft = Rubric(self.rubric.name, self.rubric.version, self.rubric.metric, self.rubric.output_format,
                       self.rubric.scale_min, self.rubric.scale_max, text, self.rubric.system)
        messages = draft.render(self.fields)
        self.preview.setPlainText("\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages))

    def template(self) -> str:
        return self.editor.toPlainText()
