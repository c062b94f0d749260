"""Preferences: yours (reviewer name, default endpoint and model, concurrency, theme, font size — kept in your user
settings) and this project's (retirement policy, price table — kept in the project, applied through core ops)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.core.base.vocab import LLM_DEFAULTS
from rageval_desktop.gui.prefs import REVIEW_ACTIONS, check_review_keys, review_keys, settings

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.store.project import Project

THEMES = ("system", "light", "dark")


class PreferencesDialog(QDialog):
    def __init__(self, project: Project | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.setMinimumWidth(560)
        self.project = project
        tabs = QTabWidget()
        tabs.addTab(self._you(), "You")
        tabs.addTab(self._keys(), "Review keys")
        tabs.addTab(self._project(project), "This project")
        layout = QVBoxLayout(self)
        layout.addWidget(tabs)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _you(self) -> QWidget:
        """The reviewer's own settings: name, default endpoint, model and concurrency, theme, font size."""
        s = settings()
        mine = QWidget()
        form = QFormLayout(mine)
        self.reviewer = QLineEdit(str(s.value("reviewer", "") or ""))
        form.addRow("&Reviewer name:", self.reviewer)
        self.endpoint = QLineEdit(str(s.value("default_endpoint", "") or ""))
        self.endpoint.setPlaceholderText("empty = OpenAI")
        form.addRow("Default &endpoint:", self.endpoint)
        self.model = QLineEdit(str(s.value("default_model", "gpt-4o-mini") or ""))
        form.addRow("Default &model:", self.model)
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 256)
        default = LLM_DEFAULTS["concurrency"]
        self.concurrency.setValue(int(str(s.value("default_concurrency", default) or default)))
        form.addRow("Default &concurrency:", self.concurrency)
        self.theme = QComboBox()
        for t in THEMES:
            self.theme.addItem(t, t)
        self.theme.setCurrentIndex(max(self.theme.findData(str(s.value("theme", "system"))), 0))
        form.addRow("&Theme:", self.theme)
        self.font_size = QSpinBox()
        self.font_size.setRange(8, 20)
        self.font_size.setValue(int(str(s.value("font_size", 10) or 10)))
        self.font_size.setSuffix(" pt")
        form.addRow("&Font size:", self.font_size)
        return mine

    def _keys(self) -> QWidget:
        """The review desk's action keys."""
        keys_tab = QWidget()
        kform = QFormLayout(keys_tab)
        current = review_keys()
        self.key_edits: dict[str, QLineEdit] = {}
        for action, (_default, what) in REVIEW_ACTIONS.items():
            edit = QLineEdit(current[action])
            edit.setMaxLength(1)
            edit.setFixedWidth(48)
            self.key_edits[action] = edit
            kform.addRow(f"{what[0].upper()}{what[1:]}:", edit)
        note = QLabel("One letter each. The scale's keys (0–5, or the letters a scale names) rate; arrow keys and "
                      "Ctrl+Z always work too.")
        note.setWordWrap(True)
        note.setObjectName("hint")
        kform.addRow(note)
        self.keys_problem = QLabel()
        self.keys_problem.setObjectName("problem")
        self.keys_problem.setWordWrap(True)
        kform.addRow(self.keys_problem)
        return keys_tab

    def _project(self, project: Project | None) -> QWidget:
        """The project's rules: retirement, selective judging, prices (disabled without a project)."""
        proj = QWidget()
        pform = QFormLayout(proj)
        self.statistic = QComboBox()
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(-1, 1)
        self.threshold.setDecimals(4)  # a saved threshold must come back as it was, not rounded to 0.01
        self.threshold.setSingleStep(0.05)
        self.rule = QComboBox()
        self.min_n = QSpinBox()
        self.min_n.setRange(2, 10_000)
        self.selective_alpha = QDoubleSpinBox()
        self.selective_delta = QDoubleSpinBox()
        for box in (self.selective_alpha, self.selective_delta):
            box.setRange(0.001, 0.499)
            box.setDecimals(3)
            box.setSingleStep(0.01)
            box.setValue(0.1)
        self.selective_alpha.setToolTip("Selective judging: the disagreement with the reviewers allowed on the rows a "
                                        "judge decides alone (its licence, cascades and the gate's selective "
                                        "estimator use it)")
        self.selective_delta.setToolTip("Selective judging: the chance that the guarantee on decided rows fails")
        self.prices = QPlainTextEdit()
        self.prices.setPlaceholderText("model  input  output  [batch-input  batch-output]: USD per million tokens, "
                                       "one model per line (batch prices left out: half the live price)")
        if project is not None:
            self._fill_project(project)
        else:
            proj.setEnabled(False)
        pform.addRow("Retirement &statistic:", self.statistic)
        pform.addRow("Retire &below:", self.threshold)
        pform.addRow("Minimum &n:", self.min_n)
        pform.addRow("&Decide by:", self.rule)
        pform.addRow("Selective: allowed dis&agreement (α):", self.selective_alpha)
        pform.addRow("Selective: chance it &fails (δ):", self.selective_delta)
        pform.addRow("&Prices:", self.prices)
        self.prices_hint = QLabel("Per line: model, input, output, then optionally batch input and batch output — USD "
                                  "per million tokens. A batch price left out is half the live price.")
        self.prices_hint.setObjectName("hint")
        self.prices_hint.setWordWrap(True)
        pform.addRow("", self.prices_hint)
        return proj

    def _fill_project(self, project: Project) -> None:
        """The project's retirement rule, selective levels and prices, as set now."""
        from rageval_desktop.core.judges.prices import all_prices
        from rageval_desktop.core.review.settings import RULES, STATISTICS, policy

        for name, text in RULES.items():
            self.rule.addItem(text[0].upper() + text[1:], name)
        for st in STATISTICS:
            self.statistic.addItem(st, st)
        pol = policy(project)
        self.statistic.setCurrentIndex(self.statistic.findData(pol.statistic))
        self.threshold.setValue(pol.threshold)
        self.min_n.setValue(pol.min_n)
        self.rule.setCurrentIndex(self.rule.findData(pol.rule))
        self.selective_alpha.setValue(pol.selective_alpha)
        self.selective_delta.setValue(pol.selective_delta)
        table = sorted(all_prices(project).items())
        self.prices.setPlainText("\n".join(
            f"{m}  {p['input_per_mtok']:g}  {p['output_per_mtok']:g}  {p['batch_input_per_mtok']:g}  "
            f"{p['batch_output_per_mtok']:g}" for m, p in table))

    def chosen_keys(self) -> dict[str, str]:
        return {a: e.text().strip().lower() for a, e in self.key_edits.items()}

    def accept(self) -> None:
        problem = check_review_keys(self.chosen_keys())
        if problem:
            self.keys_problem.setText(f"Review keys: {problem}.")
            return
        super().accept()

    def save_user(self) -> None:
        s = settings()
        s.setValue("reviewer", self.reviewer.text().strip())
        s.setValue("default_endpoint", self.endpoint.text().strip())
        s.setValue("default_model", self.model.text().strip())
        s.setValue("default_concurrency", self.concurrency.value())
        s.setValue("theme", self.theme.currentData())
        s.setValue("font_size", self.font_size.value())
        for action, key in self.chosen_keys().items():
            s.setValue(f"review_keys/{action}", key)

    def project_changes(self) -> tuple[dict[str, Any], list[tuple[str, float, float, float | None, float | None]]]:
        """(retirement policy, prices: model, input, output, batch input, batch output) to apply through core in a
        worker; bad price lines raise ValueError."""
        prices: list[tuple[str, float, float, float | None, float | None]] = []
        for n, line in enumerate(self.prices.toPlainText().splitlines(), start=1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) not in (3, 5):
                raise ValueError(f"price line {n} must be: model input output [batch-input batch-output]")
            try:
                numbers = [float(x) for x in parts[1:]]
            except ValueError:
                raise ValueError(f"price line {n}: prices are numbers (USD per million tokens)") from None
            batch = (numbers[2], numbers[3]) if len(numbers) == 4 else (None, None)
            prices.append((parts[0], numbers[0], numbers[1], *batch))
        policy = {"statistic": self.statistic.currentData(), "threshold": self.threshold.value(),
                  "min_n": self.min_n.value(), "rule": self.rule.currentData(),
                  "selective_alpha": self.selective_alpha.value(), "selective_delta": self.selective_delta.value()}
        return policy, prices


def save_project_preferences(project: Project, policy: dict[str, Any],
                             prices: list[tuple]) -> Callable[[TaskContext], None]:
    """The write lane's task that saves the dialog's project part: the retirement policy, and each price that
    changed (a batch price shown as derived — half the live one — stays derived)."""
    def save(ctx: TaskContext) -> None:
        from rageval_desktop.core.judges.prices import all_prices, set_price
        from rageval_desktop.core.review.settings import set_policy

        set_policy(project, **policy)
        current = all_prices(project)
        for model, i, o, bi, bo in prices:
            now = current.get(model)
            if now is not None and not now["batch_set"] and \
                    (now["batch_input_per_mtok"], now["batch_output_per_mtok"]) == (bi, bo):
                bi = bo = None   # the batch price shown was derived (half the live price): it stays derived
            same = now is not None and (now["input_per_mtok"], now["output_per_mtok"]) == (i, o) and (
                bi is None or (now["batch_input_per_mtok"], now["batch_output_per_mtok"]) == (bi, bo))
            if not same:
                set_price(project, model, i, o, bi, bo)

    return save
