"""The main window's `state.actions` (state.PageActions): what its pages may start of the judging and golden-set
actions the window holds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.gui.golden_actions import GoldenActions
    from rageval_desktop.gui.judging_actions import JudgingActions


class WindowActions:
    def __init__(self, judging: JudgingActions, golden: GoldenActions) -> None:
        self.judging, self.golden = judging, golden

    def add_llm_judge(self) -> None:
        self.judging.add_llm_judge()

    def edit_judge(self, record: dict | None) -> None:
        self.judging.edit_judge(record)

    def test_judge(self, name: str | None) -> None:
        self.judging.test_judge(name)

    def rewrite_rubric(self, name: str | None) -> None:
        self.judging.rewrite_rubric(name)

    def start_judging(self, run: str | None, judges: list[str] | None, spec: JobSpec | None = None, *,
                      batch: bool = False, job_id: int | None = None) -> None:
        self.judging.start_judging(run, judges, spec, batch=batch, job_id=job_id)

    def cancel_job(self) -> None:
        self.judging.cancel_job()

    def resume_job(self, job: dict[str, Any]) -> None:
        self.judging.resume_job(job)

    def promote_row(self, row_id: int) -> None:
        self.golden.promote_row(row_id)
