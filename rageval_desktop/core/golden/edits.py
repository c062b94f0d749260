"""Every change of a golden row is a named operation with who, when, why, before and after; rows are retired,
never deleted. Validation: a question, a slice among the project's slices, gold ids that exist in the corpus."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.base.text import normalise_question, short_hash
from rageval_desktop.core.golden.dedupe import mark_unchecked
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.schema import STANDARD_SLICES

FIELDS = ("question", "gold_answer", "gold_chunk_ids", "slice_tag", "status", "source")


def golden_id_for(question: str) -> str:
    """A new golden row's id, from its question (the same question always gets the same id)."""
    return "g-" + short_hash(normalise_question(question))


class GoldenInvalid(RagevalError):
    pass


def row(project: Project, golden_id: str, conn: sqlite3.Connection | None = None) -> dict[str, Any]:
    conn = conn or project.reader()
    found = conn.execute("SELECT id, question, gold_answer, gold_chunk_ids, slice_tag, status, source, revision, "
                         "metadata FROM golden_rows WHERE id = ?", (golden_id,)).fetchone()
    if found is None:
        raise NotFound(f"no golden row '{golden_id}'")
    gid, q, a, ids, s, st, src, rev, meta = found
    return {"id": gid, "question": q, "gold_answer": a, "gold_chunk_ids": json.loads(ids), "slice_tag": s,
            "status": st, "source": src, "revision": rev, "metadata": json.loads(meta)}


def validate(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    if not str(values.get("question") or "").strip():
        raise GoldenInvalid("the question is empty")
    tag = values.get("slice_tag")
    slices = {r[0] for r in conn.execute("SELECT name FROM slices")}
    if tag is not None and tag not in slices:
        if tag not in STANDARD_SLICES:  # a typo must not make a slice; a new slice is added on purpose
            raise GoldenInvalid(f"slice '{tag}' is not one of the project's slices "
                                f"({', '.join(sorted(slices)) or 'none yet'}); add it first, or use one of "
                                f"{', '.join(STANDARD_SLICES)}",
                                cli_hint=f"add it with: rageval golden target PROJECT --slice '{tag}' --rows N")
        conn.execute("INSERT INTO slices (name, position) VALUES (?, ?)", (tag, len(slices)))
    ids = values.get("gold_chunk_ids") or []
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise GoldenInvalid("gold_chunk_ids must be a list of chunk ids")
    if ids and conn.execute("SELECT COUNT(*) FROM corpus_chunks").fetchone()[0]:
        known = {r[0] for r in conn.execute(f"SELECT chunk_id FROM corpus_chunks WHERE chunk_id IN "
                                            f"({','.join('?' * len(ids))})", ids)}
        missing = [i for i in ids if i not in known]
        if missing:
            raise GoldenInvalid(f"gold chunk(s) not in the corpus: {', '.join(missing[:5])}")


def _record(project: Project, conn: sqlite3.Connection, gid: str, revision: int, op: str, reason: str | None,
            before: dict | None, after: dict | None) -> None:
    conn.execute("INSERT INTO golden_edits (golden_id, revision, op, author, at, reason, before, after) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (gid, revision, op, project.actor, utcnow(), reason,
                  None if before is None else json.dumps({k: before[k] for k in FIELDS}, ensure_ascii=False),
                  None if after is None else json.dumps({k: after[k] for k in FIELDS}, ensure_ascii=False)))


def add_row(project: Project, question: str, *, gold_answer: str | None = None, gold_chunk_ids: list[str] | None = None,
            slice_tag: str | None = None, source: str = "manual", status: str = "approved", reason: str | None = None,
            golden_id: str | None = None, metadata: dict | None = None) -> dict[str, Any]:
    values = {"question": question.strip(), "gold_answer": gold_answer, "gold_chunk_ids": gold_chunk_ids or [],
              "slice_tag": slice_tag, "status": status, "source": source}
    gid = golden_id or golden_id_for(question)
    with project.write("add golden row", changed=(Area.GOLDEN,)) as conn:
        validate(conn, values)
        if conn.execute("SELECT 1 FROM golden_rows WHERE id = ? OR question_norm = ?",
                        (gid, normalise_question(question))).fetchone():
            raise GoldenInvalid("the golden set already has this question (or this id)")
        now = utcnow()
        conn.execute("INSERT INTO golden_rows (id, question, question_norm, gold_answer, gold_chunk_ids, slice_tag, "
                     "source, status, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (gid, values["question"], normalise_question(question), gold_answer,
                      json.dumps(values["gold_chunk_ids"]), slice_tag, source, status,
                      json.dumps(metadata or {}, ensure_ascii=False), now, now))
        _record(project, conn, gid, 1, "create", reason, None, values)
        mark_unchecked(conn, [gid])
    return row(project, gid)


def edit_row(project: Project, golden_id: str, reason: str, **changes: Any) -> dict[str, Any]:
    """Change fields of a row; the edit, its reason and the before/after are kept. Returns the new row."""
    unknown = set(changes) - {"question", "gold_answer", "gold_chunk_ids", "slice_tag"}
    if unknown:
        raise GoldenInvalid(f"cannot edit {', '.join(sorted(unknown))} (use retire/approve for the status)")
    if not reason or not reason.strip():
        raise GoldenInvalid("say why: every edit of the golden set carries a reason")
    with project.write("edit golden row", changed=(Area.GOLDEN,)) as conn:
        before = row(project, golden_id, conn)
        after = {**before, **changes}
        if after == before:
            return before
        validate(conn, after)
        revision = before["revision"] + 1
        conn.execute("UPDATE golden_rows SET question = ?, question_norm = ?, gold_answer = ?, gold_chunk_ids = ?, "
                     "slice_tag = ?, revision = ?, updated_at = ? WHERE id = ?",
                     (after["question"], normalise_question(after["question"]), after["gold_answer"],
                      json.dumps(after["gold_chunk_ids"]), after["slice_tag"], revision, utcnow(), golden_id))
        _record(project, conn, golden_id, revision, "update", reason, before, after)
        if after["question"] != before["question"]:
            mark_unchecked(conn, [golden_id])   # the near-duplicate check looks at the new question
        judged = conn.execute("SELECT COUNT(*) FROM judgments x JOIN run_rows rr ON rr.id = x.run_row_id "
                              "WHERE rr.golden_id = ?", (golden_id,)).fetchone()[0]
        if judged:  # the row was edited after runs were judged on it: reports will say so
            meta = {**before["metadata"], "edited_after_judging": True}
            conn.execute("UPDATE golden_rows SET metadata = ? WHERE id = ?", (json.dumps(meta), golden_id))
    return row(project, golden_id)


def set_status(project: Project, golden_id: str, status: str, reason: str) -> dict[str, Any]:
    ops = {"retired": "retire", "approved": "approve", "draft": "restore"}
    if status not in ops:
        raise GoldenInvalid("status is draft, approved or retired")
    if not reason or not reason.strip():
        raise GoldenInvalid("say why")
    with project.write(f"{ops[status]} golden row", changed=(Area.GOLDEN,)) as conn:
        before = row(project, golden_id, conn)
        if before["status"] == status:
            return before
        revision = before["revision"] + 1
        conn.execute("UPDATE golden_rows SET status = ?, revision = ?, updated_at = ? WHERE id = ?",
                     (status, revision, utcnow(), golden_id))
        _record(project, conn, golden_id, revision, ops[status] if status != "approved" or before["status"] != "retired"
                else "restore", reason, before, {**before, "status": status})
    return row(project, golden_id)


def history(project: Project, golden_id: str) -> list[dict[str, Any]]:
    return [{"revision": r, "op": op, "author": au, "at": at, "reason": why,
             "before": json.loads(b) if b else None, "after": json.loads(a) if a else None}
            for r, op, au, at, why, b, a in project.reader().execute(
                "SELECT revision, op, author, at, reason, before, after FROM golden_edits WHERE golden_id = ? "
                "ORDER BY id", (golden_id,))]


def promote_failure(project: Project, run_row_id: int, slice_tag: str, reason: str | None = None) -> dict[str, Any]:
    """A run row that failed in production becomes a draft golden row (source = production failure); a reviewer
    adds the gold answer and chunks, then approves it."""
    found = project.reader().execute("SELECT rr.question, r.name, rr.external_id FROM run_rows rr JOIN runs r "
                                     "ON r.id = rr.run_id WHERE rr.id = ?", (run_row_id,)).fetchone()
    if found is None:
        raise NotFound(f"run row {run_row_id} does not exist")
    question, run, ext = found
    golden = project.reader().execute("SELECT id FROM golden_rows WHERE question_norm = ?",
                                      (normalise_question(question),)).fetchone()
    if golden is not None:
        raise GoldenInvalid(f"run row {run_row_id} ({run}, {ext}) asks golden row {golden[0]}'s question already; "
                            f"edit that row instead (the app's Golden set page)")
    return add_row(project, question, slice_tag=slice_tag, source="production_failure", status="draft",
                   reason=reason or f"promoted from run {run}, row {ext}",
                   metadata={"promoted_from": {"run": run, "row": ext}})


def set_target(project: Project, slice_tag: str, rows: int | None) -> None:
    """How many approved rows a slice should have (the balance panel compares against it)."""
    with project.write("set slice target", changed=(Area.GOLDEN,)) as conn:
        known = {r[0] for r in conn.execute("SELECT name FROM slices")}
        if slice_tag not in known:
            if rows is None:
                raise GoldenInvalid(f"no slice '{slice_tag}'")
            conn.execute("INSERT INTO slices (name, target, position) VALUES (?, ?, ?)", (slice_tag, rows, len(known)))
        else:
            conn.execute("UPDATE slices SET target = ? WHERE name = ?", (rows, slice_tag))
        project.audit(conn, "set slice target", "slice", slice_tag, rows=rows)


def balance(project: Project) -> dict[str, Any]:
    """Rows per slice against targets, and the share that came from production failures."""
    conn = project.reader()
    slices = {name: {"rows": n, "target": target} for name, target, n in conn.execute(
        "SELECT s.name, s.target, COUNT(g.id) FROM slices s LEFT JOIN golden_rows g ON g.slice_tag = s.name AND "
        "g.status = 'approved' GROUP BY s.name ORDER BY s.position")}
    total, failures, drafts = conn.execute(
        "SELECT SUM(status = 'approved'), SUM(status = 'approved' AND source = 'production_failure'), "
        "SUM(status = 'draft') FROM golden_rows").fetchone()
    total = total or 0
    return {"slices": slices, "approved": total, "drafts": drafts or 0,
            "from_production_failures": failures or 0,
            "production_failure_share": round((failures or 0) / total, 4) if total else 0.0}


def search_chunks(project: Project, text: str, limit: int = 50) -> list[dict[str, Any]]:
    """Corpus chunks whose id or text contains every word of the query (case-insensitive), for picking gold ids."""
    words = [w for w in text.lower().split() if w]
    if not words:
        return []
    where = " AND ".join("(instr(lower(text), ?) > 0 OR instr(lower(chunk_id), ?) > 0)" for _ in words)
    params = [p for w in words for p in (w, w)]
    return [{"chunk_id": c, "doc_id": d, "text": t} for c, d, t in project.reader().execute(
        f"SELECT chunk_id, doc_id, text FROM corpus_chunks WHERE {where} ORDER BY doc_id, position LIMIT ?",
        (*params, limit))]


def chunk_texts(project: Project, chunk_ids: list[str]) -> dict[str, str]:
    """The corpus text of each chunk id (ids not in the corpus are left out)."""
    ids = list(dict.fromkeys(chunk_ids))
    out: dict[str, str] = {}
    conn = project.reader()
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        out.update(conn.execute(f"SELECT chunk_id, text FROM corpus_chunks WHERE chunk_id IN "
                                f"({','.join('?' * len(part))})", part).fetchall())
    return out
