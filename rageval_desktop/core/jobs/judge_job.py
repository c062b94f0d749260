"""Run judges over a run's rows: an asyncio loop of its own (one AsyncOpenAI client per endpoint), adaptive
concurrency, bounded retries, an exact-match request cache, a budget, and judgments committed as they arrive
through a commit lane (core/jobs/commit.py) on the project's single writer.

Nothing is lost: a judgment leaves memory only after its commit, and no new call starts while the calls in
flight plus the results not yet committed would exceed the concurrency — so a killed process loses at most
`concurrency` calls, and a re-run skips everything already judged. The job counts only what was committed.
A write that cannot succeed (full disk) stops the job with that reason; a busy project is waited for.
A job holds (judge, run) leases, so a second process on the same pair is refused instead of paying twice.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import JudgeConfigError, RagevalError, WriteFailed
from rageval_desktop.core.base.limiter import AdaptiveLimiter
from rageval_desktop.core.jobs import chains, steps
from rageval_desktop.core.jobs.commit import CommitLane, while_busy
from rageval_desktop.core.jobs.spec import JobSpec, job_items, job_judges, pending_for, still_waiting
from rageval_desktop.core.jobs.work import Item, Plan
from rageval_desktop.core.judges import llm, parsers, prices, rubrics
from rageval_desktop.core.judges.judge import Endpoint, Judge
from rageval_desktop.core.judges.kinds import KindUnavailable, kind_origin, scored_problem
from rageval_desktop.core.judges.registry import note_endpoints
from rageval_desktop.core.judges.secrets import Scrubber, key_problems, resolve_api_key
from rageval_desktop.core.metrics.rowdata import keep_values
from rageval_desktop.core.store import records
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run
from rageval_desktop.core.store.schema import JUDGMENT_TARGET

if TYPE_CHECKING:
    from openai import AsyncOpenAI

SUB_INSERT = ("INSERT INTO judgments (judge_id, run_row_id, passage_rank, idem_key, status, score, label, rationale, "
              "detail, attempts, job_id, created_at, cache_hit) VALUES (?, ?, ?, ?, 'ok', ?, ?, ?, ?, 0, ?, ?, ?) "
              f"ON CONFLICT ({JUDGMENT_TARGET}) DO UPDATE SET score = excluded.score, label = excluded.label, "
              "rationale = excluded.rationale, detail = excluded.detail, job_id = excluded.job_id, "
              "created_at = excluded.created_at")
LOCAL_CHUNK = 256         # embedded judges score this many rows at a time
LOCAL_TIMEOUT = 120.0     # seconds a plug-in kind may take for one verdict (the judge's `timeout` overrides it)
LLM_CHUNK = 256           # LLM items whose text is loaded at a time, as the dispatcher reaches them
REPORT_SECONDS = 0.25     # progress to the caller at most this often
CANCEL_POLL_SECONDS = 0.05


@dataclass
class JobStats:
    job_id: int | None = None
    rows: int = 0                 # work items in this job (after skipping what was already judged)
    skipped: int = 0              # already judged by the same judge, rubric version and model
    skipped_unparsed: int = 0     # of those, rows whose reply never parsed (kept as they are unless redone)
    done: int = 0
    ok: int = 0
    unparsed: int = 0
    errors: int = 0
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    retries: int = 0
    retries_by_kind: dict[str, int] = field(default_factory=dict)   # why: rate_limit, timeout, connection, …
    repair_retries: int = 0
    cache_hits: int = 0
    batch_replies: int = 0        # replies that came from this job's batches (priced at batch rates)
    usage_estimated: int = 0      # replies that stated no token usage: their cost is estimated from their length
    cost_usd: float = 0.0
    seconds: float = 0.0
    judging_seconds: float = 0.0  # since the first call (or local verdict batch): the rate, without the start-up
    stopped: str | None = None    # None (ran to the end) | "cancelled" | "fatal" | "budget" | "write_failed"
    message: str | None = None

    not_saved: int = 0            # results received but not committed when a write failed (redone on resume)
    phase: str = "starting"       # what the job is doing, for a window that would otherwise show 0/N for seconds
    write_busy_retries: int = 0   # commits retried because another process held the write lock

    def usage_note(self) -> str | None:
        return prices.estimated_note(self.usage_estimated)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        # from the first call, not the job's start: planning, the job record and the client are not the rate (it
        # read 0.64-0.68 of the rate reached on short jobs)
        out["rows_per_s"] = self.done / self.judging_seconds if self.judging_seconds else 0.0
        return out


@dataclass
class Entry:
    """What the commit lane writes in one go: a judgment with what travels with it."""
    row: dict[str, Any] | None                   # the judgment (None: only what else the entry carries)
    caches: tuple[dict[str, Any], ...] = ()      # request-cache rows of the replies it used
    subs: tuple[tuple, ...] = ()                 # its sub-judgments (SUB_INSERT parameters): one per nugget/citation
    replaces: tuple[int, int, str] | None = None  # (judge, row, key): the row's other judgments by the judge go
    extras: tuple[tuple[str, tuple], ...] = ()   # other statements (a nugget list a chain made)
    usage_estimated: int = 0                     # its paid replies that stated no token usage


class _Fatal(Exception):
    pass


class JudgeJob:
    def __init__(self, project: Project, spec: JobSpec, ctx: TaskContext, job_id: int | None = None) -> None:
        """`job_id`: run under a job recorded already (a batch job judging its rows from the batch replies)."""
        self.project, self.spec, self.ctx = project, spec, ctx
        self.existing_job = job_id
        self.stats = JobStats()
        self.kinds: Counter[str] = Counter()
        self.started = time.monotonic()
        self.judging_from: float | None = None     # when the first call (or the first local batch) began
        self.spent_usd = 0.0           # every reply received, committed or not: what the budget is kept against
        self.received = 0              # results received (committed or waiting in the lane)
        self.received_hits = 0
        self.in_flight_estimate = 0.0
        self.estimates: dict[str, float] = {}  # idem key -> the cost reserved for that call against the budget
        self._prices: dict[tuple[str | None, bool], tuple[float, float] | None] = {}
        self.scrub = Scrubber()
        self.fatal: str | None = None
        self.silence: defaultdict[Endpoint, llm.Silence] = defaultdict(llm.Silence)   # per endpoint: is it answering
        self.lane: CommitLane[Entry] | None = None
        self._last_report = 0.0
        self._wake: Callable[[], object] | None = None   # tells the dispatcher (in the loop) that a commit made room
        self._limiters: list[AdaptiveLimiter] = []
        self._room: asyncio.Event | None = None  # set (in the event loop) when a call ended or a commit made room
        self.chains = chains.Chains(self)

    def price(self, model: str | None, batch: bool = False) -> tuple[float, float] | None:
        """Looked up once per job: the table does not change while a job runs. `batch`: the batch price."""
        if (model, batch) not in self._prices:
            self._prices[(model, batch)] = (prices.batch_price if batch else prices.price)(self.project, model)
        return self._prices[(model, batch)]

    # --- planning ------------------------------------------------------------------------------
    def judges(self) -> list[Judge]:
        return job_judges(self.project, self.spec)

    def run(self) -> JobStats:
        judges = self.judges()
        if any(j.calls_llm for j in judges):
            llm.preload()           # the client library imports while the rows are planned
        self.stats.phase = "planning: finding the rows already judged"
        self.report(force=True)
        work = job_items(self.project, self.spec, judges)
        self.stats.rows, self.stats.skipped = len(work), work.skipped
        self.stats.skipped_unparsed = work.skipped_unparsed
        busy = [j for j in judges if work.count([j])]          # judges with something to do
        missing = [] if self.spec.offline else key_problems(busy)     # offline: nothing is called, no key is read
        if missing:                     # before any work: not after the local judges have run for a minute
            raise JudgeConfigError("cannot start: " + "; ".join(missing) + "; nothing was judged")
        self.check_budget_possible(busy)
        params = {k: v for k, v in asdict(self.spec).items() if v is not None}
        if any(j.calls_llm for j in busy):   # the job's record names where its calls go (OPENAI_BASE_URL included)
            params["endpoints"] = note_endpoints(self.project, [j for j in busy if j.calls_llm], "judge")
        run_id = find_run(self.project, self.spec.run)
        waiting = pending_for(self.project, [j.id for j in busy if j.calls_llm], run_id,
                                    except_job=self.existing_job)
        if waiting is not None:
            raise RagevalError(still_waiting(waiting) + " — running now would pay for them twice")
        leases, names = [(j.id, run_id) for j in judges], {j.id: j.name for j in judges}
        existing = self.existing_job
        if existing is None:
            job_id = while_busy(lambda: records.start(self.project, "judge", params, len(work), leases=leases,
                                                      lease_names=names), self.ctx)
        else:
            job_id = existing
            while_busy(lambda: records.restart(self.project, existing, len(work), leases=leases, lease_names=names),
                       self.ctx)
        self.stats.job_id = job_id
        self.lane = CommitLane(self.project, self.write_batch, on_committed=self.committed,
                               heartbeat=lambda conn: records.heartbeat(conn, job_id),
                               op="save judgments", changed=(Area.JUDGMENTS,)).start()
        status, message = "done", None
        try:
            self.report(force=True)
            local = [j for j in busy if not j.calls_llm]
            if local:
                self.stats.phase = "judging locally: " + ", ".join(j.name for j in local)
                self.report(force=True)
                self.judging_from = self.judging_from or time.monotonic()
                self.run_local(work, local)
            llm_judges = [j for j in busy if j.calls_llm]
            # passage grades first: nugget creation reads the grades of the same job
            first = [j for j in llm_judges if j.spec.items != "nugget"]
            then = [j for j in llm_judges if j.spec.items == "nugget"]
            for phase in (first, then):
                if phase and self.stats.stopped is None and self.lane.error is None:
                    if any(j.spec.items for j in phase):
                        self.lane.drain()            # the grades this phase reads are committed
                    self.stats.phase = "first calls: " + ", ".join(sorted({j.base_url or "the default endpoint"
                                                                           for j in phase}))
                    self.report(force=True)
                    asyncio.run(self.run_llm(work, phase))
        except _Fatal as exc:
            status, message = "failed", str(exc)
            self.stats.stopped, self.stats.message = "fatal", str(exc)
        except BaseException as exc:
            self.close_lane()
            self._finish("failed", self.scrub(f"{type(exc).__name__}: {exc}"))
            raise
        self.close_lane()
        if self.lane.error is not None:
            status = "failed"
            message = (f"stopped: {self.lane.error}; {self.stats.done} judgments were saved, "
                       f"{self.stats.not_saved} received were not and will be redone on resume")
            self.stats.stopped, self.stats.message = "write_failed", message
        elif self.stats.stopped == "cancelled":
            status, message = "cancelled", "cancelled by the user; resume to finish"
        elif self.stats.stopped == "budget":
            status, message = "done", self.stats.message
        self.stats.seconds = time.monotonic() - self.started
        self.stats.judging_seconds = time.monotonic() - self.judging_from if self.judging_from else 0.0
        self._finish(status, message)
        if status == "done" and self.stats.stopped is None:    # (with nothing to do too: a run from before v22)
            self.keep_values(run_id)
        self.report(force=True)
        return self.stats

    def keep_values(self, run_id: int) -> None:
        """A large run's judgments kept for `metrics` and `compare` once the job has saved its own
        (core.metrics.values): a cache, so a write that fails here loses nothing — the reads then join the tables."""
        try:
            keep_values(self.project, run_id)
        except (RagevalError, sqlite3.Error):
            self.stats.phase = "the run's values were not kept for quick reads; metrics read its rows instead"

    def close_lane(self) -> None:
        assert self.lane is not None
        self.lane.close()
        self.stats.not_saved = self.lane.pending()
        self.stats.write_busy_retries = self.lane.busy_retries

    def _finish(self, status: str, message: str | None) -> None:
        """Record the end; if even that write fails (the disk is still full), the job row is left for the next
        open to mark interrupted — and the job's own stats still say what happened."""
        try:
            records.finish(self.project, self.job_id, status, message)
        except WriteFailed as exc:
            if self.stats.stopped != "write_failed":
                self.stats.stopped, self.stats.message = "write_failed", f"stopped: {exc}"

    def check_budget_possible(self, judges: list[Judge]) -> None:
        if self.spec.budget_usd is None:
            return
        for judge in [j for j in judges if j.calls_llm]:
            if self.price(judge.model) is None:
                raise RagevalError(f"no price for model '{judge.model}', so the budget cannot be kept",
                                   cli_hint=f"set one with: rageval prices set PROJECT {judge.model} --input USD "
                                            "--output USD",
                                   gui_hint="set the model's price (Judges → Estimate cost shows which are missing)")

    # --- results -------------------------------------------------------------------------------
    def record(self, item: Item, status: str, *, verdict: parsers.Verdict | None = None, raw: str | None = None,
               error_kind: str | None = None, attempts: int = 1, repairs: int = 0, latency_ms: float | None = None,
               prompt_tokens: int | None = None, completion_tokens: int | None = None, cost: float | None = None,
               request_id: str | None = None, cache_hit: bool = False, caches: tuple[dict[str, Any], ...] = (),
               note: str | None = None, detail: dict[str, Any] | None = None, subs: Sequence[dict[str, Any]] = (),
               replaces: bool = False, confidence: float | None = None, usage_estimated: int = 0) -> None:
        """Hand one result to the commit lane; it is counted when it is committed. A multi-call judge's result
        brings its `detail`, its sub-judgments (`subs`: one per nugget or citation) and `replaces` the row's
        earlier judgments by the same judge."""
        scrub = self.scrub
        row = {"judge_id": item.judge.id, "run_row_id": item.run_row_id, "passage_rank": item.passage_rank,
               "idem_key": item.idem_key, "status": status, "error_kind": error_kind,
               "score": verdict.score if verdict else None, "label": scrub(verdict.label) if verdict else None,
               "rationale": scrub(verdict.rationale if verdict else note), "raw_output": scrub(raw),
               "attempts": attempts, "repair_retries": repairs, "latency_ms": latency_ms,
               "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "cost_usd": cost,
               "request_id": scrub(request_id), "job_id": self.stats.job_id, "created_at": utcnow(),
               "cache_hit": int(cache_hit), "confidence": confidence,
               "detail": None if detail is None else scrub(json.dumps(detail, ensure_ascii=False))}
        used = tuple(("UPDATE llm_cache SET batch_job = NULL WHERE key = ?", (c["consume"],))
                     for c in caches if c and "consume" in c)
        caches = tuple({**c, "content": scrub(c["content"]), "request_id": scrub(c.get("request_id"))}
                       for c in caches if c and "consume" not in c)
        subs_rows = tuple((item.judge.id, item.run_row_id, sub["rank"], chains.sub_key(item, sub["rank"]), sub["score"],
                           scrub(sub["label"]), scrub(sub["rationale"]),
                           scrub(json.dumps(sub["detail"], ensure_ascii=False)), self.stats.job_id,
                           row["created_at"], int(cache_hit)) for sub in subs)
        self.spent_usd += cost or 0.0
        self.received += 1
        self.received_hits += cache_hit
        assert self.lane is not None
        self.lane.put(Entry(row, caches, subs_rows,
                            (item.judge.id, item.run_row_id, item.idem_key) if replaces else None, used,
                            usage_estimated))

    def save_extra(self, statement: tuple[str, tuple]) -> None:
        """Something a judgment depends on (a nugget list a chain made), committed through the same lane."""
        assert self.lane is not None
        self.lane.put(Entry(None, extras=(statement,)))

    def write_batch(self, conn: sqlite3.Connection, batch: list[Entry]) -> None:
        replaced = [e.replaces for e in batch if e.replaces]
        if replaced:   # the row's earlier judgments by this judge (against an older nugget list, say)
            conn.executemany("DELETE FROM judgments WHERE judge_id = ? AND run_row_id = ? AND idem_key != ?",
                             replaced)
        rows = [e.row for e in batch if e.row is not None]
        if rows:
            cols = list(rows[0])
            update = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in JUDGMENT_TARGET.split(", "))
            conn.executemany(f"INSERT INTO judgments ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
                             f"ON CONFLICT ({JUDGMENT_TARGET}) DO UPDATE SET {update}",
                             [tuple(r.values()) for r in rows])
        subs = [sub for e in batch for sub in e.subs]
        if subs:
            conn.executemany(SUB_INSERT, subs)
        for e in batch:
            for sql, params in e.extras:
                conn.execute(sql, params)
        caches = [c for e in batch for c in e.caches]
        if caches:
            conn.executemany(llm.CACHE_INSERT, caches)
        spent = self.stats.cost_usd + sum(r.get("cost_usd") or 0.0 for r in rows)
        estimated = self.stats.usage_estimated + sum(e.usage_estimated for e in batch)
        records.progress(conn, self.job_id, self.stats.done + len(rows), spent, estimated)

    def committed(self, batch: list[Entry]) -> None:
        """Called by the lane after the batch's transaction committed: now it counts."""
        wake = self._wake
        if wake is not None:
            try:
                wake()
            except RuntimeError:  # the event loop closed meanwhile
                pass
        s = self.stats
        for entry in batch:
            row = entry.row
            if row is None:
                continue
            status = row["status"]
            s.done += 1
            s.ok += status == "ok"
            s.unparsed += status == "unparsed"
            if status == "error":
                s.errors += 1
                self.kinds[row["error_kind"] or "error"] += 1
            s.cost_usd += row["cost_usd"] or 0.0
            s.usage_estimated += entry.usage_estimated
            s.cache_hits += row["cache_hit"]
            s.repair_retries += row["repair_retries"]
        s.errors_by_kind = dict(self.kinds)

    def report(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_report < REPORT_SECONDS:
            return
        self._last_report = now
        s = self.stats
        s.seconds = now - self.started
        s.judging_seconds = now - self.judging_from if self.judging_from else 0.0
        if s.done and not s.phase.startswith("judging"):
            s.phase = "judging"
        rate = s.done / s.judging_seconds if s.judging_seconds > 0 else 0.0
        eta = (s.rows - s.done) / rate if rate > 0 else None
        bits = [f"{s.done}/{s.rows}", f"{rate:.1f} rows/s"]
        if eta is not None and s.done < s.rows:
            bits.append(f"ETA {eta:.0f} s")
        if s.errors:
            bits.append(f"{s.errors} errors")
        if s.unparsed:
            bits.append(f"{s.unparsed} unparsed")
        if s.cost_usd:
            bits.append(f"${s.cost_usd:.4f}")
        self.ctx.report(s.done, s.rows, " · ".join(bits), force=force)
        if self.ctx.on_stats:
            self.ctx.on_stats({**s.as_dict(), "eta_s": eta})

    # --- embedded judges -----------------------------------------------------------------------
    def record_missing(self, item: Item) -> None:
        """A row with nothing to judge (an empty answer, no reference): an error of its kind, and no call."""
        self.record(item, "error", error_kind=f"no_{item.missing}",
                    raw=f"nothing to judge: the {item.missing} is empty", attempts=0)

    def run_local(self, work: Plan, judges: list[Judge]) -> None:
        """Embedded judges, a chunk at a time: the chunk's text is loaded, scored, handed to the lane and let go, so
        the rate and the memory stay the same however long the run."""
        assert self.lane is not None
        for chunk in work.chunks(judges, LOCAL_CHUNK):
            if not self.lane.wait_room(LOCAL_CHUNK):  # a write failed: stop, nothing more is computed
                return
            if self.ctx.cancelled:
                self.stats.stopped = "cancelled"
                return
            for item in [i for i in chunk if i.missing]:
                self.record_missing(item)
            groups: dict[int, list[Item]] = {}
            for item in chunk:
                if not item.missing:
                    groups.setdefault(item.judge.id, []).append(item)
            for group in groups.values():
                if not self.score_locally(group[0].judge, group):
                    return
            self.report()

    def score_locally(self, judge: Judge, items: list[Item]) -> bool:
        """A judge's items in this chunk, scored by its kind and handed to the lane one by one (the job may stop
        between two: cancel). False: the job stops (cancelled). A kind whose model is missing stops the job and
        says how to add it. Every verdict is checked at the boundary (a finite number on the metric's scale, text
        label and rationale): one that is not is an error row with the reason, never stored as ok. A plug-in kind
        runs on a thread of its own with a time limit per verdict; one that raises, hangs or returns the wrong
        number of verdicts stops the job with a message naming it, and what was saved stays saved."""
        origin = kind_origin(judge.kind)
        try:
            verdicts = (_Bounded(judge.kind_of.score, self.project, judge, items, self.local_timeout(judge))
                        if origin else judge.kind_of.score(self.project, judge, items))
            count = 0
            for scored in verdicts:
                if count >= len(items):
                    raise _PluginFailed(f"returned more verdicts than the {len(items)} items it was given")
                item = items[count]
                count += 1
                problem = scored_problem(judge.spec, scored)
                if problem is not None:
                    self.record(item, "error", error_kind="bad_score", raw=problem, attempts=1)
                else:
                    verdict = parsers.Verdict(float(scored.score), scored.label, scored.rationale)
                    sure = getattr(scored, "confidence", None)
                    self.record(item, "ok", verdict=verdict, detail=scored.detail, latency_ms=scored.latency_ms,
                                cost=0.0, confidence=None if sure is None else float(sure))
                if self.ctx.cancelled:
                    self.stats.stopped = "cancelled"
                    return False
            if count < len(items):
                raise _PluginFailed(f"returned {count} verdicts for {len(items)} items")
        except KindUnavailable as exc:
            raise _Fatal(str(exc)) from None
        except _PluginFailed as exc:
            raise _Fatal(f"judge '{judge.name}' (kind '{judge.kind}'{', ' + origin if origin else ''}) {exc}; the "
                         "job stopped, the verdicts before it are saved") from None
        except Exception as exc:
            if not origin:
                raise
            raise _Fatal(f"judge '{judge.name}' (kind '{judge.kind}', {origin}) failed: {type(exc).__name__}: "
                         f"{str(exc)[:200]}; the job stopped, the verdicts before it are saved") from None
        return True

    def local_timeout(self, judge: Judge) -> float:
        """Seconds a plug-in kind may take for one verdict (its first includes loading a model): the judge's
        `timeout` setting, else LOCAL_TIMEOUT."""
        value = judge.params.get("timeout")
        return float(value) if isinstance(value, (int, float)) and value > 0 else LOCAL_TIMEOUT

    # --- LLM judges ----------------------------------------------------------------------------
    async def run_llm(self, work: Plan, judges: list[Judge]) -> None:
        clients: dict[Endpoint, AsyncOpenAI] = {}
        limiters: dict[Endpoint, AdaptiveLimiter] = {}
        rubric_cache: dict[int, rubrics.Rubric] = {}
        conn = self.project.reader()
        for j in judges:
            endpoint = (j.base_url, j.api_key_ref)
            if endpoint not in clients:
                try:
                    key = "offline: no call is made" if self.spec.offline else resolve_api_key(j.api_key_ref)
                except RagevalError as exc:
                    raise _Fatal(str(exc)) from None
                self.scrub.add(key)
                clients[endpoint] = llm.make_client(j.base_url, key, self.timeout(j))
                limiters[endpoint] = AdaptiveLimiter(self.spec.concurrency or j.param("concurrency"),
                                                     self.spec.rpm or j.param("rpm"))
            if j.rubric_key not in rubric_cache:
                rubric_cache[j.rubric_key] = rubrics.load(conn, j.rubric_key)
        tasks: set[asyncio.Task[None]] = set()
        cap = max(limiter.max for limiter in limiters.values())
        self._limiters = list(limiters.values())
        self._room = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._wake = lambda: loop.call_soon_threadsafe(self._room.set)
        self.judging_from = self.judging_from or time.monotonic()   # the clients are made: the calls begin
        dispatcher = asyncio.create_task(self.dispatch(self.llm_items(work, judges), clients, limiters, rubric_cache,
                                                       tasks, cap))
        watcher = asyncio.create_task(self.watch(dispatcher, tasks))
        try:
            try:
                await dispatcher
            except asyncio.CancelledError:
                if not self.stopping_now():
                    raise
            while tasks:
                await asyncio.gather(*list(tasks), return_exceptions=True)
        finally:
            self._wake = None  # the loop is about to close: later commits need not wake anyone
            watcher.cancel()
            for client in clients.values():
                await client.close()
        never = [j for j in judges if self.silence[(j.base_url, j.api_key_ref)].never()]
        if never and not self.fatal and not self.stopping_now():   # fewer rows than llm.UNREACHABLE, none answered
            judge = never[0]
            self.fatal = self.scrub(llm.unreachable(judge.name, judge.base_url,
                                                    self.silence[(judge.base_url, judge.api_key_ref)].run))
        if self.fatal:
            raise _Fatal(self.fatal)
        if self.ctx.cancelled and self.stats.stopped is None:
            self.stats.stopped = "cancelled"

    def stopping_now(self) -> bool:
        """Stop at once, cancelling the calls in flight: the user cancelled, or results can no longer be saved."""
        return self.ctx.cancelled or (self.lane is not None and self.lane.error is not None)

    def llm_items(self, work: Plan, judges: list[Judge]) -> Iterator[Item]:
        """The phase's items, their text loaded a chunk at a time as the dispatcher reaches them; a row with nothing
        to judge is recorded as such here, without a call."""
        for chunk in work.chunks(judges, LLM_CHUNK):
            if any(i.judge.spec.items for i in chunk):
                chains.prepare(self.project, [i for i in chunk if not i.missing])
            for item in chunk:
                if item.missing:
                    self.record_missing(item)
                else:
                    yield item

    async def dispatch(self, items: Iterator[Item], clients: dict, limiters: dict, rubric_cache: dict,
                       tasks: set[asyncio.Task[None]], cap: int) -> None:
        room = self._room
        assert room is not None
        loop = asyncio.get_running_loop()
        for item in items:
            # calls in flight + results not yet committed never exceed the concurrency: a kill loses <= cap calls
            while self.busy_slots(tasks) >= cap and not self.stopping_now():
                room.clear()
                # woken by a call's end or a commit, else in 50 ms (a stall, a cancel); not wait_for, whose task
                # and waiter each wait their turn in the event loop behind a burst of replies
                poll = loop.call_later(0.05, room.set)
                try:
                    await room.wait()
                finally:
                    poll.cancel()
            endpoint = (item.judge.base_url, item.judge.api_key_ref)
            limiter = limiters[endpoint]
            ticket = await limiter.acquire()
            if self.fatal or self.stopping_now() or self.over_budget(item):  # stop dispatching
                limiter.release_nowait(ticket)
                return
            if item.judge.spec.items:   # several calls per row: each takes its own slot
                limiter.release_nowait(ticket)
                work = self.chains.run(item, clients[endpoint], limiter, rubric_cache[item.judge.rubric_key])
            else:
                work = self.judge_one(item, rubric_cache[item.judge.rubric_key], clients[endpoint], limiter, ticket)
            task = asyncio.create_task(self.guarded(item, work))
            tasks.add(task)
            task.add_done_callback(self._done_callback(tasks, room))
            self.report()

    @staticmethod
    def _done_callback(tasks: set[asyncio.Task[None]], room: asyncio.Event) -> Callable[[asyncio.Task[None]], None]:
        def done(task: asyncio.Task[None]) -> None:
            tasks.discard(task)
            room.set()
        return done

    @property
    def job_id(self) -> int:
        """The job's record (set when the job starts)."""
        assert self.stats.job_id is not None
        return self.stats.job_id

    def busy_slots(self, tasks: set[asyncio.Task[None]]) -> int:
        """Calls in flight (not counting hung ones the limiter gave up waiting for) + results not committed."""
        assert self.lane is not None
        stalled = sum(limiter.stalled for limiter in self._limiters)
        return len(tasks) - stalled + self.lane.pending()

    async def watch(self, dispatcher: asyncio.Task[None], tasks: set[asyncio.Task[None]]) -> None:
        """Within a second of a cancel (or of a failed write), cancel the calls in flight, not only new ones."""
        while True:
            await asyncio.sleep(CANCEL_POLL_SECONDS)
            self.report()
            if self.stopping_now():
                dispatcher.cancel()
                for task in list(tasks):
                    task.cancel()
                return

    def timeout(self, judge: Judge) -> float:
        return float(self.spec.timeout or judge.param("timeout"))

    def over_budget(self, item: Item) -> bool:
        if self.spec.budget_usd is None:
            return False
        price = self.price(item.judge.model)
        calls = self.stats.calls or 0
        if calls:
            per_call = self.spent_usd / max(1, self.received - self.received_hits)
        else:  # before any reply: the prompt's length and the most the judge may write
            chars = sum(len(v) for v in item.fields.values())
            per_call = prices.cost(price, chars // 4 + 200, item.judge.param("max_tokens")) or 0.0
        if self.spent_usd + self.in_flight_estimate + per_call > self.spec.budget_usd:
            self.stats.stopped = "budget"
            self.stats.message = (f"stopped before the budget of ${self.spec.budget_usd:.4f} would be exceeded "
                                  f"(spent ${self.spent_usd:.4f}); resume with a larger budget to finish")
            return True
        self.in_flight_estimate += per_call
        self.estimates[item.idem_key] = per_call
        return False

    async def guarded(self, item: Item, work: Awaitable[object]) -> None:
        """A bug in scoring one row becomes that row's recorded error, not a silently lost row. A cancelled call
        records nothing: the row is left to do."""
        try:
            await work
        except Exception as exc:
            self.record(item, "error", error_kind="internal", raw=f"{type(exc).__name__}: {exc}", attempts=0)

    async def judge_one(self, item: Item, rubric: rubrics.Rubric, client: AsyncOpenAI, limiter: AdaptiveLimiter,
                        ticket: int) -> None:
        """Starts holding the limiter slot (`ticket`) the dispatcher acquired; the first call releases it."""
        estimate = self.estimates.pop(item.idem_key, 0.0)
        trace = steps.Trace()
        try:
            verdict = await steps.ask(
                self, item, client, limiter, rubric, item.fields,
                lambda text: parsers.parse(rubric.output_format, text, rubric.scale_min, rubric.scale_max),
                trace, ticket=ticket)
            self.record(item, "ok", verdict=verdict, **trace.record_args())
        except steps.Gone:
            return
        except steps.StepFailed as failure:
            self.record(item, failure.status, error_kind=failure.kind, note=failure.note, **trace.record_args())
        finally:
            self.in_flight_estimate = max(0.0, self.in_flight_estimate - estimate)

    def cache_row(self, item: Item, messages: list[dict], params: dict, reply: llm.Reply,
                  hit: bool) -> dict[str, Any] | None:
        """The cache entry for a reply fetched now (None for a reply that came from the cache)."""
        if reply.batch_job is not None:   # the judgment that records it marks it used (priced once)
            return {"consume": llm.cache_key(item.judge.base_url, item.judge.model, messages, params)}
        if hit or not self.spec.use_cache:
            return None
        return llm.cache_entry(llm.cache_key(item.judge.base_url, item.judge.model, messages, params),
                               item.judge.model, reply, self.scrub)

    async def call(self, item: Item, client: AsyncOpenAI, limiter: AdaptiveLimiter, messages: list[dict], params: dict,
                   ticket: int | None = None) -> tuple[llm.Reply, bool, int] | None:
        """(reply, from cache, attempts), or None when the item ended as an error (recorded here) or the job is
        stopping (left to do)."""
        judge = item.judge
        offline = self.spec.offline      # replies an outside engine made (in the cache), or nothing: never a call
        if self.spec.use_cache or self.spec.batch or offline:
            hit = llm.cached(self.project.reader(), llm.cache_key(judge.base_url, judge.model, messages, params))
            if hit and (self.spec.use_cache or offline or hit.batch_job is not None):
                if ticket is not None:
                    await limiter.release("other", ticket)
                if hit.batch_job is not None:
                    # a batch reply not used yet: the first judgment that uses it pays for it, at the batch price
                    self.stats.batch_replies += 1
                    return hit, False, 1
                return hit, True, 0
        if offline:                      # no reply yet: left to do
            if ticket is not None:
                await limiter.release("other", ticket)
            return None
        retries = self.spec.max_retries if self.spec.max_retries is not None else judge.param("max_retries")

        def count() -> None:
            self.stats.calls += 1

        def retried(kind: str) -> None:     # counted as it happens: a call stopped mid-retry counts its retries too
            self.stats.retries += 1
            by_kind = self.stats.retries_by_kind
            by_kind[kind] = by_kind.get(kind, 0) + 1

        try:
            reply, attempts = await llm.call_with_retries(
                client, limiter, judge.model or "", messages, params, self.timeout(judge), retries,
                stopping=lambda: bool(self.fatal or self.stopping_now()), ticket=ticket, on_call=count,
                on_retry=retried)
        except llm.Stopped:
            return None
        except llm.CallFailed as failure:
            attempts = getattr(failure, "attempts", 1)
            silence = self.silence[(judge.base_url, judge.api_key_ref)]
            if failure.fatal:
                self.fatal = self.fatal or self.scrub(str(failure))
            else:
                self.record(item, "error", error_kind=failure.kind, raw=str(failure), attempts=attempts)
                if silence.failed(failure):
                    self.fatal = self.fatal or self.scrub(
                        llm.unreachable(judge.name, judge.base_url, silence.run, failure))
            return None
        self.silence[(judge.base_url, judge.api_key_ref)].heard()
        return reply, False, attempts


def run_judge_job(project: Project, spec: JobSpec, ctx: TaskContext | None = None) -> JobStats:
    return JudgeJob(project, spec, ctx or TaskContext()).run()


class _PluginFailed(Exception):
    """A plug-in kind broke its protocol (too many or too few verdicts, no verdict in time)."""


class _Bounded:
    """A plug-in kind's `score`, run on a daemon thread of its own and read with a time limit per verdict: a hanging
    plug-in stops the job (its thread is left behind, it cannot be killed; the process ends without it) instead of
    holding the job in `running` for ever."""

    def __init__(self, score: Callable[..., Iterator[Any]], project: Project, judge: Judge, items: list[Item],
                 timeout: float) -> None:
        import queue
        import threading

        self.timeout = timeout
        self.out: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=64)
        self.stop = threading.Event()

        def produce() -> None:
            try:
                for scored in score(project, judge, items):
                    if self.stop.is_set():
                        return
                    self.out.put(("verdict", scored))
                self.out.put(("end", None))
            except BaseException as exc:   # handed to the job, which names the plug-in
                self.out.put(("error", exc))

        threading.Thread(target=produce, name=f"kind-{judge.kind}", daemon=True).start()

    def __iter__(self) -> Iterator[Any]:
        import queue

        try:
            while True:
                try:
                    what, value = self.out.get(timeout=self.timeout)
                except queue.Empty:
                    raise _PluginFailed(f"gave no verdict in {self.timeout:g} s (its time limit per verdict: the "
                                        "judge's timeout setting)") from None
                if what == "end":
                    return
                if what == "error":
                    raise value
                yield value
        finally:
            self.stop.set()
