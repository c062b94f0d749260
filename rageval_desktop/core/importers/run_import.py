"""Import the outputs of one RAG run: rows and their retrieved passages, linked to golden rows, in one
transaction. Rows and passages go through `executemany` with ids assigned up front: this is the hot path
(100k rows x 5 passages), and the single-writer lock makes `max(id) + 1` safe.
"""

from __future__ import annotations

import json
from pathlib import Path

from rageval_desktop.core.errors import ImportFailed
from rageval_desktop.core.importers.common import ImportReport, check_unique, load
from rageval_desktop.core.importers.layouts import RunRecord
from rageval_desktop.core.jobs.context import TaskContext
from rageval_desktop.core.store.project import Project, utcnow
from rageval_desktop.core.text import normalise_question

BATCH = 5_000


def import_run(project: Project, path: str | Path, run_name: str, *, fmt: str | None = None,
               mapping: dict[str, str] | None = None, replace: bool = False, notes: str | None = None,
               config: dict | None = None, ctx: TaskContext | None = None) -> ImportReport:
    ctx = ctx or TaskContext()
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
        by_id, by_question = _golden_index(conn)
        cur = conn.execute(
            "INSERT INTO runs (name, source_file, format, config, notes, golden_fingerprint, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_name, file, layout.name, json.dumps(config or {}), notes, project.golden_fingerprint(conn),
             utcnow()))
        run_id = cur.lastrowid
        next_id = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM run_rows").fetchone()[0]
        rows, passages = [], []
        for position, rec in enumerate(records, start=1):
            golden_id = _link(rec, by_id, by_question)
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


def _golden_index(conn) -> tuple[set[str], dict[str, str]]:
    by_id: set[str] = set()
    by_question: dict[str, str] = {}
    # approved rows win over drafts when two rows share a question; retired rows still link (history)
    for gid, norm, _status in conn.execute(
            "SELECT id, question_norm, status FROM golden_rows ORDER BY status = 'approved' DESC, id"):
        by_id.add(gid)
        by_question.setdefault(norm, gid)
    return by_id, by_question


def _link(rec: RunRecord, by_id: set[str], by_question: dict[str, str]) -> str | None:
    for candidate in (rec.golden_id, rec.external_id):
        if candidate and candidate in by_id:
            return candidate
    return by_question.get(normalise_question(rec.question))
