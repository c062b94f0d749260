"""Import the outputs of one RAG run: rows and their retrieved passages, linked to golden rows, in one
transaction. Rows and passages go through `executemany` with ids assigned up front: this is the hot path
(100k rows x 5 passages), and the single-writer lock makes `max(id) + 1` safe.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

from rageval_desktop.core.errors import ImportFailed
from rageval_desktop.core.importers.common import CorpusText, ImportReport, stream_load
from rageval_desktop.core.importers.layouts import RunRecord
from rageval_desktop.core.importers.reader_process import ReaderProcess
from rageval_desktop.core.jobs.context import TaskContext
from rageval_desktop.core.store.project import Project, utcnow
from rageval_desktop.core.text import lookalike, name_problem, normalise_question

PARALLEL_BYTES = 32 * 1024 * 1024   # a file this large is read and converted by a second process (reader_process)


RANK_BY = ("position", "score")


def import_run(project: Project, path: str | Path, run_name: str, *, fmt: str | None = None,
               mapping: dict[str, str] | None = None, replace: bool = False, notes: str | None = None,
               config: dict | None = None, rank_by: str = "position", ctx: TaskContext | None = None) -> ImportReport:
    """Rank is the passage's position in the file (first = 1); `rank_by="score"` orders each row's passages by
    score, highest first, instead. Passages given as text only are matched to corpus chunks by their text.

    The file is read, converted and written a chunk at a time inside one transaction: memory stays the same however
    long the file, and a bad row anywhere leaves the project as it was."""
    ctx = ctx or TaskContext()
    if rank_by not in RANK_BY:
        raise ImportFailed(f"rank_by is one of {', '.join(RANK_BY)}, not {rank_by!r}")
    run_name = run_name.strip()
    if not run_name:
        raise ImportFailed("the run needs a name (--run NAME)")
    problem = name_problem(run_name)
    if problem:
        raise ImportFailed(f"the run name {problem}; choose another (--run NAME)")
    try:
        size = max(1, Path(path).stat().st_size)
    except OSError:      # reading says why, naming the file
        size = 1
    source: ReaderProcess | _InProcess | None = None
    # (a frozen app, or an embedded Python, has no interpreter to start the reader with: it reads in one process)
    if size >= PARALLEL_BYTES and sys.executable and not getattr(sys, "frozen", False):
        try:
            source = ReaderProcess.start(path, fmt, mapping, rank_by, project.path)
        except OSError:
            source = None
    try:
        source = source or _InProcess(path, fmt, mapping, rank_by)
        return _import(project, run_name, replace, notes, config, ctx, size, source)
    finally:
        if source is not None:
            source.close()


def _import(project: Project, run_name: str, replace: bool, notes: str | None, config: dict | None,
            ctx: TaskContext, size: int, source: ReaderProcess | _InProcess) -> ImportReport:
    layout_name, file = source.layout(ctx)
    report = ImportReport(kind="run", file=file, layout=layout_name, rows_read=0, run=run_name)

    existing = project.reader().execute("SELECT id FROM runs WHERE name = ?", (run_name,)).fetchone()
    if existing and not replace:
        raise ImportFailed(f"a run named '{run_name}' already exists; choose another name or replace it",
                           file=file)
    if existing:
        project.backup(f"before-replacing-run-{run_name}")
    twin = lookalike(run_name, [n for (n,) in project.reader().execute("SELECT name FROM runs")])
    if twin:
        report.warnings.append(f"the run name '{run_name}' reads like the existing run '{twin}' (they differ only in "
                               "case or width): the two are easy to confuse in a gate or a report")

    ctx.report(0, size, "reading and writing run rows", force=True)
    with project.write("import run", changed=("runs",)) as conn:
        if existing:
            conn.execute("DELETE FROM runs WHERE id = ?", (existing[0],))
            report.warnings.append(f"replaced the previous run '{run_name}'")
        cur = conn.execute(
            "INSERT INTO runs (name, source_file, format, config, notes, golden_fingerprint, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_name, file, layout_name, json.dumps(config or {}), notes, project.golden_fingerprint(conn),
             utcnow()))
        run_id = cur.lastrowid
        next_id = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM run_rows").fetchone()[0]
        position = 0
        for rows, passages, ids, read in source.chunks(run_id, next_id, ctx, conn):
            _flush(conn, rows, passages, run_id, ids, file)
            position += len(rows)
            ctx.check()
            ctx.report(min(read, size), size, f"{position:,} run rows written")
        summary = source.summary
        report.rows_read = report.added = position
        report.linked, report.unlinked = summary["linked"], summary["unlinked"]
        report.unlinked_examples = summary["unlinked_examples"]
        ctx.check()
        project.audit(conn, "import", "run", run_name, file=file, layout=layout_name, rows=position,
                      linked=report.linked, unlinked=report.unlinked)
    report.warnings[:0] = source.cell_warnings     # what the cells said first, however the file was read
    report.warnings += summary["warnings"]
    if report.unlinked:
        report.warnings.append(f"{report.unlinked} row(s) match no golden row (by id or question); "
                               "they get no retrieval metrics")
    if summary["unresolved"]:
        has_corpus = project.reader().execute("SELECT EXISTS (SELECT 1 FROM corpus_chunks)").fetchone()[0]
        report.warnings.append(
            f"{summary['unresolved']} linked row(s) list their retrieved passages as text without chunk ids"
            + (", and none of it matches a corpus chunk (exact text, whitespace aside)" if has_corpus else
               ", and the project has no corpus to match the text to")
            + ": retrieval metrics cannot be computed for them"
            + ("" if has_corpus else "; import the corpus first (rageval import corpus), then re-import this run "
               "with --replace"))
    ctx.report(size, size, "done", force=True)
    return report


class _InProcess:
    """The file read and prepared in this process (a small file, or no interpreter to start a reader with): the same
    steps as `ReaderProcess`, without the second process."""

    def __init__(self, path: str | Path, fmt: str | None, mapping: dict[str, str] | None, rank_by: str) -> None:
        self.cell_warnings: list[str] = []
        self.summary: dict[str, Any] = {}
        self.rank_by = rank_by
        self._progress: dict[str, int] = {}
        self._layout, self._records, self._file = stream_load(path, "run", fmt, mapping, self.cell_warnings,
                                                              progress=self._progress)

    def layout(self, ctx: TaskContext | None) -> tuple[str, str]:
        return self._layout.name, self._file

    def chunks(self, run_id: int, next_id: int, ctx: TaskContext | None, conn: Any) -> Iterator[tuple]:
        """(rows, passages, ids, bytes read) a chunk at a time; then `summary` is set."""
        preparer = _Preparer(conn, self.rank_by, run_id, next_id)
        for records in self._records:
            yield (*preparer.prepare(records), self._progress.get("read", 0))
        self.summary = preparer.summary()

    def close(self) -> None:
        pass


class _Preparer:
    """A chunk of records as the rows and passages to insert: ids and positions assigned, golden rows linked, text-only
    passages matched to corpus chunks. Reads the project (golden rows, corpus) and never writes, so it runs in the
    importing process or in the reader process alike."""

    def __init__(self, conn, rank_by: str, run_id: int, next_id: int) -> None:
        self.by_id, self.by_question = golden_index(conn)
        self.corpus = CorpusText(conn)
        self.run_id, self.next_id, self.position = run_id, next_id, 0
        self.ranks, self.repeats = _Ranks(rank_by), _Repeats()
        self.linked = self.unlinked = self.unresolved = 0
        self.unlinked_examples: list[str] = []

    def prepare(self, records: list[RunRecord]) -> tuple[list[tuple], list[tuple], list[tuple[str, int]]]:
        """(run_rows rows, retrieved_passages rows, (external id, file row) of each record)."""
        rows, passages = [], []
        for rec in records:
            self.position += 1
            rec.external_id = rec.external_id or f"row-{self.position}"
        self.ranks.see(records)
        self.repeats.see(records)
        text_only = _match_corpus(self.corpus, records)
        first = self.position - len(records) + 1
        for k, rec in enumerate(records):
            golden_id = link_golden(rec, self.by_id, self.by_question)
            if golden_id and rec.row in text_only and not any(p.chunk_id and not p.scoped for p in rec.retrieved):
                self.unresolved += 1
            if golden_id:
                self.linked += 1
            else:
                self.unlinked += 1
                if len(self.unlinked_examples) < 5:
                    self.unlinked_examples.append(rec.question[:120])
            row_id = self.next_id
            self.next_id += 1
            rows.append((row_id, self.run_id, first + k, rec.external_id, golden_id, rec.question, rec.answer,
                         rec.latency_ms, rec.cost_usd, rec.prompt_tokens, rec.completion_tokens,
                         json.dumps(rec.metadata, ensure_ascii=False) if rec.metadata else "{}"))
            for rank, p in enumerate(rec.retrieved, start=1):
                passages.append((row_id, rank, p.chunk_id, p.text, p.score,
                                 None if p.in_prompt is None else int(p.in_prompt)))
        return rows, passages, [(rec.external_id, rec.row) for rec in records]

    def summary(self) -> dict[str, Any]:
        return {"linked": self.linked, "unlinked": self.unlinked, "unlinked_examples": self.unlinked_examples,
                "unresolved": self.unresolved, "warnings": self.ranks.warnings() + self.repeats.warnings()}


def _flush(conn, rows: list, passages: list, run_id: int, ids: list[tuple[str, int]], file: str) -> None:
    import sqlite3

    try:
        conn.executemany(
            "INSERT INTO run_rows (id, run_id, position, external_id, golden_id, question, answer, latency_ms, "
            "cost_usd, prompt_tokens, completion_tokens, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    except sqlite3.IntegrityError:   # UNIQUE (run_id, external_id): name the row and the one it repeats
        _duplicate(conn, run_id, ids, rows[0][2], file)
        raise
    conn.executemany("INSERT INTO retrieved_passages (run_row_id, rank, chunk_id, text, score, in_prompt) "
                     "VALUES (?, ?, ?, ?, ?, ?)", passages)


def _duplicate(conn, run_id: int, ids: list[tuple[str, int]], first_position: int, file: str) -> None:
    """Raise the repeated row id's error: the first record of this chunk (its external id and file row) whose id the
    run already has (from an earlier chunk, or earlier in this one)."""
    seen: dict[str, int] = {}
    for k, (external_id, file_row) in enumerate(ids):
        first = seen.get(external_id)
        if first is None:
            found = conn.execute("SELECT position FROM run_rows WHERE run_id = ? AND external_id = ? AND position < ?",
                                 (run_id, external_id, first_position)).fetchone()
            first = found[0] if found else None
        if first is not None:
            raise ImportFailed(f"duplicate row id '{external_id[:80]}' (first seen on row {first})",
                               file=file, row=file_row, column="id")
        seen[external_id] = first_position + k


def golden_index(conn) -> tuple[set[str], dict[str, str]]:
    by_id: set[str] = set()
    by_question: dict[str, str] = {}
    # approved rows win over drafts when two rows share a question; retired rows still link (history)
    for gid, norm, _status in conn.execute(
            "SELECT id, question_norm, status FROM golden_rows ORDER BY status = 'approved' DESC, id"):
        by_id.add(gid)
        by_question.setdefault(norm, gid)
    return by_id, by_question


def link_golden(rec: RunRecord, by_id: set[str], by_question: dict[str, str]) -> str | None:
    for candidate in (rec.golden_id, rec.external_id):
        if candidate and candidate in by_id:
            return candidate
    return by_question.get(normalise_question(rec.question)) if by_question else None


class _Ranks:
    """Rank is the position in the file. Scores that rise down a list contradict that order: say so (and how to
    rank by score), or, with rank_by="score", order each row's passages by score (highest first; passages without
    a score keep their order after the scored ones). Fed a chunk at a time."""

    def __init__(self, rank_by: str) -> None:
        self.rank_by = rank_by
        self.contradicted = 0
        self.first: int | None = None
        self.unscored = 0

    def see(self, records: list[RunRecord]) -> None:
        for rec in records:
            if len(rec.retrieved) > 1 and all(p.score is not None for p in rec.retrieved) and any(
                    b.score > a.score for a, b in pairwise(rec.retrieved)):  # type: ignore[operator]
                self.contradicted += 1
                self.first = rec.row if self.first is None else self.first
            if self.rank_by == "score":
                self.unscored += sum(p.score is None for p in rec.retrieved)
                rec.retrieved.sort(key=lambda p: (p.score is None, -(p.score or 0.0)))

    def warnings(self) -> list[str]:
        out = []
        if self.rank_by == "score":
            if self.unscored:
                out.append(f"{self.unscored} passage(s) have no score: ranked after the scored ones, in file order")
            if self.contradicted:
                out.append(f"{self.contradicted} row(s) were reordered by score (--rank-by score)")
        elif self.contradicted:
            out.append(
                f"{self.contradicted} row(s) list passages whose scores rise down the list (first: row "
                f"{self.first}): rank is the position in the file and scores are ignored; if the scores are the "
                "ranking (higher is better), re-import with --rank-by score")
        return out


class _Repeats:
    def __init__(self) -> None:
        self.runs: dict[str, set[str]] = {}

    def see(self, records: list[RunRecord]) -> None:
        for rec in records:
            if "query_run" in rec.metadata and "query_id" in rec.metadata:
                self.runs.setdefault(rec.metadata["query_id"], set()).add(rec.metadata["query_run"])

    def warnings(self) -> list[str]:
        repeated = {q: r for q, r in self.runs.items() if len(r) > 1}
        if not repeated:
            return []
        example = next(iter(repeated))
        return [f"{len(repeated)} question(s) were run more than once (query_run): each run is a row of its own "
                f"(e.g. {example}#run{sorted(repeated[example])[0]}), and metrics average a question's runs"]


def _match_corpus(corpus: CorpusText, records: list[RunRecord]) -> set[int]:
    """Give passages that came as text only (or with a per-query marker) the id of the corpus chunk with the same
    text, whitespace aside. Returns the rows (of these records) that had such passages."""
    rows = {rec.row for rec in records if any(p.chunk_id is None or p.scoped for p in rec.retrieved)}
    for rec in records:
        if rec.row in rows:
            for p in rec.retrieved:
                if p.text and (p.chunk_id is None or p.scoped):
                    cid = corpus.chunk_id(p.text)
                    if cid:
                        p.chunk_id, p.scoped = cid, False
    return rows
