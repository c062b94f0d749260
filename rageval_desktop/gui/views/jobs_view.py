"""The jobs panel: the running job's progress (rate, ETA, errors by kind, cost) with cancel, and every past
job with resume for the ones that did not finish."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout

from rageval_desktop.core.judges.prices import estimated_note
from rageval_desktop.core.store import records
from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui.models.records_model import Records, RecordsModel
from rageval_desktop.gui.state import Page
from rageval_desktop.gui.views.common import records_table

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.state import AppState

COLUMNS = [("id", "#"), ("kind", "kind"), ("run", "run"), ("status", "status"), ("progress", "progress"),
           ("started_local", "started (local time)"), ("duration", "duration"), ("rate", "rows/s"),
           ("cost", "cost ($)"), ("message", "message")]
RESUMABLE = {"interrupted", "cancelled", "failed"}


def _jobs(project: Project, ctx: object = None) -> Records:
    return records.list_jobs(project)


class JobsView(Page):
    shows = frozenset({Area.JOBS})
    refresh_delay_ms = 0
    def __init__(self, state: AppState) -> None:
        from PySide6.QtCore import Qt  # (not at the top: this module is read while the window starts)

        super().__init__()
        self.state = state
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 6, 6)
        title = QLabel("Jobs")
        title.setObjectName("viewTitle")
        layout.addWidget(title)
        live = QHBoxLayout()
        self.live_label = QLabel("No job is running.")
        self.live_label.setObjectName("jobLive")
        self.live_label.setWordWrap(True)   # rate, counts, cost and retries: two lines on a narrow window
        self.bar = QProgressBar()
        self.bar.setMinimumWidth(260)
        self.bar.setVisible(False)
        self.cancel_button = QPushButton("&Cancel job")
        self.cancel_button.setEnabled(False)
        live.addWidget(self.live_label, 1)
        live.addWidget(self.bar)
        live.addWidget(self.cancel_button)
        layout.addLayout(live)
        self.errors_label = QLabel()
        self.errors_label.setObjectName("problem")
        layout.addWidget(self.errors_label)
        self.model = RecordsModel(COLUMNS, self)
        self.table = records_table(self.model, "jobs")
        layout.addWidget(self.table)
        # the selected job's whole message (why it failed, what to do): the column shows its start
        self.message_label = QLabel()
        self.message_label.setObjectName("jobMessage")
        self.message_label.setWordWrap(True)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)   # a judge's or run's name is text, never markup
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label.setVisible(False)
        layout.addWidget(self.message_label)
        bottom = QHBoxLayout()
        self.resume_button = QPushButton("&Resume selected job")
        bottom.addWidget(self.resume_button)
        bottom.addStretch(1)
        layout.addLayout(bottom)
        self.cancel_button.clicked.connect(lambda: state.actions.cancel_job())
        self.resume_button.clicked.connect(self._resume)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        self._update_buttons()

    def refresh(self, runs: list[str] | None = None) -> None:
        project = self.state.project
        if project is not None:
            self.state.run_read("jobs", _jobs, project, on_done=self.show_jobs)    # off the GUI thread

    def show_jobs(self, jobs: Records) -> None:
        rows = []
        for job in jobs:
            rows.append({**job, "run": job["params"].get("run"), "progress": f"{job['done']}/{job['total'] or 0}",
                         "started_local": _local(job["started_at"] or job["created_at"]),
                         "duration": _duration(job["seconds"]),
                         # a job of under a second (the demo's) has no rate worth reading: 6,260 rows/s said nothing
                         "rate": None if job["rows_per_s"] is None or (job["seconds"] or 0) < 1
                         else f"{job['rows_per_s']:.1f}",
                         # a cost in part estimated (its server stated no token usage) is marked so, and says why
                         "cost": None if job["cost_usd"] is None else
                         f"{'~' if job['usage_estimated'] else ''}${job['cost_usd']:.4f}",
                         "cost__tip": estimated_note(job["usage_estimated"])})
        self.model.set_records(rows)
        self.table.resizeColumnsToContents()
        header = self.table.horizontalHeader()
        header.resizeSection(len(COLUMNS) - 1, min(header.sectionSize(len(COLUMNS) - 1), 420))
        self._update_buttons()

    def show_stats(self, stats: dict[str, Any]) -> None:
        rows, done = stats.get("rows", 0), stats.get("done", 0)
        self.bar.setVisible(True)
        self.bar.setRange(0, max(rows, 1))
        self.bar.setValue(done)
        eta = stats.get("eta_s")
        parts = [f"{done}/{rows} judged", f"{stats.get('rows_per_s', 0):.1f} rows/s"]
        if not done and stats.get("phase"):         # the first seconds: what it is doing, not a silent 0/N
            parts.insert(0, f"{stats['phase']}…")
        if eta is not None and done < rows:
            parts.append(f"ETA {eta:.0f} s")
        parts += [f"{stats.get('ok', 0)} ok", f"{stats.get('unparsed', 0)} unparsed",
                  f"{stats.get('errors', 0)} errors",
                  f"{stats.get('calls', 0)} calls ({stats.get('cache_hits', 0)} cached)",
                  f"{'~' if stats.get('usage_estimated') else ''}${stats.get('cost_usd', 0):.4f}"]
        retried = stats.get("retries_by_kind") or {}
        if retried:   # not errors: calls that succeeded or failed later, and why they were sent again
            parts.append(f"{sum(retried.values())} retries (" + ", ".join(f"{k} {v}" for k, v in
                                                                          sorted(retried.items())) + ")")
        self.live_label.setText(" · ".join(parts))
        kinds = stats.get("errors_by_kind") or {}
        self.errors_label.setText("Errors: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) if kinds else "")
        self.cancel_button.setEnabled(True)

    def show_progress(self, done: int, total: int, message: str) -> None:
        """A batch job while the provider works: batches done, requests processed there, replies received."""
        self.bar.setVisible(True)
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)
        self.live_label.setText(message)
        self.cancel_button.setEnabled(True)

    def job_ended(self, summary: str) -> None:
        self.bar.setVisible(False)
        self.cancel_button.setEnabled(False)
        self.live_label.setText(summary)
        self.refresh()

    def selected(self) -> dict[str, Any] | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.record(rows[0].row()) if rows else None

    def _update_buttons(self, *_: object) -> None:
        job = self.selected()
        self.resume_button.setEnabled(bool(job and job["status"] in RESUMABLE and job["kind"] == "judge"))
        said = f"Job #{job['id']} {job['status']}: {job['message']}" if job and job.get("message") else ""
        self.message_label.setText(said)
        self.message_label.setVisible(bool(said))

    def _resume(self) -> None:
        job = self.selected()
        if job:
            self.state.actions.resume_job(job)


def _local(stamp: str | None) -> str:
    """A stored UTC timestamp in the user's local time, to the minute."""
    from datetime import datetime

    if not stamp:
        return ""
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    if seconds < 0.1:
        return "< 0.1s"
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s" if minutes else f"{seconds:.1f}s"
