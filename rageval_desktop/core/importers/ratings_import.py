"""Import human ratings from a file (CSV/JSONL): every row checked against the project, all or nothing."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import ImportFailed, RagevalError
from rageval_desktop.core.base.text import normalise_question
from rageval_desktop.core.importers.cells import Cells
from rageval_desktop.core.importers.readers import read_records
from rageval_desktop.core.review import targets
from rageval_desktop.core.review.ratings import RATING_COLUMNS, check_score
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project


@dataclass
class RatingsImport:
    file: str
    imported: int
    unused_columns: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "imported": self.imported, "unused_columns": self.unused_columns}


def import_ratings(project: Project, path: str | Path) -> RatingsImport:
    """CSV/JSONL of `row_id` or `question` (+ `run`), `metric`, `reviewer`, `score` [, `passage_rank`, `item`,
    `comment`]; all or nothing. Per-passage metrics (passage_relevance) need `passage_rank`, the retrieved
    passage's rank (1 = first); nuggets and citation_support name the nugget or the citation by `item`, its text
    (as `rageval sample --json` lists it), or by its number in `passage_rank`; row metrics take none (or 0).
    Columns the importer does not use are reported, never dropped silently."""
    path = Path(path)
    records, columns = read_records(path)
    missing = [c for c in ("metric", "reviewer", "score") if c not in columns]
    if "row_id" not in columns and "question" not in columns:
        missing.append("row_id or question")
    if missing:
        raise ImportFailed(f"missing required column(s): {', '.join(missing)}", file=path.name)
    c = Cells(path.name)
    conn = project.reader()
    by_question: dict[tuple[str | None, str], list[tuple[int, str]]] = {}
    for rid, question, run in conn.execute("SELECT rr.id, rr.question, r.name FROM run_rows rr JOIN runs r "
                                           "ON r.id = rr.run_id WHERE r.purpose = 'run' ORDER BY rr.id"):
        key = normalise_question(question)
        by_question.setdefault((run, key), []).append((rid, run))
        by_question.setdefault((None, key), []).append((rid, run))
    rows = []
    seen: dict[tuple[str, int], list] = {}
    for i, r in enumerate(records, start=1):
        metric = c.text(r, "metric", i, required=True)
        score = c.number(r, "score", i, minimum=None)
        if score is None:
            raise c.fail("is empty; a score is required", i, "score")
        try:
            check_score(metric, score)
        except RagevalError as exc:
            raise c.fail(str(exc), i, "score") from None
        row_id = c.number(r, "row_id", i, integer=True) if "row_id" in r else None
        if row_id is None:
            question = c.text(r, "question", i, required=True)
            run = c.text(r, "run", i)
            found = by_question.get((run, normalise_question(question)), [])
            if not found:
                raise c.fail("matches no run row", i, "question")
            if len(found) > 1:   # was: the first match (v1's), so ratings meant for v2 counted for v1
                runs = sorted({name for _, name in found})
                where = (f"is answered {len(found)} times in run '{run}'; give the row_id" if run else
                         f"is in {len(found)} run rows (runs: {', '.join(runs)}); add a run column (or row_id) to "
                         "say which")
                raise c.fail(where, i, "question")
            row_id = found[0][0]
        elif not conn.execute("SELECT 1 FROM run_rows WHERE id = ?", (row_id,)).fetchone():
            raise c.fail(f"run row {row_id} does not exist", i, "row_id")
        rank, key = _target(conn, c, r, i, metric, row_id, seen)
        rows.append((row_id, metric, rank, key, c.text(r, "reviewer", i, required=True), score,
                     c.text(r, "comment", i), utcnow()))
    with project.write("import ratings", changed=(Area.RATINGS,)) as w:
        w.executemany("INSERT INTO human_ratings (run_row_id, metric, passage_rank, item_key, reviewer, score, "
                      "comment, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        project.audit(w, "import ratings", "ratings", None, file=path.name, rows=len(rows))
    return RatingsImport(path.name, len(rows), [col for col in columns if col not in RATING_COLUMNS])


def _target(conn: sqlite3.Connection, c: Cells, r: dict, i: int, metric: str, row_id: int,
            seen: dict) -> tuple[int, str | None]:
    """The rated target's (item, key), checked against what the row has."""
    kind = targets.unit(metric)
    rank = c.number(r, "passage_rank", i, integer=True) if "passage_rank" in r else None
    if kind == "row":
        if rank:
            raise c.fail(f"{metric} is rated per row: leave passage_rank empty (or 0), got {rank}", i,
                         "passage_rank")
        return 0, None
    if kind in targets.BY_TEXT:
        if (metric, row_id) not in seen:       # one query per row, not per rating
            seen[metric, row_id] = targets.candidates(conn, metric, row_ids=[row_id])
        listed = seen[metric, row_id]
        text = c.text(r, "item", i)
        if text:
            key = targets.text_key(text)
            found = next((t for t in listed if t.key == key), None)
            if found is None:
                raise c.fail(f"no {metric} judge judged this {kind} on run row {row_id}: {text!r}", i, "item")
            if rank and rank != found.item:
                raise c.fail(f"names {kind} {found.item}, but passage_rank says {rank}", i, "passage_rank")
            return found.item, found.key
        found = next((t for t in listed if t.item == rank), None)
        if found is None:
            raise c.fail(f"{metric} is rated per {kind}: name it by its text in an `item` column, or by its number "
                         f"(1 to {len(listed)} on run row {row_id}) in passage_rank", i,
                         "passage_rank" if rank else "item")
        return found.item, found.key
    return _passage_rank(conn, c, rank, i, metric, row_id), None


def _passage_rank(conn: sqlite3.Connection, c: Cells, rank: int | None, i: int, metric: str, row_id: int) -> int:
    if rank is None or rank < 1:
        raise c.fail(f"{metric} is rated per retrieved passage: passage_rank must name the passage (1 = first)",
                     i, "passage_rank")
    if not conn.execute("SELECT 1 FROM retrieved_passages WHERE run_row_id = ? AND rank = ?",
                        (row_id, rank)).fetchone():
        raise c.fail(f"run row {row_id} has no retrieved passage at rank {rank}", i, "passage_rank")
    return int(rank)
