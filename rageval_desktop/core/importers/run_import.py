"""Import the outputs of one RAG run: rows and their retrieved passages, linked to golden rows, in one
transaction. Rows and passages go through `executemany` with ids assigned up front: this is the hot path
(100k rows x 5 passages), and the single-writer lock makes `max(id) + 1` safe.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from rageval_desktop.core.errors import ImportFailed
from rageval_desktop.core.importers.common import CorpusText, ImportReport, stream_load
from rageval_desktop.core.importers.layouts import RunRecord
from rageval_desktop.core.jobs.context import TaskContext
from rageval_desktop.core.store.project import Project, utcnow
from rageval_desktop.core.text import normalise_question

BATCH = 5_000


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
    cell_warnings: list[str] = []
    progress: dict[str, int] = {}
    layout, chunks, file = stream_load(path, "run", fmt, mapping, cell_warnings, progress=progress)
    report = ImportReport(kind="run", file=file, layout=layout.name, rows_read=0, run=run_name,
                          warnings=cell_warnings)

    existing = project.reader().execute("SELECT id FROM runs WHERE name = ?", (run_name,)).fetchone()
    if existing and not replace:
        raise ImportFailed(f"a run named '{run_name}' already exists; choose another name or replace it",
                           file=file)
    if existing:
        project.backup(f"before-replacing-run-{run_name}")

    size = max(1, Path(path).stat().st_size)
    ctx.report(0, size, "reading and writing run rows", force=True)
    ranks, repeats = _Ranks(rank_by), _Repeats()
    with project.write("import run", changed=("runs",)) as conn:
        if existing:
            conn.execute("DELETE FROM runs WHERE id = ?", (existing[0],))
            report.warnings.append(f"replaced the previous run '{run_name}'")
        by_id, by_question = golden_index(conn)
        corpus = CorpusText(conn)
        unresolved = 0
        cur = conn.execute(
            "INSERT INTO runs (name, source_file, format, config, notes, golden_fingerprint, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_name, file, layout.name, json.dumps(config or {}), notes, project.golden_fingerprint(conn),
             utcnow()))
        run_id = cur.lastrowid
        next_id = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM run_rows").fetchone()[0]
        position = 0
        for records in chunks:
            rows, passages = [], []
            for rec in records:
                position += 1
                rec.external_id = rec.external_id or f"row-{position}"
            ranks.see(records)
            repeats.see(records)
            text_only = _match_corpus(corpus, records)
            for rec in records:
                golden_id = link_golden(rec, by_id, by_question)
                if golden_id and rec.row in text_only and not any(p.chunk_id and not p.scoped for p in rec.retrieved):
                    unresolved += 1
                if golden_id:
                    report.linked += 1
                else:
                    report.unlinked += 1
                    if len(report.unlinked_examples) < 5:
                        report.unlinked_examples.append(rec.question[:120])
                row_id = next_id
                next_id += 1
                rows.append((row_id, run_id, position - len(records) + len(rows) + 1, rec.external_id, golden_id,
                             rec.question, rec.answer, rec.latency_ms, rec.cost_usd, rec.prompt_tokens,
                             rec.completion_tokens,
                             json.dumps(rec.metadata, ensure_ascii=False) if rec.metadata else "{}"))
                for rank, p in enumerate(rec.retrieved, start=1):
                    passages.append((row_id, rank, p.chunk_id, p.text, p.score,
                                     None if p.in_prompt is None else int(p.in_prompt)))
            _flush(conn, rows, passages, run_id, records, file)
            ctx.check()
            ctx.report(min(progress.get("read", 0), size), size, f"{position:,} run rows written")
        report.rows_read = report.added = position
        ctx.check()
        project.audit(conn, "import", "run", run_name, file=file, layout=layout.name, rows=position,
                      linked=report.linked, unlinked=report.unlinked)
    report.warnings += ranks.warnings() + repeats.warnings()
    if report.unlinked:
        report.warnings.append(f"{report.unlinked} row(s) match no golden row (by id or question); "
                               "they get no retrieval metrics")
    if unresolved:
        has_corpus = project.reader().execute("SELECT EXISTS (SELECT 1 FROM corpus_chunks)").fetchone()[0]
        report.warnings.append(
            f"{unresolved} linked row(s) list their retrieved passages as text without chunk ids"
            + (", and none of it matches a corpus chunk (exact text, whitespace aside)" if has_corpus else
               ", and the project has no corpus to match the text to")
            + ": retrieval metrics cannot be computed for them"
            + ("" if has_corpus else "; import the corpus first (rageval import corpus), then re-import this run "
               "with --replace"))
    ctx.report(size, size, "done", force=True)
    return report


def _flush(conn, rows: list, passages: list, run_id: int, records: list[RunRecord], file: str) -> None:
    import sqlite3

    try:
        conn.executemany(
            "INSERT INTO run_rows (id, run_id, position, external_id, golden_id, question, answer, latency_ms, "
            "cost_usd, prompt_tokens, completion_tokens, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    except sqlite3.IntegrityError:   # UNIQUE (run_id, external_id): name the row and the one it repeats
        _duplicate(conn, run_id, records, rows[0][2], file)
        raise
    conn.executemany("INSERT INTO retrieved_passages (run_row_id, rank, chunk_id, text, score, in_prompt) "
                     "VALUES (?, ?, ?, ?, ?, ?)", passages)


def _duplicate(conn, run_id: int, records: list[RunRecord], first_position: int, file: str) -> None:
    """Raise the repeated row id's error: the first record of this chunk whose id the run already has (from an
    earlier chunk, or earlier in this one)."""
    seen: dict[str, int] = {}
    for k, rec in enumerate(records):
        first = seen.get(rec.external_id)
        if first is None:
            found = conn.execute("SELECT position FROM run_rows WHERE run_id = ? AND external_id = ? AND position < ?",
                                 (run_id, rec.external_id, first_position)).fetchone()
            first = found[0] if found else None
        if first is not None:
            raise ImportFailed(f"duplicate row id '{rec.external_id[:80]}' (first seen on row {first})",
                               file=file, row=rec.row, column="id")
        seen[rec.external_id] = first_position + k


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
    return by_question.get(normalise_question(rec.question))


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
