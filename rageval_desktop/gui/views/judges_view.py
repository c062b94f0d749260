"""The judges view: every judge of the project, adding LLM judges, testing a connection, rewriting a rubric,
and running judges over the selected run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QPushButton

from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.judges.registry import judge_summary, list_judges
from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui.models.records_model import RecordsModel
from rageval_desktop.gui.state import Page
from rageval_desktop.gui.views.common import ButtonBar, page_frame, records_table

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.state import AppState

CAPPED = {"licence": 250, "base_url": 180, "model": 160}    # widest a column grows (px); the rest elided
READING = "licence: reading…"     # the cell until the licences' read lands (app.PLACEHOLDER: the app waits it out)
COLUMNS = [("name", "judge"), ("metric", "metric"), ("scale", "scale · pass mark"), ("kind", "kind"),
           ("status", "status"), ("licence", "licence"), ("judgments", "judgments"), ("model", "model"),
           ("base_url", "endpoint"), ("api_key_ref", "API key from")]


class JudgesView(Page):
    shows = frozenset({Area.JUDGES, Area.JUDGMENTS, Area.JOBS, Area.RATINGS, Area.AUDIT})
    refresh_delay_ms = 800   # a refresh reads every judge's licence (an agreement each): once a job's batches settle

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self._licences: dict[str, tuple[str, str]] = {}
        layout, top = page_frame(self, "Judges")
        self.add_button = QPushButton("&Add judge…")
        self.edit_button = QPushButton("&Edit…")
        self.test_button = QPushButton("&Test connection")
        self.rubric_button = QPushButton("Rewrite &rubric…")
        for b in (self.add_button, self.edit_button, self.test_button, self.rubric_button):
            top.addWidget(b)
        self.model = RecordsModel(COLUMNS, self)
        self.table = records_table(self.model, "judges")
        layout.addWidget(self.table)
        run_bar = ButtonBar([])            # wraps on a narrow window (was forcing it to 1,058 px at 1024)
        self.run_box = QComboBox()
        label = QLabel("R&un:")
        label.setBuddy(self.run_box)
        run_bar.add(label)
        run_bar.add(self.run_box)
        self.run_selected = QPushButton("Run &selected judge")
        self.run_all = QPushButton("Run all active &judges")
        self.run_all.setDefault(True)
        self.estimate_button = QPushButton("Estimate &cost…")
        self.estimate_button.setToolTip("Before running: calls, tokens and cost of every active judge on this run "
                                        "(nothing is sent; rageval judge --dry-run)")
        self.batch_box = QCheckBox("Run as &batch (cheaper, slower)")
        self.batch_box.setToolTip("Send the LLM judges' requests through the provider's Batch API: at the batch "
                                  "price (half the live price unless set), answered within 24 hours. Closing the app "
                                  "loses nothing: the results are collected when you open the project again.")
        for w in (self.run_selected, self.run_all, self.batch_box, self.estimate_button):
            run_bar.add(w)
        layout.addWidget(run_bar)
        self.hint = QLabel("Judged rows are skipped, so running again resumes where a job stopped.")
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        self.add_button.clicked.connect(lambda: state.actions.add_llm_judge())
        self.edit_button.clicked.connect(lambda: state.actions.edit_judge(self.selected_record()))
        self.test_button.clicked.connect(lambda: state.actions.test_judge(self.selected_name()))
        self.rubric_button.clicked.connect(lambda: state.actions.rewrite_rubric(self.selected_name()))
        self.run_selected.clicked.connect(self.run_selected_judge)
        self.run_all.clicked.connect(lambda: state.actions.start_judging(self.run_box.currentData(), None,
                                                                  batch=self.batch_box.isChecked()))
        self.estimate_button.clicked.connect(self.estimate)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)

    def estimate(self) -> None:
        """The dry run of "Run all active judges" on the chosen run, in a worker; its words in a dialog."""
        from rageval_desktop.core.jobs.estimate import describe, estimate
        from rageval_desktop.core.jobs.spec import JobSpec
        from rageval_desktop.gui.views.common import TextDialog

        project, run = self.state.project, self.run_box.currentData()
        if project is None or not run:
            return

        def show(est: dict) -> None:
            self.estimate_dialog = TextDialog(f"Cost before you run: {run}", describe(est), self)
            self.estimate_dialog.open()

        batch = self.batch_box.isChecked()
        self.state.run_task("Estimating the cost", lambda ctx: estimate(project, JobSpec(run=run, batch=batch)),
                              on_done=show)

    def selected_record(self) -> dict | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.record(rows[0].row()) if rows else None

    def run_selected_judge(self) -> None:
        name = self.selected_name()
        if name is None:     # (the type checker found a [None] passed on as the judges to run)
            self.state.status("Choose a judge in the table first")
            return
        self.state.actions.start_judging(self.run_box.currentData(), [name], batch=self.batch_box.isChecked())

    def selected_name(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.record(rows[0].row())["name"] if rows else None

    def refresh(self, runs: list[str]) -> None:
        project = self.state.project
        if project is None:
            return
        # the run chosen anywhere in the window wins; else the box's own choice; else the latest run
        current = self.state.current_run or self.run_box.currentData()
        self.run_box.clear()
        for name in runs:
            self.run_box.addItem(name, name)
        found = self.run_box.findData(current) if current else -1
        self.run_box.setCurrentIndex(found if found >= 0 else self.run_box.count() - 1)
        self.state.run_read("judges.list", _judges, project, on_done=self._show_judges)   # off the GUI thread

    def _show_judges(self, found: list[dict[str, object]]) -> None:
        project = self.state.project
        if project is None:
            return
        keep = self.selected_name()
        records = [{**r,
                    # (issue 77: "…" for 8-12 s said nothing of what was coming)
                    "licence": self._licences.get(str(r["name"]), (READING, ""))[0],
                    "licence__tip": self._licences.get(str(r["name"]), (READING, "The judge's licence is being read "
                                                                        "from its audit, checks and ratings"))[1]}
                   for r in found]
        self.model.set_records(records)
        self.state.run_read("judges", _licences, project, on_done=self._show_licences)   # agreement: off the GUI
        for row, rec in enumerate(records):
            if rec["name"] == keep or (keep is None and row == 0):
                self.table.selectRow(row)
        self._fit_columns()
        self._update_buttons()

    def _show_licences(self, found: dict[str, tuple[str, str]]) -> None:
        """Each judge's licence (core.review.licence), filled in when its read lands."""
        self._licences = found
        keep = self.selected_name()
        records = [{**r, "licence": found.get(r["name"], ("", ""))[0],
                    "licence__tip": found.get(r["name"], ("", ""))[1]} for r in self.model.records]
        self.model.set_records(records)
        for row, rec in enumerate(records):
            if rec["name"] == keep:
                self.table.selectRow(row)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Columns as wide as their text, but the long ones capped (their whole text in the tooltip): the licence's
        sentence pushed judgments, model and endpoint past the right edge at 1280 (issue 77)."""
        self.table.resizeColumnsToContents()
        keys = [k for k, _ in COLUMNS]
        for key in ("model", "base_url", "api_key_ref"):    # local judges only (the demo's): no empty columns
            if key in keys:
                self.table.setColumnHidden(keys.index(key), not any(r.get(key) for r in self.model.records))
        for key, most in CAPPED.items():
            if key in keys and self.table.columnWidth(keys.index(key)) > most:
                self.table.setColumnWidth(keys.index(key), most)

    def _update_buttons(self, *_: object) -> None:
        name = self.selected_name()
        record = next((r for r in self.model.records if r["name"] == name), None)
        is_llm = bool(record and record.get("calls_llm"))   # the kind's capability, not its name
        self.test_button.setEnabled(is_llm)
        self.edit_button.setEnabled(is_llm)
        self.rubric_button.setEnabled(is_llm)
        self.run_selected.setEnabled(bool(record and record["status"] == "active") and self.run_box.count() > 0)
        self.run_all.setEnabled(bool(self.model.records) and self.run_box.count() > 0)


def _scale(metric: str) -> str:
    """'1–5 · pass ≥ 4': a score under the pass mark counts as a failure (failure browser, triage, disagreements)."""
    spec = METRICS.get(metric)
    if spec is None:
        return ""
    return f"{spec.low:g}–{spec.high:g}" + (f" · pass ≥ {spec.pass_mark:g}" if spec.pass_mark is not None else "")


def _judges(project: Project, ctx: object = None) -> list[dict[str, object]]:
    """Each judge's line: what the registry says of it, its judgments counted, its scale."""
    from rageval_desktop.core.store.queries import judgment_counts

    counts = judgment_counts(project)
    return [{**judge_summary(j), "judgments": counts.get(j.id, 0), "scale": _scale(j.metric)}
            for j in list_judges(project)]


def _licences(project: Project, ctx: object = None) -> dict[str, tuple[str, str]]:
    """Judge name -> its licence for the cell and in full ("gate", "monitor (lower bound 0.62 < 0.7)")."""
    from rageval_desktop.core.review.licence import licence

    return {j.name: ((held := licence(project, j)).short(), held.describe()) for j in list_judges(project)}
