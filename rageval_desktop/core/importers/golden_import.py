"""Import a golden set: all rows in one transaction, each change recorded in the edit history."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import ImportFailed, RagevalError
from rageval_desktop.core.base.text import normalise_passage, normalise_question
from rageval_desktop.core.golden import dedupe
from rageval_desktop.core.golden.edits import golden_id_for
from rageval_desktop.core.importers.common import ImportReport, check_unique, chunks_by_text, keep_run_values, load
from rageval_desktop.core.importers.layouts import GoldenRecord
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

CONTENT_FIELDS = ("question", "gold_answer", "gold_chunk_ids", "slice_tag", "metadata")
OPTIONAL_FIELDS = ("gold_answer", "gold_chunk_ids", "slice_tag", "metadata")   # a file may leave these out
LABELS = {"gold_chunk_ids": "gold chunk ids", "slice_tag": "slice", "gold_answer": "gold answer"}
FIELD_NAMES = {**LABELS, "metadata": "metadata"}


def kept_fields(records: list[GoldenRecord]) -> list[str]:
    """The content fields some row of the file leaves out: on rows already in the project they keep their value."""
    return [f for f in OPTIONAL_FIELDS if any(f not in rec.given for rec in records)]


def kept_text(fields: list[str]) -> str:
    return ("not in the file, kept as stored on updated rows: " + ", ".join(FIELD_NAMES[f] for f in fields)
            if fields else "")


def cleared_labels(stored: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The labels (gold chunk ids, slice, gold answer) a row had and the update would leave empty."""
    return [f for f in LABELS if stored.get(f) and not new.get(f)]


def _content(rec: GoldenRecord, status: str) -> dict[str, Any]:
    return {"question": rec.question, "gold_answer": rec.gold_answer, "gold_chunk_ids": rec.gold_chunk_ids,
            "slice_tag": rec.slice_tag, "metadata": rec.metadata, "status": status}


def _stored_content(row: tuple) -> dict[str, Any]:
    question, answer, ids, slice_tag, metadata, status = row
    return {"question": question, "gold_answer": answer, "gold_chunk_ids": json.loads(ids),
            "slice_tag": slice_tag, "metadata": json.loads(metadata), "status": status}


def import_golden(project: Project, path: str | Path, *, fmt: str | None = None,
                  mapping: dict[str, str] | None = None, default_slice: str | None = None,
                  source: str = "import", ctx: TaskContext | None = None,
                  check_duplicates: bool = False, allow_clearing: bool = False) -> ImportReport:
    """Import golden rows. Rows whose question is new (added, or a changed question) are listed as not yet checked
    for near-duplicates (`report.fresh_ids`; `dedupe.unchecked`), in the same transaction. With `check_duplicates`,
    they are checked against the set at once (`dedupe.check_new`: its cost follows the new rows, not the set) and
    the ones that nearly repeat a row (MiniLM cosine >= 0.9) are reported as warnings — the rows are still imported:
    merging is a reviewer's decision. The check runs after the import committed — its embedding cache is a write,
    and a failed import must leave every table as it was. Without it the app runs the same check as a follow-up.

    An update keeps every field the file leaves out (`report.kept`). A file that gives a label column but leaves it
    empty on rows that have one would clear those labels: the import is refused unless `allow_clearing`."""
    ctx = ctx or TaskContext()
    cell_warnings: list[str] = []
    layout, records, file = load(path, "golden", fmt, mapping, cell_warnings)
    check_unique([(r.row, r.id) for r in records], file, "id", "id")
    check_unique([(r.row, normalise_question(r.question)) for r in records if r.id is None], file,
                 layout.required[0], "question")
    report = ImportReport(kind="golden set", file=file, layout=layout.name, rows_read=len(records),
                          warnings=cell_warnings)
    by_question: dict[str, str] = {}
    for gid, norm in project.reader().execute("SELECT id, question_norm FROM golden_rows ORDER BY created_at, id"):
        by_question.setdefault(norm, gid)
    before = set(by_question)
    written: list[str] = []
    report.kept = kept_fields(records)
    clears: dict[str, list[tuple[int, str]]] = {f: [] for f in LABELS}
    ctx.report(0, len(records), "writing golden rows", force=True)
    with project.write("import golden set", changed=(Area.GOLDEN,)) as conn:
        chunk_by_text = _chunks_by_text(conn, records)
        known_slices = {r[0] for r in conn.execute("SELECT name FROM slices")}
        new_slices: set[str] = set()
        now = utcnow()
        for done, rec in enumerate(records, start=1):
            if done % 500 == 0:
                ctx.check()
                ctx.report(done, len(records), "writing golden rows")
            rec.slice_tag = rec.slice_tag or default_slice   # (an update that leaves the slice out keeps it)
            if not rec.gold_chunk_ids and rec.gold_context:
                found = chunk_by_text.get(normalise_passage(rec.gold_context))
                if found:
                    rec.gold_chunk_ids = [found]
                else:
                    rec.metadata.setdefault("gold_context", rec.gold_context)
            # a row without an id is the golden row with its question, if there is one (was: a new id, so a
            # re-import of the set without its id column doubled it, 72 -> 144, without a word)
            gid = rec.id or by_question.get(normalise_question(rec.question)) or golden_id_for(rec.question)
            for label in _upsert(project, conn, gid, rec, source, now, report):
                clears[label].append((rec.row, gid))
            if rec.slice_tag and rec.slice_tag not in known_slices:
                new_slices.add(rec.slice_tag)
            written.append(gid)
            if normalise_question(rec.question) not in before:
                report.fresh_ids.append(gid)
        if any(clears.values()) and not allow_clearing:
            raise _clearing_refused(clears, file)
        for position, name in enumerate(sorted(new_slices), start=len(known_slices)):
            conn.execute("INSERT INTO slices (name, position) VALUES (?, ?)", (name, position))
        if new_slices:       # one line for all of them (a first import brings six at once)
            report.warnings.append(f"{len(new_slices)} new slice(s) added to the project: "
                                   + ", ".join(f"'{n}'" for n in sorted(new_slices)))
        missing = _unknown_chunk_ids(conn, records)
        if missing:
            report.warnings.append(f"{missing} gold chunk id(s) are not in the project's corpus")
        dedupe.mark_unchecked(conn, report.fresh_ids)
        ctx.check()
        project.audit(conn, "import", "golden", None, file=file, layout=layout.name, added=report.added,
                      updated=report.updated, unchanged=report.unchanged)
    if check_duplicates and report.fresh_ids:
        report.warnings += _near_duplicate_warnings(project, report.fresh_ids)
    if report.added or report.updated:     # the large runs linked to what changed: their values kept again
        ctx.report(len(records), len(records), "keeping the runs' values for quick reads", force=True)
        report.warnings += keep_run_values(project)
    ctx.report(len(records), len(records), "done", force=True)
    return report


def _clearing_refused(clears: dict[str, list[tuple[int, str]]], file: str) -> ImportFailed:
    parts = [f"the {LABELS[f]} of {len(rows)} row(s)" for f, rows in clears.items() if rows]
    first = min((rows[0] for rows in clears.values() if rows), key=lambda r: r[0])
    return ImportFailed(
        f"this import would clear {', '.join(parts)} (first: row {first[0]}, golden row {first[1]}): the file has "
        "the column but the cells are empty. Nothing was imported", file=file,
        cli_hint="leave the column out of the file to keep what is stored, or confirm with --allow-clearing",
        gui_hint="leave the column out of the file to keep what is stored, or tick 'Clear labels the file "
                 "leaves empty'")


def _merged(rec: GoldenRecord, stored: dict[str, Any]) -> None:
    """Fields the file leaves out keep their stored value; metadata the import itself adds (a gold context it could
    not resolve) is added to the stored metadata."""
    if "gold_answer" not in rec.given:
        rec.gold_answer = stored["gold_answer"]
    if "gold_chunk_ids" not in rec.given and not rec.gold_chunk_ids:
        rec.gold_chunk_ids = stored["gold_chunk_ids"]
    if "slice_tag" not in rec.given:
        rec.slice_tag = stored["slice_tag"]
    if "metadata" not in rec.given:
        rec.metadata = {**stored["metadata"], **rec.metadata}


def _upsert(project: Project, conn: sqlite3.Connection, gid: str, rec: GoldenRecord, source: str, now: str,
            report: ImportReport) -> list[str]:
    """Insert or update one row; returns the labels the update clears."""
    row = conn.execute("SELECT question, gold_answer, gold_chunk_ids, slice_tag, metadata, status, revision "
                       "FROM golden_rows WHERE id = ?", (gid,)).fetchone()
    old = None if row is None else _stored_content(row[:6])
    if old is not None:
        _merged(rec, old)
    status = rec.status or (row[5] if row else "approved")
    new = _content(rec, status)
    values = (rec.question, normalise_question(rec.question), rec.gold_answer, json.dumps(rec.gold_chunk_ids),
              rec.slice_tag, json.dumps(rec.metadata, ensure_ascii=False))
    if row is None or old is None:   # (one and the same: no stored row)
        conn.execute("INSERT INTO golden_rows (question, question_norm, gold_answer, gold_chunk_ids, slice_tag, "
                     "metadata, id, source, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (*values, gid, rec.source or source, status, now, now))
        _edit(conn, project, gid, 1, "create", now, f"imported from {report.file}", None, new)
        report.added += 1
        return []
    if old == new:
        report.unchanged += 1
        return []
    revision = row[6] + 1
    conn.execute("UPDATE golden_rows SET question = ?, question_norm = ?, gold_answer = ?, gold_chunk_ids = ?, "
                 "slice_tag = ?, metadata = ?, status = ?, revision = ?, updated_at = ? WHERE id = ?",
                 (*values, status, revision, now, gid))
    _edit(conn, project, gid, revision, "update", now, f"imported from {report.file}", old, new)
    report.updated += 1
    return cleared_labels(old, new)


def _edit(conn: sqlite3.Connection, project: Project, gid: str, revision: int, op: str, now: str, reason: str,
          before: dict | None, after: dict | None) -> None:
    conn.execute("INSERT INTO golden_edits (golden_id, revision, op, author, at, reason, before, after) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (gid, revision, op, project.actor, now, reason,
                  None if before is None else json.dumps(before, ensure_ascii=False),
                  None if after is None else json.dumps(after, ensure_ascii=False)))


def _chunks_by_text(conn: sqlite3.Connection, records: list[GoldenRecord]) -> dict[str, str]:
    return chunks_by_text(conn, {normalise_passage(r.gold_context) for r in records
                                 if r.gold_context and not r.gold_chunk_ids})


def _unknown_chunk_ids(conn: sqlite3.Connection, records: list[GoldenRecord]) -> int:
    ids = {cid for r in records for cid in r.gold_chunk_ids}
    if not ids or conn.execute("SELECT COUNT(*) FROM corpus_chunks").fetchone()[0] == 0:
        return 0
    known = {r[0] for r in conn.execute("SELECT chunk_id FROM corpus_chunks")}
    return len(ids - known)



def _near_duplicate_warnings(project: Project, fresh_ids: list[str]) -> list[str]:
    """The check helps but must never block an import: without the embedding model it is skipped, and says so
    (the rows stay listed as unchecked)."""

    try:
        found = dedupe.check_new(project, fresh_ids)
    except (RagevalError, ImportError) as exc:
        return [f"near-duplicate check skipped: {exc}"]
    return [f"near-duplicate of golden row {pair['b']} (cosine {pair['cosine']:.2f}): {found.questions[pair['a']][:80]}"
            for pair in found.pairs]
