"""Import corpus chunks (what gold_chunk_ids point at) from a table of `chunk_id, doc_id, text`.

Splitting a folder of documents into chunks is the golden-set curation's job; this reads chunks that
already exist, e.g. exported from the user's vector store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers.cells import Cells
from rageval_desktop.core.importers.common import ImportReport, check_unique
from rageval_desktop.core.importers.readers import read_records
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

KNOWN = {"chunk_id", "doc_id", "position", "text", "token_count"}


def import_corpus(project: Project, path: str | Path, *, ctx: TaskContext | None = None) -> ImportReport:
    ctx = ctx or TaskContext()
    path = Path(path)
    records, columns = read_records(path)
    missing = [c for c in ("chunk_id", "text") if c not in columns]
    if missing:
        raise ImportFailed(f"missing required column(s): {', '.join(missing)} (found: {', '.join(columns)})",
                           file=path.name)
    c = Cells(path.name)
    chunks: list[dict[str, Any]] = []
    for i, r in enumerate(records, start=1):
        chunk_id = c.text(r, "chunk_id", i, required=True)
        chunks.append({
            "chunk_id": chunk_id, "doc_id": c.text(r, "doc_id", i) or chunk_id,
            "position": c.number(r, "position", i, integer=True) or 0,
            "text": c.text(r, "text", i, required=True),
            "token_count": c.number(r, "token_count", i, integer=True),
            "metadata": json.dumps(c.extras(r, KNOWN, i), ensure_ascii=False)})
    check_unique([(i, ch["chunk_id"]) for i, ch in enumerate(chunks, start=1)], path.name, "chunk_id", "chunk id")
    report = ImportReport(kind="corpus", file=path.name, layout="chunks", rows_read=len(chunks),
                          warnings=list(c.warnings))
    with project.write("import corpus", changed=(Area.CORPUS,)) as conn:
        present = {r[0] for r in conn.execute("SELECT chunk_id FROM corpus_chunks")}
        fresh = [ch for ch in chunks if ch["chunk_id"] not in present]
        project.utils.table("corpus_chunks").insert_all(fresh, batch_size=2_000)
        for ch in chunks:
            if ch["chunk_id"] in present:
                cur = conn.execute("UPDATE corpus_chunks SET doc_id = ?, position = ?, text = ?, token_count = ?, "
                                   "metadata = ? WHERE chunk_id = ? AND text IS NOT ?",
                                   (ch["doc_id"], ch["position"], ch["text"], ch["token_count"], ch["metadata"],
                                    ch["chunk_id"], ch["text"]))
                report.updated += cur.rowcount
        report.added = len(fresh)
        report.unchanged = len(chunks) - report.added - report.updated
        ctx.check()
        project.audit(conn, "import", "corpus", None, file=path.name, added=report.added, updated=report.updated)
    return report
