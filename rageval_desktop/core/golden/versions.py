"""Named snapshots of the golden set, diffs between them (or against the current state), and exports for review
in git. Importing an export back goes through the golden-set importer, which records every change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.base.text import neutralise
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

CURRENT = "current"
COMPARED = ("question", "gold_answer", "gold_chunk_ids", "slice_tag", "status", "source")


def create_version(project: Project, name: str, note: str | None = None) -> dict[str, Any]:
    name = name.strip()
    if not name or name == CURRENT:
        raise RagevalError("a version needs a name (and 'current' is reserved)")
    with project.write("golden version", changed=(Area.GOLDEN,)) as conn:
        if conn.execute("SELECT 1 FROM golden_versions WHERE name = ?", (name,)).fetchone():
            raise RagevalError(f"version '{name}' already exists")
        vid = conn.execute("INSERT INTO golden_versions (name, author, note, created_at) VALUES (?, ?, ?, ?)",
                           (name, project.actor, note, utcnow())).lastrowid
        conn.execute(
            "INSERT INTO golden_version_rows (version_id, golden_id, revision, data) SELECT ?, id, revision, "
            "json_object('question', question, 'gold_answer', gold_answer, 'gold_chunk_ids', json(gold_chunk_ids), "
            "'slice_tag', slice_tag, 'status', status, 'source', source) FROM golden_rows", (vid,))
        n = conn.execute("SELECT COUNT(*) FROM golden_version_rows WHERE version_id = ?", (vid,)).fetchone()[0]
        project.audit(conn, "golden version", "golden_version", name, rows=n, note=note)
    return {"name": name, "rows": n}


def list_versions(project: Project) -> list[dict[str, Any]]:
    return [{"name": n, "author": a, "note": note, "created_at": c, "rows": rows}
            for n, a, note, c, rows in project.reader().execute(
                "SELECT v.name, v.author, v.note, v.created_at, COUNT(r.golden_id) FROM golden_versions v "
                "LEFT JOIN golden_version_rows r ON r.version_id = v.id GROUP BY v.id ORDER BY v.id")]


def rows_of(project: Project, version: str) -> dict[str, dict[str, Any]]:
    conn = project.reader()
    if version == CURRENT:
        return {gid: {"question": q, "gold_answer": a, "gold_chunk_ids": json.loads(ids), "slice_tag": s,
                      "status": st, "source": src}
                for gid, q, a, ids, s, st, src in conn.execute(
                    "SELECT id, question, gold_answer, gold_chunk_ids, slice_tag, status, source FROM golden_rows")}
    found = conn.execute("SELECT id FROM golden_versions WHERE name = ?", (version,)).fetchone()
    if found is None:
        names = ", ".join(v["name"] for v in list_versions(project)) or "none"
        raise NotFound(f"no golden-set version '{version}' (versions: {names}; or 'current')")
    return {gid: json.loads(data) for gid, data in conn.execute(
        "SELECT golden_id, data FROM golden_version_rows WHERE version_id = ?", (found[0],))}


def diff(project: Project, old: str, new: str = CURRENT) -> dict[str, Any]:
    """Rows added, removed, and changed field by field between two versions."""
    a, b = rows_of(project, old), rows_of(project, new)
    changed = []
    for gid in sorted(set(a) & set(b)):
        fields = {f: {"before": a[gid].get(f), "after": b[gid].get(f)} for f in COMPARED
                  if a[gid].get(f) != b[gid].get(f)}
        if fields:
            changed.append({"id": gid, "fields": fields})
    return {"from": old, "to": new, "added": sorted(set(b) - set(a)), "removed": sorted(set(a) - set(b)),
            "changed": changed}


def export_version(project: Project, version: str, out: str | Path) -> int:
    """JSONL (one row per line, sorted by id: diffs well in git) or CSV; re-importable with `import golden`."""
    out = Path(out)
    rows = rows_of(project, version)
    records = [{"id": gid, "question": r["question"], "gold_answer": r["gold_answer"],
                "gold_chunk_ids": r["gold_chunk_ids"], "slice_tag": r["slice_tag"], "status": r["status"],
                "source": r["source"]} for gid, r in sorted(rows.items())]
    if out.suffix == ".jsonl":
        out.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records),
                       encoding="utf-8")
    elif out.suffix == ".csv":
        import pandas as pd

        frame = pd.DataFrame(records)
        if len(frame):
            frame["gold_chunk_ids"] = [json.dumps(v) for v in frame["gold_chunk_ids"]]
        frame.map(neutralise).to_csv(out, index=False)
    else:
        raise RagevalError(f"cannot write '{out.name}': export a version to .jsonl or .csv")
    return len(records)
