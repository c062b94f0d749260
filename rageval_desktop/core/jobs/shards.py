"""Judge jobs for engines outside the app (`rageval judge --export-shards DIR`, `--import-results FILES`): vLLM's
offline batch runner (`python -m vllm.entrypoints.openai.run_batch`), Ray Data LLM, or any runner that reads the
OpenAI batch request format and writes the batch output format.

1. **Export** plans the job as a live job does (the same items, keys and request cache) and writes each single-call
   LLM judgment's request, rendered exactly as the live job would send it, as one line of a JSONL shard:
   `{"custom_id": KEY, "method": "POST", "url": "/v1/chat/completions", "body": {...}}`. KEY is the request cache's
   key (a hash of the endpoint, model, messages and sampling), so a reply can only ever land on the request it
   answers. Requests whose reply is in the cache are not written; identical requests are written once. Each shard is
   written to a temporary name and renamed, so a killed export leaves whole shards only, and exporting again writes
   the same shards. Multi-call judges (nuggets, citation support) are left out: they are judged live.
   The project keeps each export (its run, its judges' fingerprints) and every key it wrote (`outside_exports`,
   `outside_keys`), before the shard holding them is written; the manifest names the export and a hash of its keys.
2. **Import** reads output files (`{"custom_id", "response": {"status_code", "body"}, "error"}` a line, as vLLM's
   run_batch and the OpenAI Batch API write them) and keeps each reply in the request cache under its custom_id, a
   chunk of lines a transaction: a key already there is kept as it was, so any order, any subset and importing twice
   store nothing twice. Only a key an export of the job's run wrote is kept: a line answering anything else (another
   run's requests, keys no export wrote) is refused and numbered, so a results file can answer only what was asked.
   Replies are scrubbed of the judges' keys as the live path scrubs them (a proxy that echoes the key). A line that
   is not a reply (an error, a non-200 status, a malformed or too deeply nested line) is counted by kind, numbered,
   and stored nowhere.
3. **Judge** then runs the live engine offline over the rows whose replies are cached: each reply is parsed and
   written as a live reply would be, costing nothing (the engine's cost is not the app's to know); a reply that does
   not parse is recorded as unparsed (no repair request is sent: nothing is called). What was not answered stays to
   be judged — export again for what is left, or judge it live.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.jobs.batch import cached_keys, render_requests
from rageval_desktop.core.jobs.batch_api import CacheRow, parse_reply
from rageval_desktop.core.jobs.judge_job import JobStats, JudgeJob
from rageval_desktop.core.jobs.spec import JobSpec, job_items, job_judges
from rageval_desktop.core.judges import llm
from rageval_desktop.core.judges.fingerprint import fingerprint
from rageval_desktop.core.judges.judge import Judge
from rageval_desktop.core.judges.registry import list_judges
from rageval_desktop.core.judges.secrets import Scrubber, resolve_api_key
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

SHARD_REQUESTS = 10_000           # requests per shard (vLLM and Ray read shards in parallel)
IMPORT_CHUNK = 2000               # reply lines kept per transaction
MAX_LINE = 64 * 1024 ** 2         # one output line at most (a reply with log-probabilities is large; not this)
SHARD_GLOB = "shard-*.jsonl"
# "_": the readers of a folder of shards (Ray Data's read_json, pyarrow's datasets, Spark) skip it; `manifest.json`
# was read as one more request (73 rows for 72)
MANIFEST = "_manifest.json"
OLD_MANIFEST = "manifest.json"


@dataclass
class ExportStats:
    folder: str
    requests: int = 0             # request lines written
    cached: int = 0               # items whose reply is in the cache already: not written
    duplicates: int = 0           # items whose request another item makes: written once
    live: int = 0                 # multi-call items and rows with nothing to judge: left to a live run
    shards: list[str] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)   # shard -> the one model its requests name

    def as_dict(self) -> dict[str, object]:
        return {"folder": self.folder, "requests": self.requests, "cached": self.cached,
                "duplicates": self.duplicates, "live": self.live, "shards": self.shards, "models": self.models}


@dataclass
class Offline:
    """One judge's part of an import: the offline job over the rows it has replies for (None: no such row), and its
    rows still waiting for a reply."""
    job: JobStats | None
    unanswered: int


@dataclass
class ImportStats:
    files: int = 0
    lines: int = 0
    stored: int = 0               # replies new to the cache
    known: int = 0                # replies the cache had already (an import repeated, a shard answered twice)
    failed: int = 0               # lines that carry no reply
    failed_by_kind: dict[str, int] = field(default_factory=dict)
    refused: int = 0              # replies to requests no export of the run wrote: not kept
    numbered: dict[str, dict[str, list[int]]] = field(default_factory=dict)   # file -> why -> line numbers
    judged: dict[str, Offline] = field(default_factory=dict)   # per judge

    def note(self, path: Path, why: str, line: int) -> None:
        self.numbered.setdefault(str(path), {}).setdefault(why, []).append(line)

    def lines_of(self, why: str) -> list[str]:
        """'FILE: lines 3-5, 9' for each file with lines refused or failed for `why` ('refused', or a failed kind)."""
        return [f"{name}: lines {spans(found[why])}" for name, found in self.numbered.items() if why in found]

    def as_dict(self) -> dict[str, object]:
        return {"files": self.files, "lines": self.lines, "stored": self.stored, "known": self.known,
                "failed": self.failed, "failed_by_kind": self.failed_by_kind, "refused": self.refused,
                "lines_by_file": self.numbered,
                "judged": {name: {"job": None if o.job is None else o.job.as_dict(), "unanswered": o.unanswered}
                           for name, o in self.judged.items()}}


def spans(numbers: list[int]) -> str:
    """3, 4, 5, 9 -> '3-5, 9'."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and n == int(out[-1].split("-")[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _exportable(judges: list[Judge]) -> list[Judge]:
    return [j for j in judges if j.calls_llm and not j.spec.items]


def export_shards(project: Project, spec: JobSpec, folder: str | Path, *, shard_requests: int = SHARD_REQUESTS,
                  ctx: TaskContext | None = None) -> ExportStats:
    """Write the job's requests not answered yet as JSONL shards in `folder` (made if missing; shards written
    before by an export of another job are refused, not mixed)."""
    ctx = ctx or TaskContext()
    out = Path(folder)
    judges = job_judges(project, spec)
    single = _exportable(judges)
    if not single:
        raise RagevalError("none of these judges makes one model call a row: only LLM judges of single-call metrics "
                           "(not nuggets or citation support) can be judged by an outside engine")
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / MANIFEST
    if not manifest.exists() and (out / OLD_MANIFEST).is_file():      # an export made before 0.3: its manifest
        os.replace(out / OLD_MANIFEST, manifest)
    identity = {"project": str(project.path.resolve()), "run": spec.run, "judges": sorted(j.name for j in single),
                "rows": {"slice": spec.slice_tag, "sample": spec.sample_id, "rated_only": spec.rated_only,
                         "only_failed": spec.only_failed, "redo_unparsed": spec.redo_failed}}
    if manifest.exists():
        try:
            before = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            before = {}
        if {k: before.get(k) for k in identity} != identity:
            raise RagevalError(f"{out} holds the shards of another job; export into an empty folder")
    elif any(out.glob(SHARD_GLOB)):
        raise RagevalError(f"{out} holds shards that are not this job's; export into an empty folder")
    # the folder is this job's before any shard is written: a killed export is exported again, never refused
    export = _planned(project, spec, single, out)
    identity_now = {**identity, "export": export, "judge_fingerprints": {
        j.name: hashlib.sha256(json.dumps(fingerprint(project, j), sort_keys=True).encode()).hexdigest()[:16]
        for j in single}}
    _write_manifest(manifest, {**identity_now, "created_at": utcnow(), "complete": False})
    for old in [*out.glob(SHARD_GLOB), *out.glob(".shard-*.part")]:   # exporting again writes what is left to
        old.unlink()                                                    # answer, from shard 1 (a killed one's part)
    stats = ExportStats(folder=str(out))
    work = job_items(project, replace(spec, judges=[j.name for j in judges]), judges)
    stats.live = work.count([j for j in judges if j not in single])
    # one model a shard: OpenAI's Batch API and vLLM's run_batch (`--model`) take one model a file
    lines: dict[str, list[bytes]] = {}
    planned: list[str] = []
    models = stats.models

    def flush(model: str) -> None:
        if not lines.get(model):
            return
        _plan(project, export, planned)     # the keys are the project's before the shard that asks them exists
        name = f"shard-{len(stats.shards) + 1:05d}.jsonl"
        part = out / f".{name}.part"
        with part.open("wb") as f:
            f.writelines(lines[model])
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, out / name)
        stats.shards.append(name)
        models[name] = model
        lines[model] = []

    total = max(1, work.count(single))
    for rendered in render_requests(project, work, single, ctx):
        stats.live += sum(1 for _, key, _ in rendered if not key)             # nothing to judge: a live run's
        stats.duplicates += sum(1 for _, key, line in rendered if key and not line)
        known = cached_keys(project, [key for _, key, line in rendered if line])
        for item, key, line in (r for r in rendered if r[2]):
            if key in known:
                stats.cached += 1
                continue
            model = str(item.judge.model or "")
            lines.setdefault(model, []).append(line)
            planned.append(key)
            stats.requests += 1
            if len(lines[model]) >= shard_requests:
                flush(model)
        ctx.report(stats.requests + stats.cached, total, f"{stats.requests:,} requests written")
    for model in list(lines):
        flush(model)
    digest = _finish(project, export, stats.requests)
    _write_manifest(manifest, {**identity_now, "created_at": utcnow(), "complete": True, "requests": stats.requests,
                               "planned_keys_sha256": digest, "shards": stats.shards, "models": models,
                               "format": "openai-batch"})
    return stats


def _planned(project: Project, spec: JobSpec, judges: list[Judge], folder: Path) -> int:
    """A new export of `spec`'s run on record (its judges and their fingerprints); its id."""
    run = find_run(project, spec.run)
    named = [{"name": j.name, "fingerprint": fingerprint(project, j)} for j in judges]
    with project.write("export requests for an outside engine", changed=(Area.JOBS,)) as conn:
        cur = conn.execute("INSERT INTO outside_exports (run_id, judges, folder, created_at) VALUES (?, ?, ?, ?)",
                           (run, json.dumps(named, sort_keys=True), str(folder.resolve()), utcnow()))
        return int(cur.lastrowid or 0)


def _plan(project: Project, export: int, keys: list[str]) -> None:
    """The keys a shard is about to ask, on record under `export` (`keys` is emptied)."""
    with project.write("export requests for an outside engine", changed=(Area.JOBS,)) as conn:
        conn.executemany("INSERT OR IGNORE INTO outside_keys (key, export_id) VALUES (?, ?)",
                         [(k, export) for k in keys])
    keys.clear()


def _finish(project: Project, export: int, requests: int) -> str:
    """The export marked whole; the sha256 of its keys (sorted, a line each), for the manifest."""
    digest = hashlib.sha256()
    with project.write("export requests for an outside engine", changed=(Area.JOBS,)) as conn:
        conn.execute("UPDATE outside_exports SET complete = 1, requests = ? WHERE id = ?", (requests, export))
        for (key,) in conn.execute("SELECT key FROM outside_keys WHERE export_id = ? ORDER BY key", (export,)):
            digest.update(f"{key}\n".encode())
    return digest.hexdigest()


def _write_manifest(path: Path, data: dict[str, object]) -> None:
    part = path.with_name(f".{path.name}.part")
    part.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(part, path)


def _lines(path: Path) -> Iterable[bytes]:
    with path.open("rb") as f:
        while True:
            line = f.readline(MAX_LINE + 1)
            if not line:
                return
            if len(line) > MAX_LINE:
                raise RagevalError(f"{path.name}: a line longer than {MAX_LINE // 1024 ** 2} MB: not a batch output "
                                   "file")
            yield line


def import_results(project: Project, files: list[str | Path], spec: JobSpec | None = None, *,
                   ctx: TaskContext | None = None) -> ImportStats:
    """Keep the replies of `files` in the request cache (idempotently), then, with `spec`, judge offline the rows
    whose replies are cached."""
    ctx = ctx or TaskContext()
    paths = [Path(f) for f in files]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise RagevalError(f"no such file: {', '.join(missing)}")
    stats = ImportStats(files=len(paths))
    scrub = _scrubber(project)
    run = find_run(project, spec.run) if spec is not None else None
    kinds: Counter[str] = Counter()
    for path in paths:
        entries: list[tuple[int, CacheRow]] = []
        for number, line in enumerate(_lines(path), start=1):
            ctx.check()
            if not line.strip():
                continue
            stats.lines += 1
            entry, kind = parse_reply(line, scrub, None)
            if entry is None:
                kinds[kind] += 1
                stats.note(path, kind, number)
                continue
            entries.append((number, entry))
            if len(entries) >= IMPORT_CHUNK:
                keep_replies(project, _asked(project, run, path, entries, stats), stats)
                ctx.report(stats.lines, stats.lines, f"{stats.stored:,} replies kept from {path.name}")
        keep_replies(project, _asked(project, run, path, entries, stats), stats)
    stats.failed = sum(kinds.values())
    stats.failed_by_kind = dict(kinds)
    if spec is not None:
        stats.judged = judge_offline(project, spec, ctx)
    return stats


def _scrubber(project: Project) -> Scrubber:
    """A scrubber of every key the project's LLM judges name that this process can read (the live path scrubs its
    judge's key from replies; a proxy that echoes it would otherwise leave it in the cache)."""
    scrub = Scrubber()
    for ref in {j.api_key_ref for j in list_judges(project) if j.calls_llm and j.api_key_ref}:
        try:
            scrub.add(resolve_api_key(ref))
        except RagevalError:
            continue                      # not readable here: nothing of it can be recognised either
    return scrub


def _asked(project: Project, run: int | None, path: Path, entries: list[tuple[int, CacheRow]],
           stats: ImportStats) -> list[CacheRow]:
    """The replies whose key an export of `run` (None: of any run) wrote; the others refused and numbered.
    `entries` is emptied."""
    keys = sorted({e["key"] for _, e in entries})
    conn = project.reader()
    where = "" if run is None else " AND e.run_id = ?"
    asked: set[str] = set()
    for start in range(0, len(keys), 500):
        part = keys[start:start + 500]
        asked.update(k for (k,) in conn.execute(
            f"SELECT DISTINCT k.key FROM outside_keys k JOIN outside_exports e ON e.id = k.export_id "
            f"WHERE k.key IN ({', '.join('?' * len(part))}){where}", (*part, *(() if run is None else (run,)))))
    kept = []
    for number, entry in entries:
        if entry["key"] in asked:
            kept.append(entry)
        else:
            stats.refused += 1
            stats.note(path, "refused", number)
    entries.clear()
    return kept


def keep_replies(project: Project, entries: list[CacheRow], stats: ImportStats) -> None:
    """Replies into the request cache in one transaction (a key there already is kept as it was), counted in
    `stats`; `entries` is emptied."""
    if not entries:
        return
    with project.write("keep outside replies", changed=(Area.JOBS,)) as conn:
        before = conn.total_changes
        conn.executemany(llm.BATCH_CACHE_INSERT, entries)
        stored = conn.total_changes - before
    stats.stored += stored
    stats.known += len(entries) - stored
    entries.clear()


def judge_offline(project: Project, spec: JobSpec, ctx: TaskContext | None = None) -> dict[str, Offline]:
    """The job's single-call LLM judgments whose replies are cached, judged by the live engine with no call made:
    a job per judge over the rows it has replies for (a job reports what it saved; rows still unanswered are not
    its work). Returns per judge its job's stats, and how many rows are still unanswered."""
    ctx = ctx or TaskContext()
    judges = _exportable(job_judges(project, spec))
    if not judges:
        raise RagevalError("none of these judges makes one model call a row: nothing an outside engine answered "
                           "can be judged")
    work = job_items(project, replace(spec, judges=[j.name for j in judges]), judges)
    answered: dict[str, set[int]] = {j.name: set() for j in judges}
    waiting: Counter[str] = Counter()
    for rendered in render_requests(project, work, judges, ctx):
        known = cached_keys(project, [key for _, key, _ in rendered if key])
        for item, key, _ in rendered:
            if not key:
                continue
            if key in known:
                answered[item.judge.name].add(item.run_row_id)
            else:
                waiting[item.judge.name] += 1
    out: dict[str, Offline] = {}
    for judge in judges:
        rows = sorted(answered[judge.name])
        stats = (JudgeJob(project, replace(spec, judges=[judge.name], row_ids=rows, offline=True, batch=False),
                          ctx).run() if rows else None)
        out[judge.name] = Offline(stats, waiting[judge.name])
    return out
