"""What a judge job is asked to do (`JobSpec`), the judges and the work it plans from it (one plan for a run and for
its dry run), and the check that no waiting batch job already covers those rows."""

from __future__ import annotations

import json
from dataclasses import dataclass

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.jobs.work import Plan, rated_rows, select_rows
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.registry import get_judge, list_judges
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run


@dataclass
class JobSpec:
    run: str
    judges: list[str] | None = None       # None: every active judge that scores run rows
    slice_tag: str | None = None
    sample_id: int | None = None
    redo_failed: bool = False             # also redo unparsed rows (errors are always retried)
    only_failed: bool = False             # only rows whose judgment is an error or unparsed
    concurrency: int | None = None
    rpm: float | None = None
    budget_usd: float | None = None
    timeout: float | None = None
    max_retries: int | None = None
    use_cache: bool = True
    rated_only: bool = False              # only rows humans rated for the judges' metrics (audit a rewritten rubric)
    batch: bool = False                   # through the provider's Batch API (core/jobs/batch.py)
    batch_api: str = "auto"               # which: openai, anthropic (Message Batches), auto (by the endpoint's host)
    offline: bool = False                 # replies only from the request cache, no call made (core/jobs/shards.py)
    row_ids: list[int] | None = None      # only these rows of the run (a cascade's later judges: the rows left)



def job_judges(project: Project, spec: JobSpec) -> list[Judge]:
    """The judges a job runs: the ones named, else every active judge."""
    if spec.judges:
        return [get_judge(project, name) for name in spec.judges]
    found = [j for j in list_judges(project) if j.status == "active"]
    if not found:
        raise RagevalError("the project has no active judge; add one (rageval judges add ...)")
    return found


def job_items(project: Project, spec: JobSpec, judges: list[Judge]) -> Plan:
    """What the job has to judge (and how many are judged already: `skipped`), planned from keys: one plan for a run
    and for its dry run."""
    rows = select_rows(project, spec.run, spec.slice_tag, spec.sample_id, spec.row_ids)
    if spec.rated_only:
        rated = rated_rows(project, {j.metric for j in judges})
        rows = [r for r in rows if r in rated]
    return Plan(project, judges, rows, redo_failed=spec.redo_failed, only_failed=spec.only_failed,
                audit=spec.rated_only)


def still_waiting(job_id: int, which: str = "") -> str:
    """Why a job on rows a waiting batch job covers is refused, and what to do (a live job, or another batch)."""
    what = f"batch job {job_id}" + (f" ({which})" if which else "")
    return (f"{what} is still waiting for the provider's replies to these rows; collect them with: rageval jobs "
            f"resume PROJECT {job_id} (or cancel it: rageval jobs cancel PROJECT {job_id})")


def pending_for(project: Project, judge_ids: list[int], run_id: int, except_job: int | None = None) -> int | None:
    """A batch job on one of these judges and this run whose batches are not all in (its rows would be paid twice
    by a live job now)."""
    rows = project.reader().execute(
        "SELECT DISTINCT j.id, j.params FROM jobs j JOIN batches b ON b.job_id = j.id "
        "WHERE b.merged = 0 AND j.status != 'cancelled'").fetchall()

    for jid, params in rows:
        if jid == except_job:
            continue
        p = json.loads(params)
        try:
            if find_run(project, p.get("run")) != run_id:
                continue
            names = p.get("judges")
            ids = {get_judge(project, n).id for n in names} if names else None
        except RagevalError:
            continue
        if ids is None or ids & set(judge_ids):
            return int(jid)
    return None
