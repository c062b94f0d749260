"""Add a judge: its metric, its kind (from the registry of kinds: built-in and plug-ins), and the settings that kind
takes — an endpoint, model, the NAME of the variable holding the key, rubric and concurrency for an LLM; the choices
a local kind offers."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from rageval_desktop.core.base.errors import JudgeConfigError
from rageval_desktop.core.base.vocab import LLM_DEFAULTS, METRICS
from rageval_desktop.core.judges.kinds import JudgeKind, able_kinds, get_kind
from rageval_desktop.core.judges.rubrics import library
from rageval_desktop.core.judges.secrets import check_key_ref

STEP_FORMATS = ("nugget_list", "importance_labels")
METRIC_LABELS = {
    "passage_relevance": "passage_relevance — UMBRELA grades (umbrela_* scores, no gold ids)",
    "nuggets": "nuggets — AutoNuggetizer (nugget_* scores)",
    "citation_support": "citation_support — each cited passage (citation_* scores)",
    "hallucination": "hallucination — HHEM, a local model (hhem score)",
    "answered": "answered — did the answer try to answer? (% answered)",
}
NOTES = {
    "nuggets": "Three steps per question: nuggets are made from the passages an UMBRELA judge graded >= 1 (add "
               "one first), labelled vital or okay, then checked against each answer. Lists you approve in "
               "`rageval nuggets` are reused by every run.",
    "citation_support": "Each answer sentence is checked against every passage it cites ([1], [1, 2]).",
    "hallucination": "Runs HHEM-2.1-Open on this machine: no endpoint, no cost. Register the model folder first "
                     "with: rageval models add hhem HHEM_DIR --foundation FLAN_T5_DIR",
}


class JudgeDialog(QDialog):
    def __init__(self, taken: set[str], parent: QWidget | None = None, existing: dict | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add a judge" if existing is None else f"Edit judge {existing['name']}")
        self.setMinimumWidth(560)
        self.existing = existing
        self.taken = taken - {existing["name"]} if existing else taken
        self.rubrics = library()
        form = self.form = QFormLayout(self)
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. gpt4o-correctness")
        form.addRow("&Name:", self.name)
        self.metric_box = QComboBox()
        for name in METRICS:
            self.metric_box.addItem(METRIC_LABELS.get(name, name), name)
        form.addRow("&Metric:", self.metric_box)
        self.kind_box = QComboBox()
        form.addRow("&Kind:", self.kind_box)
        self.choice_boxes: dict[str, QComboBox] = {}     # the kind's settings with fixed values (mode, measure)
        self.field_edits: dict[str, QLineEdit] = {}       # the kind's settings given as text (a peer's column)
        self.rubric = QComboBox()
        form.addRow("&Rubric:", self.rubric)
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("empty = OpenAI; e.g. http://localhost:8000/v1 for vLLM, "
                                         "http://localhost:11434/v1 for Ollama")
        form.addRow("&Endpoint:", self.base_url)
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("e.g. gpt-4o-mini")
        form.addRow("M&odel:", self.model_edit)
        self.key_env = QLineEdit()
        self.key_env.setPlaceholderText("e.g. OPENAI_API_KEY (empty for local servers)")
        self.key_env.setToolTip("The NAME of an environment variable, or keyring:SERVICE:USER. "
                                "The key itself is never stored in the project.")
        form.addRow("API key &variable:", self.key_env)
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 256)
        self.concurrency.setValue(LLM_DEFAULTS["concurrency"])
        form.addRow("&Concurrency:", self.concurrency)
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(1, 600)
        self.timeout.setValue(LLM_DEFAULTS["timeout"])
        self.timeout.setSuffix(" s")
        form.addRow("&Timeout per call:", self.timeout)
        self.note = QLabel()
        self.note.setWordWrap(True)
        form.addRow(self.note)
        self.problem = QLabel()
        self.problem.setObjectName("problem")
        self.problem.setWordWrap(True)
        form.addRow(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Add judge")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.metric_box.currentIndexChanged.connect(self._fill_kinds)
        self.kind_box.currentIndexChanged.connect(self._fill_rubrics)
        for edit in (self.name, self.model_edit, self.key_env):
            edit.textChanged.connect(self._check)
        self._fill_kinds()
        if existing:
            self._load(existing)
        else:  # the user's defaults from the preferences
            from rageval_desktop.gui.prefs import settings

            prefs = settings()
            self.base_url.setText(str(prefs.value("default_endpoint", "") or ""))
            self.model_edit.setText(str(prefs.value("default_model", "") or ""))
            default = LLM_DEFAULTS["concurrency"]
            self.concurrency.setValue(int(str(prefs.value("default_concurrency", default) or default)))

    def _load(self, j: dict) -> None:
        """Editing changes how the judge is reached, not what it judges with (that would be a new judge)."""
        self.name.setText(j["name"])
        self.metric_box.setCurrentIndex(self.metric_box.findData(j["metric"]))
        self.kind_box.setCurrentIndex(max(0, self.kind_box.findData(j["kind"])))
        self.model_edit.setText(j["model"] or "")
        self.base_url.setText(j["base_url"] or "")
        self.key_env.setText((j["api_key_ref"] or "").removeprefix("env:"))
        self.concurrency.setValue(int(j["params"].get("concurrency", LLM_DEFAULTS["concurrency"])))
        self.timeout.setValue(float(j["params"].get("timeout", LLM_DEFAULTS["timeout"])))
        for widget in (self.name, self.metric_box, self.kind_box, self.rubric, *self.choice_boxes.values()):
            widget.setEnabled(False)
            widget.setToolTip("Fixed: clone the judge (Rewrite rubric) to judge differently")
        self.model_edit.setToolTip("Another model at the same endpoint: the judge keeps its name and history; its "
                                   "licence expires until an audit of it as it is now is recorded")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Save")

    def kind(self) -> JudgeKind | None:
        name = self.kind_box.currentData()
        return get_kind(name) if name else None

    def _local(self) -> bool:
        kind = self.kind()
        return kind is None or not kind.calls_llm

    def _endpoint(self) -> bool:
        kind = self.kind()
        return kind is not None and kind.takes_endpoint

    def _fill_kinds(self) -> None:
        """The kinds that can judge the metric, from the registry (an LLM first where it can)."""
        self.kind_box.blockSignals(True)
        self.kind_box.clear()
        for name in able_kinds(METRICS[self.metric_box.currentData()]):
            self.kind_box.addItem(name, name)
            self.kind_box.setItemData(self.kind_box.count() - 1, get_kind(name).label, Qt.ItemDataRole.ToolTipRole)
        self.kind_box.blockSignals(False)
        self._fill_rubrics()

    def _fill_choices(self) -> None:
        for widget in (*self.choice_boxes.values(), *self.field_edits.values()):
            self.form.removeRow(widget)
        self.choice_boxes, self.field_edits = {}, {}
        kind = self.kind()
        at = int(self.form.getWidgetPosition(self.kind_box)[0]) + 1  # type: ignore[index]  # (row, role): stubs say object
        for param, options in (kind.choices if kind else {}).items():
            box = QComboBox()
            for value, meaning in options.items():
                box.addItem(f"{value} — {meaning}", value)
            self.form.insertRow(at, f"{param.replace('_', ' ').capitalize()}:", box)
            self.choice_boxes[param] = box
            at += 1
        # settings a kind takes as text (a peer judge's column): optional in the protocol, a line each
        for param, meaning in (getattr(kind, "fields", None) or {}).items():
            edit = QLineEdit()
            edit.setPlaceholderText(meaning)
            edit.setToolTip(meaning)
            edit.textChanged.connect(self._check)
            self.form.insertRow(at, f"{param.replace('_', ' ').capitalize()}:", edit)
            self.field_edits[param] = edit
            at += 1

    def _fill_rubrics(self) -> None:
        self.rubric.clear()
        for r in self.rubrics.values():   # the nugget chain's creation and importance steps come with it
            if r.metric == self.metric_box.currentData() and r.output_format not in STEP_FORMATS:
                self.rubric.addItem(f"{r.name} v{r.version}", r.name)
        local, endpoint = self._local(), self._endpoint()
        self.rubric.setEnabled(self.existing is None)        # fixed once the judge exists (Rewrite rubric clones)
        self.model_edit.setEnabled(self.existing is None or bool(self.existing.get("calls_llm")))
        # a local kind has no rubric or call settings; an endpoint's fields show for kinds reached at one
        for row in (self.rubric, self.concurrency, self.timeout):
            self.form.setRowVisible(row, not local)
        for field_row in (self.base_url, self.model_edit, self.key_env):
            self.form.setRowVisible(field_row, endpoint)
        self._fill_choices()
        kind = self.kind()
        needs = f"Needs {kind.needs}." if kind and kind.needs and local else ""
        self.note.setText(NOTES.get(self.metric_box.currentData(), "") or needs)
        self._check()

    def _check(self) -> None:
        problem = ""
        name = self.name.text().strip()
        if not name:
            problem = "The judge needs a name."
        elif name in self.taken:
            problem = f"A judge named '{name}' already exists."
        elif self.kind() is None:
            problem = "No installed judge kind can score this metric."
        elif any(not edit.text().strip() for p, edit in self.field_edits.items() if p in self._required_fields()):
            problem = "Fill in " + ", ".join(p for p, e in self.field_edits.items()
                                             if p in self._required_fields() and not e.text().strip()) + "."
        elif not self._endpoint():
            problem = ""
        elif not self.model_edit.text().strip() and (not self._local() or self.base_url.text().strip()):
            problem = "Give the model's name at the endpoint."
        else:
            try:
                check_key_ref(self.key_env.text().strip() or None)
            except JudgeConfigError as exc:
                problem = str(exc)
        self.problem.setText(problem)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problem)

    def _required_fields(self) -> tuple[str, ...]:
        return tuple(getattr(self.kind(), "required_fields", ()) or ())

    def changes(self) -> dict[str, object]:
        """What the edit changes, compared with the judge as it was ({}: nothing — saving adds no undo step). The
        model is a change of what it judges with (core: its licence expires); the rest how it is reached."""
        was = self.existing or {}
        params = was.get("params") or {}
        now: dict[str, object] = {"base_url": self.base_url.text().strip() or None,
                                  "api_key_ref": self.key_env.text().strip() or None,
                                  "concurrency": self.concurrency.value(), "timeout": self.timeout.value()}
        before: dict[str, object] = {
            "base_url": was.get("base_url") or None,
            "api_key_ref": (was.get("api_key_ref") or "").removeprefix("env:") or None,   # (shown without env:)
            "concurrency": int(params.get("concurrency", LLM_DEFAULTS["concurrency"])),
            "timeout": float(params.get("timeout", LLM_DEFAULTS["timeout"]))}
        out = {k: v for k, v in now.items() if v != before[k]}
        model = self.model_edit.text().strip()
        if was.get("calls_llm") and model and model != (was.get("model") or ""):
            out["model"] = model
        return out

    def values(self) -> dict[str, object]:
        """What core's add_judge takes: only the settings the chosen kind uses."""
        local, endpoint = self._local(), self._endpoint()
        base_url = self.base_url.text().strip() or None if endpoint else None
        model = self.model_edit.text().strip() or None if endpoint and (not local or base_url) else None
        params: dict[str, object] = {param: box.currentData() for param, box in self.choice_boxes.items()}
        params.update({param: edit.text().strip() for param, edit in self.field_edits.items() if edit.text().strip()})
        if not local:
            params.update({"concurrency": self.concurrency.value(), "timeout": self.timeout.value()})
        return {"name": self.name.text().strip(), "metric": self.metric_box.currentData(),
                "kind": self.kind_box.currentData(), "rubric": None if local else self.rubric.currentData(),
                "model": model, "base_url": base_url,
                "api_key_ref": self.key_env.text().strip() or None if endpoint else None, "params": params}
