"""The judging actions of the main window: add/edit/test judges, rewrite a rubric, start, cancel and resume jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rageval_desktop.gui.lazy import lazy

operations = lazy("rageval_desktop.gui.operations")   # (imported on first use: after the first paint)
workers = lazy("rageval_desktop.gui.workers")

if TYPE_CHECKING:
    from rageval_desktop.core.jobs.batch import BatchStats
    from rageval_desktop.core.jobs.judge_job import JobStats
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.gui.views.jobs_view import JobsView
    from rageval_desktop.gui.window_host import WindowHost
    from rageval_desktop.gui.workers import Worker


class JudgingActions:
    """The judges' and jobs' actions, an object the window holds (`window.judging`): it owns the job lane (one
    judging job at a time, beside the window's task lane); what it reads of the window is `WindowHost`."""

    def __init__(self, window: WindowHost) -> None:
        self.w = window
        self._job: Worker | None = None

    @property
    def job(self) -> Worker | None:
        """The judging job running, if any."""
        return self._job

    def add_llm_judge(self) -> None:
        if self.w.project is None:
            return
        from rageval_desktop.core.judges.registry import list_judges
        from rageval_desktop.gui.views.judge_dialog import JudgeDialog  # on first use: not at start-up

        dialog = JudgeDialog({j.name for j in list_judges(self.w.project)}, self.w.frame)
        if dialog.exec() == JudgeDialog.DialogCode.Accepted:
            self.w.run_task("Adding the judge", operations.add_judge, self.w.project, dialog.values(),
                            on_done=lambda j: self.w.statusBar().showMessage(f"Added judge '{j.name}'", 8000))

    def edit_judge(self, record: dict | None) -> None:
        if self.w.project is None or not record:
            return
        from rageval_desktop.core.judges.registry import list_judges
        from rageval_desktop.core.ops import EditJudge
        from rageval_desktop.gui.views.judge_dialog import JudgeDialog

        dialog = JudgeDialog({j.name for j in list_judges(self.w.project)}, self.w.frame, existing=record)
        if dialog.exec() != JudgeDialog.DialogCode.Accepted:
            return
        changes = dialog.changes()
        if not changes:        # saved as it was: no write, no undo step
            self.w.statusBar().showMessage(f"{record['name']}: nothing changed", 6000)
            return
        self.w.state.run_op("Saving the judge", EditJudge(record["name"], changes),   # Ctrl+Z
                            on_done=lambda r: self.w.statusBar().showMessage(f"Saved: {r.label}", 8000))

    def test_judge(self, name: str | None) -> None:
        if self.w.project is not None and name:
            self.w.run_task(f"Testing {name}", operations.test_connection, self.w.project, name,
                            on_done=lambda text: self.w.show_info(text))

    def rewrite_rubric(self, name: str | None) -> None:
        if self.w.project is None or not name:
            return
        from rageval_desktop.core.judges import rubrics
        from rageval_desktop.core.judges.registry import get_judge
        from rageval_desktop.core.ops import EditJudge
        from rageval_desktop.core.store.queries import preview_fields
        from rageval_desktop.gui.views.rubric_editor import RubricEditor

        judge = get_judge(self.w.project, name)
        if judge.rubric_id is None:
            return
        from rageval_desktop.core.store.queries import first_run_row_id

        rubric = rubrics.rubric_of(self.w.project, judge.rubric_id)
        row_id = first_run_row_id(self.w.project)
        fields = preview_fields(self.w.project, row_id) if row_id else {f: f"<{f}>" for f in rubrics.FIELDS}
        editor = RubricEditor(rubric, fields, self.w.frame)
        if editor.exec() != RubricEditor.DialogCode.Accepted:
            return
        if editor.in_place.isChecked():      # an operation of core: Ctrl+Z gives the judge its old version back
            changes = {"rubric": editor.template()}
            self.w.state.run_op("Saving the rubric", EditJudge(name, changes),
                                on_done=lambda r: self.w.statusBar().showMessage(
                                  f"{name}: a new rubric version; its licence expires until audited again", 10_000))
            return
        self.w.run_task("Saving the rubric", operations.clone_judge, self.w.project, name, editor.template(),
                        on_done=lambda j: self.w.statusBar().showMessage(
                          f"Saved as a new rubric version; new judge '{j.name}'", 10_000))

    def start_judging(self, run: str | None, judges: list[str] | None, spec: JobSpec | None = None, *,
                      batch: bool = False, job_id: int | None = None) -> None:
        """A judging job in the background; `batch`: through the provider's Batch API (`job_id`: resume that
        batch job)."""
        if self.w.project is None or (run is None and spec is None):
            return
        if self._job is not None:
            self.w.show_error("A judging job is already running; cancel it or wait for it to finish.")
            return
        from rageval_desktop.core.jobs.spec import JobSpec

        if spec is None:
            if run is None:
                self.w.show_error("Choose a run to judge first.")
                return
            spec = JobSpec(run=run, judges=judges, batch=batch)
        if spec.batch:
            self._start_batch(spec, job_id)
            return
        self._jobs().live_label.setText(f"Starting: {spec.run}…")
        self.w.task_label.setText(f"Judging {spec.run}")
        ended = self._job_ended

        def done(stats: JobStats) -> None:
            if stats.stopped in ("fatal", "write_failed"):
                self.w.show_error(f"The job stopped: {stats.message}")
            text = (f"Job #{stats.job_id} {stats.stopped or 'finished'}: {stats.ok} ok, {stats.unparsed} unparsed, "
                    f"{stats.errors} errors, {stats.skipped} already judged, ${stats.cost_usd:.4f}, "
                    f"{stats.seconds:.1f} s")
            if stats.usage_note():
                text += f" ({stats.usage_note()})"
            ended(text)

        def failed(message: str, details: str) -> None:
            ended(f"Job failed: {message}")
            self.w.show_error(message, details)

        self._job = workers.start(operations.run_judges, self.w.project, spec, on_done=done, on_error=failed,
                                  on_stats=self._jobs().show_stats)
        self.w.select_nav("jobs")

    def _jobs(self) -> JobsView:
        """The Jobs page, where a job's progress and its end are shown."""
        from rageval_desktop.gui.views.jobs_view import JobsView

        return self.w.view(JobsView)

    def _job_ended(self, summary: str) -> None:
        self._job = None
        self.w.task_label.clear()
        self._jobs().job_ended(summary)
        self.w.job_finished.emit(summary)

    def _start_batch(self, spec: JobSpec, job_id: int | None) -> None:
        jobs = self._jobs()
        jobs.live_label.setText(f"{'Collecting' if job_id else 'Preparing'} the batch job on {spec.run}…")
        self.w.task_label.setText(f"Batch job on {spec.run}")
        ended = self._job_ended

        def done(stats: BatchStats) -> None:
            judged = stats.judged or {}
            if stats.status == "failed":
                self.w.show_error(f"The batch job stopped: {stats.message}")
            text = (f"Batch job #{stats.job_id} {stats.status}: {stats.sent:,} requests sent in {stats.batches} "
                    f"batch(es), {stats.cached:,} from the cache, {stats.failed:,} failed at the provider")
            if judged:
                text += (f"; {judged['ok']:,} ok, {judged['unparsed']:,} unparsed, {judged['errors']:,} errors, "
                         f"${judged['cost_usd']:.4f} at batch prices")
            ended(text)

        def failed(message: str, details: str) -> None:
            ended(f"Batch job failed: {message}")
            self.w.show_error(message, details)

        def cancelled(_message: str) -> None:
            ended("Batch job cancelled: the remote batches too")

        self._job = workers.start(operations.run_batch, self.w.project, spec, job_id, on_done=done, on_error=failed,
                                  on_cancel=cancelled, on_progress=self._jobs().show_progress,
                                  on_stats=self._jobs().show_stats)
        self.w.select_nav("jobs")

    def collect_batch_jobs(self) -> None:
        """On open: batch jobs whose process is gone while the provider still works on them are picked up again."""
        project = self.w.project
        if project is not None:   # a worker of its own, not a page's read lane: no page waits for it
            workers.start(operations.waiting_batch_jobs, project,
                          on_done=lambda jobs: self._batch_jobs_found(jobs) if self.w.project is project else None)

    def _batch_jobs_found(self, jobs: list[dict[str, Any]]) -> None:
        if not jobs or self._job is not None:
            return
        job = jobs[0]
        more = f" ({len(jobs) - 1} more wait their turn on the Jobs page)" if len(jobs) > 1 else ""
        self.w.notice_bar.show_notice(
            f"Batch job #{job['id']} on {job['params'].get('run')} was still at the provider when the project was "
            f"last closed: its results are being collected in the background{more}.",
            [("Show Jobs", lambda: self.w.select_nav("jobs"))], tone="info", topic="batch-jobs")
        self.resume_job(job)

    def cancel_job(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self._jobs().live_label.setText("Cancelling: finishing the calls in flight…")

    def resume_job(self, job: dict[str, Any]) -> None:
        from rageval_desktop.core.jobs.spec import JobSpec

        known = set(JobSpec.__dataclass_fields__)
        spec = JobSpec(**{k: v for k, v in job["params"].items() if k in known})
        self.start_judging(None, None, spec, job_id=job["id"] if spec.batch else None)
