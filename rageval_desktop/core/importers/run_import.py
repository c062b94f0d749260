"""Import the outputs of one RAG run: rows and their retrieved passages, linked to golden rows, in one
transaction. Rows and passages go through `executemany` with ids assigned up front: this is the hot path
(100k rows x 5 passages), and the single-writer lock makes `max(id) + 1` safe.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from rageval_desktop.core.errors import ImportFailed
from rageval_desktop.core.importers.common import ImportReport, check_unique, chunks_by_text, load
from rageval_desktop.core.importers.layouts import RunRecord
from rageval_desktop.core.jobs.context import TaskContext
from rageval_desktop.core.store.project import Project, utcnow
from rageval_desktop.core.text import normalise_passage, normalise_question

BATCH = 5_000


RANK_BY = ("position", "score")


def import_run(project: Project, path: str | Path, run_name: str, *, fmt: str | None = None,
               mapping: dict[str, str] | None = None, replace: bool = False, notes: str | None = None,
               config: dict | None = None, rank_by: str = "position", ctx: TaskContext | None = None) -> ImportReport:
    """Rank is the passage's position in the file (first = 1); `rank_by="score"` orders each row's passages by
    score, highest first, instead. Passages given as text only are matched to corpus chunks by their text."""
    ctx = ctx or TaskContext()
    if rank_by not in RANK_BY:
        raise ImportFailed(f"rank_by is one of {', '.join(RANK_BY)}, not {rank_by!r}")
    run_name = run_name.strip()
    if not run_name:
        raise ImportFailed("the run needs a name (--run NAME)")
    cell_warnings: list[str] = []
    layout, records, file = load(path, "run", fmt, mapping, cell_warnings)
    for n, rec in enumerate(records, start=1):
        rec.external_id = rec.external_id or f"row-{n}"
    check_unique([(r.row, r.external_id) for r in records], file, "id", "row id")
    report = ImportReport(kind="run", file=file, layout=layout.name, rows_read=len(records), run=run_name,
                          warnings=cell_warnings)
    _rank(records, rank_by, report)
    _repeats(records, report)

    existing = project.reader().execute("SELECT id FROM runs WHERE name = ?", (run_name,)).fetchone()
    if existing and not replace:
        raise ImportFailed(f"a run named '{run_name}' already exists; choose another name or replace it",
                           file=file)
    if existing:
        project.backup(f"before-replacing-run-{run_name}")

    ctx.report(0, len(records), "writing run rows", force=True)
    with project.write("import run", changed=("runs",)) as conn:
        if existing:
            conn.execute("DELETE FROM runs WHERE id = ?", (existing[0],))
            report.warnings.append(f"replaced the previous run '{run_name}'")
        by_id, by_question = golden_index(conn)
        text_only = _match_text_to_corpus(conn, records)
        unresolved = 0
        cur = conn.execute(
            "INSERT INTO runs (name, source_file, format, config, notes, golden_fingerprint, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_name, file, layout.name, json.dumps(config or {}), notes, project.golden_fingerprint(conn),
             utcnow()))
        run_id = cur.lastrowid
        next_id = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM run_rows").fetchone()[0]
        rows, passages = [], []
        for position, rec in enumerate(records, start=1):
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
            rows.append((row_id, run_id, position, rec.external_id, golden_id, rec.question, rec.answer,
                         rec.latency_ms, rec.cost_usd, rec.prompt_tokens, rec.completion_tokens,
                         json.dumps(rec.metadata, ensure_ascii=False) if rec.metadata else "{}"))
            for rank, p in enumerate(rec.retrieved, start=1):
                passages.append((row_id, rank, p.chunk_id, p.text, p.score,
                                 None if p.in_prompt is None else int(p.in_prompt)))
            if len(rows) >= BATCH:
                _flush(conn, rows, passages)
                ctx.check()
                ctx.report(position, len(records), "writing run rows")
        _flush(conn, rows, passages)
        ctx.check()
        report.added = len(records)
        project.audit(conn, "import", "run", run_name, file=file, layout=layout.name, rows=len(records),
                      linked=report.linked, unlinked=report.unlinked)
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
    ctx.report(len(records), len(records), "done", force=True)
    return report


def _flush(conn, rows: list, passages: list) -> None:
    conn.executemany(
        "INSERT INTO run_rows (id, run_id, position, external_id, golden_id, question, answer, latency_ms, "
        "cost_usd, prompt_tokens, completion_tokens, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.executemany("INSERT INTO retrieved_passages (run_row_id, rank, chunk_id, text, score, in_prompt) "
                     "VALUES (?, ?, ?, ?, ?, ?)", passages)
    rows.clear()
    passages.clear()


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


def _rank(records: list[RunRecord], rank_by: str, report: ImportReport) -> None:
    """Rank is the position in the file. Scores that rise down a list contradict that order: say so (and how to
    rank by score), or, with rank_by="score", order each row's passages by score (highest first; passages without
    a score keep their order after the scored ones)."""
    contradicted = [rec.row for rec in records if len(rec.retrieved) > 1
                    and all(p.score is not None for p in rec.retrieved)
                    and any(b.score > a.score for a, b in pairwise(rec.retrieved))]  # type: ignore[operator]
    if rank_by == "score":
        unscored = 0
        for rec in records:
            unscored += sum(p.score is None for p in rec.retrieved)
            rec.retrieved.sort(key=lambda p: (p.score is None, -(p.score or 0.0)))
        if unscored:
            report.warnings.append(f"{unscored} passage(s) have no score: ranked after the scored ones, in file order")
        if contradicted:
            report.warnings.append(f"{len(contradicted)} row(s) were reordered by score (--rank-by score)")
    elif contradicted:
        report.warnings.append(
            f"{len(contradicted)} row(s) list passages whose scores rise down the list (first: row "
            f"{contradicted[0]}): rank is the position in the file and scores are ignored; if the scores are the "
            "ranking (higher is better), re-import with --rank-by score")


def _repeats(records: list[RunRecord], report: ImportReport) -> None:
    runs: dict[str, set[str]] = {}
    for rec in records:
        if "query_run" in rec.metadata and "query_id" in rec.metadata:
            runs.setdefault(rec.metadata["query_id"], set()).add(rec.metadata["query_run"])
    repeated = {q: r for q, r in runs.items() if len(r) > 1}
    if repeated:
        example = next(iter(repeated))
        report.warnings.append(
            f"{len(repeated)} question(s) were run more than once (query_run): each run is a row of its own "
            f"(e.g. {example}#run{sorted(repeated[example])[0]}), and metrics average a question's runs")


def _match_text_to_corpus(conn, records: list[RunRecord]) -> set[int]:
    """Give passages that came as text only (or with a per-query marker) the id of the corpus chunk with the same
    text, whitespace aside. Returns the rows that had such passages."""
    rows = {rec.row for rec in records if any(p.chunk_id is None or p.scoped for p in rec.retrieved)}
    if not rows:
        return rows
    wanted = {normalise_passage(p.text) for rec in records for p in rec.retrieved
              if p.text and (p.chunk_id is None or p.scoped)}
    found = chunks_by_text(conn, wanted)
    if found:
        for rec in records:
            for p in rec.retrieved:
                if p.text and (p.chunk_id is None or p.scoped):
                    cid = found.get(normalise_passage(p.text))
                    if cid:
                        p.chunk_id, p.scoped = cid, False
    return rows
