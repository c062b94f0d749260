"""Judge jobs through a provider's Batch API (`rageval judge … --batch`, the app's "Run as batch"): the same requests
as a live job, sent as files of requests at the batch price and collected when the provider is done (within 24 h).

The project stays the single source of truth, and nothing is lost to a closed lid:
1. **Plan** as a live job does (the same items, keys and request cache): each single-call LLM judgment's first
   request is rendered exactly as the live job would send it. Requests whose reply is in the cache are not sent;
   identical requests are sent once. Multi-call judges (nuggets, citation support) and rows with nothing to judge
   are left to the live pass (step 4).
2. **Submit** the requests as JSONL files within the provider's limits (requests and bytes per file), one batch per
   file. Each file is recorded in `batches` as soon as it is uploaded, and the batch id as soon as it exists; a batch
   carries the job and part in its metadata, so a process killed between creating a batch and recording it finds
   the batch again instead of paying twice.
3. **Poll** until every batch ends (completed, failed, expired, cancelled), merging each one's results as it ends:
   every reply goes into the request cache under its `custom_id` (the cache key), marked with the job; failed
   requests are counted by kind. Requests that failed are sent again in a follow-up batch (at most `ROUNDS` rounds).
   Polling resumes where it was: `rageval jobs resume P ID`, or reopening the project in the app.
4. **Judge** every row with the live job engine under the same job id: each reply from the batch is a cache entry,
   parsed and written through the same parser and writer as a live reply (unparsed stays unparsed; one repair
   request, live), and priced at the batch price. What the batches could not answer is called live, with the live
   job's bounded retries.

Cancelling cancels the remote batches; replies already merged stay in the cache for the next run.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.context import Cancelled, TaskContext
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.jobs.batch_api import ENDPOINT, BatchFailed, CacheRow, Provider
from rageval_desktop.core.jobs.commit import while_busy
from rageval_desktop.core.jobs.estimate import estimate
from rageval_desktop.core.jobs.judge_job import JudgeJob
from rageval_desktop.core.jobs.message_batches import MessageBatches, flavour
from rageval_desktop.core.jobs.spec import JobSpec, job_items, job_judges, pending_for, still_waiting
from rageval_desktop.core.jobs.work import Item, Plan
from rageval_desktop.core.judges import llm, rubrics
from rageval_desktop.core.judges.judge import Endpoint, Judge
from rageval_desktop.core.judges.registry import note_endpoints
from rageval_desktop.core.judges.secrets import Scrubber
from rageval_desktop.core.store import owners, records
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project, inserted_id
from rageval_desktop.core.store.queries import run_id as find_run

MAX_REQUESTS = 50_000              # per file (the OpenAI Batch API's limit)
MAX_BYTES = 190 * 1024 ** 2        # per file, under the 200 MB limit
ROUNDS = 2                         # the first batch and at most one follow-up for the requests that failed
POLL_SECONDS = 30.0
POLL_FAILURES = 10                 # consecutive failed polls before the job stops (resume later: nothing is lost)
TERMINAL = ("completed", "failed", "expired", "cancelled")
CHUNK = 1000                       # items whose text is loaded and rendered at a time


@dataclass
class BatchStats:
    job_id: int | None = None
    rows: int = 0                  # work items in this job (after skipping what was already judged)
    skipped: int = 0
    sent: int = 0                  # requests sent in batches (all rounds)
    cached: int = 0                # not sent: the request cache had the reply
    live: int = 0                  # left to the live pass: multi-call judges, rows with nothing to judge
    batches: int = 0
    rounds: int = 0
    merged: int = 0                # replies received from batches, stored in the cache
    failed: int = 0                # requests that failed inside batches
    failed_by_kind: dict[str, int] = field(default_factory=dict)
    polls: int = 0
    status: str = "running"        # running, then: submitted (not waited for) | done | cancelled | failed
    resumed: int | None = None     # the waiting job this command took over (the same command run after a kill)
    message: str | None = None
    judged: dict[str, Any] | None = None   # the live pass's JobStats (judgments written, cost at batch prices)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- the job -----------------------------------------------------------------------------------------------------
def _metadata(job_id: int, round_: int, part: int) -> dict[str, str]:
    return {"rageval_job": str(job_id), "round": str(round_), "part": str(part)}


def request_body(judge: Judge, messages: list[dict], params: dict[str, Any]) -> dict[str, Any]:
    """The body a live call sends (llm.chat), as a batch request line carries it."""
    body = {"model": judge.model, "messages": messages, "temperature": params.get("temperature", 0.0),
            "max_tokens": params.get("max_tokens"), "seed": params.get("seed")}
    if params.get("logprobs"):
        body.update({"logprobs": True, "top_logprobs": llm.TOP_LOGPROBS})
    return {k: v for k, v in body.items() if v is not None}


def render_requests(project: Project, work: Plan, judges: list[Judge],
                    ctx: TaskContext) -> Iterator[list[tuple[Item, str, bytes]]]:
    """The plan's single-call items a chunk at a time, each with its request cache key and its request line in the
    batch format, rendered exactly as the live job renders the call. An item with nothing to judge has no key (''),
    and a request another item of the plan makes already has no line (b''): it is sent once."""
    conn = project.reader()
    loaded: dict[int, rubrics.Rubric] = {}
    seen: set[str] = set()
    for chunk in work.chunks(judges, CHUNK):
        ctx.check()
        out: list[tuple[Item, str, bytes]] = []
        for item in chunk:
            if item.missing:
                out.append((item, "", b""))
                continue
            judge = item.judge
            if judge.rubric_key not in loaded:
                loaded[judge.rubric_key] = rubrics.load(conn, judge.rubric_key)
            messages = loaded[judge.rubric_key].render(item.fields)
            params = judge.request_params()
            key = llm.cache_key(judge.base_url, judge.model, messages, params)
            if key in seen:
                out.append((item, key, b""))
                continue
            seen.add(key)
            out.append((item, key, json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT,
                                               "body": request_body(judge, messages, params)},
                                              ensure_ascii=False).encode() + b"\n"))
        yield out


def cached_keys(project: Project, keys: list[str]) -> set[str]:
    """Which of these request cache keys have a reply in the project."""
    conn = project.reader()
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        found.update(k for (k,) in conn.execute(
            f"SELECT key FROM llm_cache WHERE key IN ({','.join('?' * len(chunk))})", chunk))
    return found


class BatchJob:
    def __init__(self, project: Project, spec: JobSpec, ctx: TaskContext, job_id: int | None = None,
                 poll_seconds: float = POLL_SECONDS) -> None:
        self.project, self.spec, self.ctx = project, spec, ctx
        self.job_id, self.poll_seconds = job_id, poll_seconds
        self.stats = BatchStats(job_id=job_id)
        self.scrub = Scrubber()
        self.providers: dict[Endpoint, Provider] = {}
        self.failed_kinds: Counter[str] = Counter()
        self._poll_failures = 0        # polls in a row that failed (the provider unreachable)

    @property
    def id(self) -> int:
        """The job's record (`begin` makes or finds it)."""
        if self.job_id is None:
            raise RuntimeError("the batch job has not begun")
        return self.job_id

    # --- start / resume ----------------------------------------------------------------------------------------
    def provider(self, base_url: str | None, api_key_ref: str | None) -> Provider:
        endpoint = (base_url, api_key_ref)
        if endpoint not in self.providers:
            kind = MessageBatches if flavour(self.spec.batch_api, base_url) == "anthropic" else Provider
            self.providers[endpoint] = kind(base_url, api_key_ref, self.scrub)
        return self.providers[endpoint]

    def begin(self) -> tuple[list[Judge], Any]:

        if not self.spec.use_cache:
            raise RagevalError("a batch job keeps its replies in the request cache: it cannot run without it",
                               cli_hint="drop --no-cache")
        judges = job_judges(self.project, self.spec)
        work = job_items(self.project, self.spec, judges)
        self.stats.rows, self.stats.skipped = len(work), work.skipped
        run_id = find_run(self.project, self.spec.run)
        leases = [(j.id, run_id) for j in judges]
        names = {j.id: j.name for j in judges}
        if self.job_id is None:
            self.job_id = self.waiting_twin(judges, run_id)   # the same command after a kill resumes its job
            if self.job_id is not None:
                self.stats.resumed = self.job_id
        if self.job_id is None:
            self.check_budget(judges)
            params = {k: v for k, v in asdict(self.spec).items() if v is not None}
            params["endpoints"] = note_endpoints(self.project, judges, "batch")   # where the batches go
            self.job_id = while_busy(lambda: records.start(self.project, "judge", params, len(work), leases=leases,
                                                           lease_names=names), self.ctx)
        else:
            job_id = self.job_id
            while_busy(lambda: records.restart(self.project, job_id, len(work), leases=leases, lease_names=names),
                       self.ctx)
        self.stats.job_id = self.job_id
        return judges, work

    def waiting_twin(self, judges: list[Judge], run_id: int) -> int | None:
        """A recorded batch job on these judges and this run whose replies are not all in. Running the same command
        again after a kill resumes it (its batches are paid for; a new one would buy every row twice); a job on
        other judges, or one another process is still collecting, is refused before anything is uploaded."""
        waiting = pending_for(self.project, [j.id for j in judges if j.calls_llm], run_id)
        if waiting is None:
            return None
        with self.project.write("check batch jobs", changed=(Area.JOBS,)) as conn:
            owners.interrupt_dead_jobs(conn)          # a killed collector's job is 'interrupted' from here on
        job = records.get(self.project, waiting)
        mine, theirs = sorted(self.spec.judges or []), sorted(job["params"].get("judges") or [])
        if job["status"] == "running":
            pid, host = self.project.reader().execute("SELECT pid, host FROM jobs WHERE id = ?", (waiting,)).fetchone()
            raise RagevalError(f"batch job {waiting} for these rows is being collected by process {pid} on "
                               f"{host or 'this host'}; wait for it, or cancel it (rageval jobs cancel PROJECT "
                               f"{waiting}) — nothing was sent")
        if theirs != mine or job["params"].get("run") != self.spec.run:
            raise RagevalError(still_waiting(waiting, f"judges: {', '.join(theirs) or 'every active one'}")
                               + " — nothing was sent")
        return waiting

    def check_budget(self, judges: list[Judge]) -> None:
        """Before anything is sent: the dry-run estimate at batch prices must fit the budget."""
        if self.spec.budget_usd is None:
            return

        est = estimate(self.project, self.spec)
        if est["cost_usd"] is None:
            raise RagevalError(f"no price for {', '.join(est['unpriced_models'])}, so the budget cannot be kept",
                               cli_hint="set one with: rageval prices set PROJECT MODEL --input USD --output USD")
        if est["cost_usd"] > self.spec.budget_usd:
            raise RagevalError(f"the estimate at batch prices is ${est['cost_usd']:.4f}, over the budget of "
                               f"${self.spec.budget_usd:.4f}; nothing was sent",
                               cli_hint="see the estimate with --dry-run --batch")

    def run(self, wait: bool = True) -> BatchStats:
        judges, work = self.begin()
        try:
            self.stats.rounds = self.rounds_so_far()
            while True:
                if self.unfinished():
                    if not wait:
                        self.stats.status = "submitted"
                        self.stats.message = (f"batches submitted; collect the results with: rageval jobs resume "
                                              f"PROJECT {self.job_id}")
                        break
                    self.ctx.check()
                    self.poll()
                    if self.unfinished():
                        self.sleep()
                    continue
                if self.stats.rounds >= ROUNDS or not self.submit(judges, work, self.stats.rounds + 1):
                    break
            if self.stats.status not in ("submitted", "cancelled"):
                self.totals()
                self.stats.judged = self.judge_rows()
                stopped = self.stats.judged.get("stopped")
                self.stats.status = "cancelled" if stopped == "cancelled" else "done"
                if stopped in ("fatal", "write_failed"):
                    self.stats.status = "failed"
                    self.stats.message = self.stats.judged.get("message")
                return self.stats
        except Cancelled:
            if self.ctx.detached:   # the app is closing: the batches run on, and are collected on reopening
                self.stats.status = "submitted"
                self.stats.message = (f"left running at the provider; rageval jobs resume PROJECT {self.job_id} "
                                      "(or reopening the project in the app) collects the results")
            else:
                self.cancel_remote()
                self.stats.status, self.stats.message = "cancelled", "cancelled: the remote batches too"
        except BaseException as exc:
            message = self.scrub(str(exc) if isinstance(exc, RagevalError) else f"{type(exc).__name__}: {exc}")
            self.stats.status, self.stats.message = "failed", (
                f"{message}; the batches recorded so far are kept: rageval jobs resume PROJECT {self.job_id}")
            self.finish("failed", self.stats.message)
            if isinstance(exc, RagevalError):
                return self.stats
            raise
        self.totals()
        self.finish("cancelled" if self.stats.status == "cancelled" else "interrupted", self.stats.message)
        return self.stats

    def totals(self) -> None:
        """The job's batches over all its processes (a resumed job did not send them all itself)."""
        rows = batches(self.project, self.id)
        kinds: Counter[str] = Counter()
        for b in rows:
            kinds.update(b["errors"])
        self.stats.batches, self.stats.sent = len(rows), sum(b["requests"] for b in rows)
        self.stats.rounds = max((b["round"] for b in rows), default=0)
        self.stats.failed, self.stats.failed_by_kind = sum(kinds.values()), dict(kinds)
        self.stats.merged = sum(b["completed"] for b in rows if b["merged"]) or self.stats.merged

    def finish(self, status: str, message: str | None) -> None:
        try:
            records.finish(self.project, self.id, status, message)
        except RagevalError:
            pass   # the disk is still full: the next open marks the job interrupted, and the batches stay recorded

    def sleep(self) -> None:
        end = time.monotonic() + self.poll_seconds
        while time.monotonic() < end and not self.ctx.cancelled:
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))

    # --- the batches table ----------------------------------------------------------------------------------------
    def rounds_so_far(self) -> int:
        row = self.project.reader().execute("SELECT MAX(round) FROM batches WHERE job_id = ?",
                                            (self.job_id,)).fetchone()
        return row[0] or 0

    def unfinished(self) -> list[tuple]:
        return self.project.reader().execute(
            "SELECT id, round, part, base_url, api_key_ref, input_file_id, remote_id, status FROM batches "
            "WHERE job_id = ? AND merged = 0 ORDER BY id", (self.job_id,)).fetchall()

    # --- submit ---------------------------------------------------------------------------------------------------
    def submit(self, judges: list[Judge], work: Plan, round_: int) -> bool:
        """Send what is not in the cache yet as round `round_`; False when there is nothing to send."""
        batched = [j for j in judges if j.calls_llm and not j.spec.items]
        if round_ == 1:
            self.stats.live = work.count([j for j in judges if j.calls_llm and j.spec.items])
        parts: dict[Endpoint, list[bytes]] = {}      # endpoint -> request lines of the file being filled
        sizes: dict[Endpoint, int] = {}
        part = self.project.reader().execute("SELECT COALESCE(MAX(part), 0) FROM batches WHERE job_id = ?",
                                             (self.job_id,)).fetchone()[0]
        sent_before = self.stats.sent
        cached = 0
        for rendered in render_requests(self.project, work, batched, self.ctx):
            if round_ == 1:
                self.stats.live += sum(1 for _, key, _ in rendered if not key)
            pending = [((item.judge.base_url, item.judge.api_key_ref), key, line) for item, key, line in rendered
                       if line]
            known = self.cached_keys([key for _, key, _ in pending])
            for endpoint, key, line in pending:
                if key in known:
                    cached += 1
                    continue
                if parts.get(endpoint) and (len(parts[endpoint]) >= MAX_REQUESTS
                                            or sizes[endpoint] + len(line) > MAX_BYTES):
                    part += 1
                    self.send(endpoint, parts.pop(endpoint), round_, part)
                    sizes[endpoint] = 0
                parts.setdefault(endpoint, []).append(line)
                sizes[endpoint] = sizes.get(endpoint, 0) + len(line)
        for endpoint, lines in parts.items():
            part += 1
            self.send(endpoint, lines, round_, part)
        if round_ == 1:
            self.stats.cached = cached
        if self.stats.sent == sent_before:
            return False
        self.stats.rounds = round_
        return True

    def cached_keys(self, keys: list[str]) -> set[str]:
        return cached_keys(self.project, keys)

    def send(self, endpoint: Endpoint, lines: list[bytes], round_: int, part: int) -> None:
        """Upload one file, record it, create its batch, record the batch id."""
        self.ctx.check()
        provider = self.provider(*endpoint)
        data = b"".join(lines)
        file_id = provider.upload(f"rageval-job{self.job_id}-round{round_}-part{part}.jsonl", data)
        now = utcnow()
        with self.project.write("record batch file", changed=(Area.JOBS,)) as conn:
            row_id = inserted_id(conn.execute(
                "INSERT INTO batches (job_id, round, part, base_url, api_key_ref, input_file_id, requests, bytes, "
                "status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'uploaded', ?, ?)",
                (self.job_id, round_, part, endpoint[0], endpoint[1], file_id, len(lines), len(data), now,
                 now)))
        self.create(row_id, provider, file_id, round_, part)
        self.stats.sent += len(lines)
        self.stats.batches += 1

    def create(self, row_id: int, provider: Provider, file_id: str, round_: int, part: int,
               resumed: bool = False) -> None:
        """Create the file's batch and record its id. `resumed`: the file was recorded by a process that died
        before recording the batch, which it may have created: look for it (by its metadata) first."""
        metadata = _metadata(self.id, round_, part)
        batch = None
        if resumed:
            since, requests = self.project.reader().execute(
                "SELECT created_at, requests FROM batches WHERE id = ?", (row_id,)).fetchone()
            known = frozenset(r for (r,) in self.project.reader().execute(
                "SELECT remote_id FROM batches WHERE remote_id IS NOT NULL"))
            batch = provider.find(metadata, since=since, requests=requests, known=known)
            if batch is None and not provider.can_create(file_id):
                self.not_sent(row_id, requests)
                return
        if batch is None:
            batch = provider.create(file_id, metadata)
        with self.project.write("record batch", changed=(Area.JOBS,)) as conn:
            conn.execute("UPDATE batches SET remote_id = ?, status = ?, updated_at = ? WHERE id = ?",
                         (batch.id, batch.status, utcnow(), row_id))

    def not_sent(self, row_id: int, requests: int) -> None:
        """A part whose requests went with a process that died before sending them (a provider without files):
        closed as not sent; its requests, not in the cache, go in the next round."""
        with self.project.write("batch not sent", changed=(Area.JOBS,)) as conn:
            conn.execute("UPDATE batches SET status = 'failed', merged = 1, failed = ?, errors = ?, message = ?, "
                         "updated_at = ? WHERE id = ?",
                         (requests, json.dumps({"not_sent": requests}),
                          "the job stopped before this part was sent; its requests go in the next round", utcnow(),
                          row_id))
        self.stats.failed += requests
        self.failed_kinds["not_sent"] += requests
        self.stats.failed_by_kind = dict(self.failed_kinds)

    # --- poll and merge -----------------------------------------------------------------------------------------
    def poll(self) -> None:
        self.stats.polls += 1
        unfinished = self.unfinished()
        for row_id, round_, part, base_url, key_ref, file_id, remote_id, _status in unfinished:
            self.ctx.check()
            provider = self.provider(base_url, key_ref)
            if remote_id is None:     # killed between the upload and the batch: create (or find) it now
                self.create(row_id, provider, file_id, round_, part, resumed=True)
                continue
            batch = self.retrieve(provider, remote_id)
            if batch is None:
                continue
            counts = batch.request_counts
            with self.project.write("batch status", changed=(Area.JOBS,)) as conn:
                conn.execute("UPDATE batches SET status = ?, completed = ?, failed = ?, output_file_id = ?, "
                             "error_file_id = ?, updated_at = ? WHERE id = ?",
                             (str(batch.status)[:40], llm.stated_count(getattr(counts, "completed", 0)) or 0,
                              llm.stated_count(getattr(counts, "failed", 0)) or 0,
                              batch.output_file_id, batch.error_file_id, utcnow(), row_id))
                records.heartbeat(conn, self.id)
            if batch.status in TERMINAL:
                self.merge(row_id, provider, batch)
        self.report()

    def retrieve(self, provider: Provider, remote_id: str) -> Any | None:
        """The batch's state; a failed poll is tried again at the next (POLL_FAILURES in a row stop the job)."""
        try:
            batch = provider.retrieve(remote_id)
        except BatchFailed as exc:
            self._poll_failures += 1
            if self._poll_failures >= POLL_FAILURES:
                raise BatchFailed(f"{exc} ({self._poll_failures} polls in a row failed)") from None
            return None
        self._poll_failures = 0
        return batch

    def merge(self, row_id: int, provider: Provider, batch: Any) -> None:
        """The batch's replies into the request cache and its failures counted, in one transaction with the
        batch's 'merged' mark: merging twice (a kill in between) stores nothing twice."""
        entries: list[CacheRow] = []
        kinds: Counter[str] = Counter()
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            for line in provider.content(file_id).splitlines():
                if not line.strip():
                    continue
                entry, kind = provider.parse(line, self.scrub, self.job_id)
                if entry is not None:
                    entries.append(entry)
                else:
                    kinds[kind] += 1
        errors = getattr(batch, "errors", None)
        message = None
        if batch.status == "failed":
            data = getattr(errors, "data", None) or []
            message = self.scrub("; ".join(f"{getattr(e, 'code', '')}: {getattr(e, 'message', '')}"
                                           for e in data[:3]) or "the provider failed the batch")
            total = self.project.reader().execute("SELECT requests FROM batches WHERE id = ?", (row_id,)).fetchone()[0]
            kinds["batch_failed"] += total - len(entries) - sum(kinds.values())
        with self.project.write("merge batch results", changed=(Area.JOBS,)) as conn:
            conn.executemany(llm.BATCH_CACHE_INSERT, entries)
            conn.execute("UPDATE batches SET merged = 1, status = ?, errors = ?, message = ?, updated_at = ? "
                         "WHERE id = ?", (batch.status, json.dumps(dict(kinds)), message, utcnow(), row_id))
            records.heartbeat(conn, self.id)
        self.stats.merged += len(entries)
        self.stats.failed += sum(kinds.values())
        self.failed_kinds.update(kinds)
        self.stats.failed_by_kind = dict(self.failed_kinds)

    def report(self) -> None:
        row = self.project.reader().execute(
            "SELECT COUNT(*), SUM(merged), SUM(requests), SUM(completed + failed) FROM batches WHERE job_id = ?",
            (self.job_id,)).fetchone()
        batches, merged, requests, processed = (v or 0 for v in row)
        self.ctx.report(processed, max(1, requests),
                        f"{merged}/{batches} batches done · {processed:,}/{requests:,} requests processed at the "
                        f"provider · {self.stats.merged:,} replies received", force=True)

    def cancel_remote(self) -> int:
        cancelled = 0
        for row_id, _r, _p, base_url, key_ref, _f, remote_id, status in self.unfinished():
            if remote_id is None or status in TERMINAL:
                continue
            try:
                batch = self.provider(base_url, key_ref).cancel(remote_id)
            except BatchFailed:
                continue
            cancelled += 1
            with self.project.write("cancel batch", changed=(Area.JOBS,)) as conn:
                conn.execute("UPDATE batches SET status = ?, updated_at = ? WHERE id = ?",
                             (batch.status, utcnow(), row_id))
        return cancelled

    # --- judge ----------------------------------------------------------------------------------------------------
    def judge_rows(self) -> dict[str, Any]:
        """Every row through the live engine, under this job's id: batch replies come from the cache."""

        self.ctx.report(0, max(1, self.stats.rows), "judging the rows from the batch replies", force=True)
        stats = JudgeJob(self.project, self.spec, self.ctx, job_id=self.job_id).run()
        return stats.as_dict()


# --- entry points ------------------------------------------------------------------------------------------------
def run_batch_job(project: Project, spec: JobSpec, ctx: TaskContext | None = None, *, job_id: int | None = None,
                  wait: bool = True, poll_seconds: float = POLL_SECONDS) -> BatchStats:
    """Submit (or, with `job_id`, resume) a batch job; with `wait`, poll until every batch ended and judge the rows."""
    return BatchJob(project, spec, ctx or TaskContext(), job_id, poll_seconds).run(wait=wait)


def is_batch_job(job: dict[str, Any]) -> bool:
    return job["kind"] == "judge" and bool(job["params"].get("batch"))


def batches(project: Project, job_id: int) -> list[dict[str, Any]]:
    cols = ("id", "round", "part", "remote_id", "requests", "bytes", "status", "completed", "failed", "merged",
            "errors", "message", "created_at", "updated_at")
    out = []
    for row in project.reader().execute(f"SELECT {', '.join(cols)} FROM batches WHERE job_id = ? ORDER BY id",
                                        (job_id,)):
        item = dict(zip(cols, row, strict=True))
        item["errors"] = json.loads(item["errors"])
        item["merged"] = bool(item["merged"])
        out.append(item)
    return out


def waiting(project: Project) -> list[dict[str, Any]]:
    """Batch jobs whose process is gone (interrupted, or failed while polling) and whose batches are not all in:
    what reopening the project picks up again."""
    rows = project.reader().execute(
        "SELECT DISTINCT j.id FROM jobs j JOIN batches b ON b.job_id = j.id "
        "WHERE j.status IN ('interrupted', 'failed') AND b.merged = 0 ORDER BY j.id").fetchall()
    return [records.get(project, jid) for (jid,) in rows]


def cancel(project: Project, job_id: int) -> dict[str, Any]:
    """Cancel a batch job: its remote batches (replies already merged stay in the cache) and the job."""

    job = records.get(project, job_id)
    if not is_batch_job(job):
        raise RagevalError(f"job {job_id} is not a batch job")
    known = set(JobSpec.__dataclass_fields__)
    worker = BatchJob(project, JobSpec(**{k: v for k, v in job["params"].items() if k in known}), TaskContext(),
                      job_id)
    count = worker.cancel_remote()
    # batches already ended (or ending now) bring what they answered into the cache; the rest stay recorded:
    # resuming the job collects them
    for row_id, _r, _p, base_url, key_ref, _f, remote_id, _s in worker.unfinished():
        if remote_id is None:
            continue
        try:
            provider = worker.provider(base_url, key_ref)
            batch = provider.retrieve(remote_id)
            if batch.status in TERMINAL:
                worker.merge(row_id, provider, batch)
        except BatchFailed:
            continue
    with project.write("cancel batch job", changed=(Area.JOBS,)) as conn:
        conn.execute("UPDATE jobs SET status = 'cancelled', message = ?, finished_at = ? WHERE id = ?",
                     (f"cancelled: {count} remote batch(es) cancelled", utcnow(), job_id))
    return {"job": job_id, "cancelled_batches": count, "replies_kept": worker.stats.merged}
