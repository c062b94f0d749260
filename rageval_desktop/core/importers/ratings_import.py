"""Import human ratings from a file (CSV/JSONL): every row checked against the project, all or nothing."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import ImportFailed, RagevalError
from rageval_desktop.core.base.text import normalise_question
from rageval_desktop.core.importers.cells import Cells
from rageval_desktop.core.importers.readers import read_records
from rageval_desktop.core.review import targets
from rageval_desktop.core.review.ratings import RATING_COLUMNS, apply_holds, check_score
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project


@dataclass
class RatingsImport:
    file: str
    imported: int
    unused_columns: list[str]
    samples: dict[int, int] = field(default_factory=dict)   # sample -> ratings attached to it
    outside: int = 0                                         # ratings that belong to no sample
    held: int = 0                                            # from reviewers set aside: imported, not counted

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "imported": self.imported, "unused_columns": self.unused_columns,
                "samples": {str(k): v for k, v in self.samples.items()}, "outside_samples": self.outside,
                "held": self.held}

    def summary(self) -> str:
        text = f"imported {self.imported} ratings from {self.file}"
        if self.samples:
            text += "; " + ", ".join(f"{n} in sample {sid}" for sid, n in sorted(self.samples.items()))
        if self.outside:
            text += (f"; {self.outside} belong to no sample (an audit counts them unless others come from a sample "
                     "drawn with unequal probabilities; a sample_id column joins them to one)")
        if self.held:
            text += (f"; {self.held} come from reviewers set aside and do not count until they are brought back "
                     "(rageval reviewers)")
        return text


def import_ratings(project: Project, path: str | Path, *, sample_id: int | None = None) -> RatingsImport:
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
        asked = normalise_question(question)
        by_question.setdefault((run, asked), []).append((rid, run))
        by_question.setdefault((None, asked), []).append((rid, run))
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
        named = sample_id if sample_id is not None else (
            c.number(r, "sample_id", i, integer=True) if "sample_id" in r else None)
        rows.append([row_id, metric, rank, key, c.text(r, "reviewer", i, required=True), score,
                     c.text(r, "comment", i), utcnow(), named, i])
    chosen = _samples(conn, c, rows)
    with project.write("import ratings", changed=(Area.RATINGS,)) as w:
        before = int(w.execute("SELECT COALESCE(MAX(id), 0) FROM human_ratings").fetchone()[0])
        w.executemany("INSERT INTO human_ratings (run_row_id, metric, passage_rank, item_key, reviewer, score, "
                      "comment, created_at, sample_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [(*row[:8], sid) for row, sid in zip(rows, chosen, strict=True)])
        held = apply_holds(w)
        # the ratings this import made (ids after `before`, in this transaction): what its undo withdraws
        project.audit(w, "import ratings", "ratings", None, file=path.name, rows=len(rows),
                      samples=sorted({s for s in chosen if s is not None}), first_id=before + 1,
                      last_id=before + len(rows))
    attached: dict[int, int] = {}
    for sid in chosen:
        if sid is not None:
            attached[sid] = attached.get(sid, 0) + 1
    return RatingsImport(path.name, len(rows), [col for col in columns if col not in RATING_COLUMNS], attached,
                         sum(sid is None for sid in chosen), held)


def _samples(conn: sqlite3.Connection, c: Cells, rows: list[list]) -> list[int | None]:
    """The sample of each rating: the one named (each rating must be one of its targets, of its metric), else the
    newest sample of the rating's metric that holds every target the file rates for that metric; None: none does."""
    members: dict[int, tuple[str, set[tuple[int, int]]]] = {}

    def sample(sid: int) -> tuple[str, set[tuple[int, int]]]:
        if sid not in members:
            found = conn.execute("SELECT metric FROM review_samples WHERE id = ?", (sid,)).fetchone()
            targets_ = {(int(r), int(t)) for r, t in conn.execute(
                "SELECT run_row_id, item FROM review_sample_rows WHERE sample_id = ?", (sid,))}
            members[sid] = (found[0] if found else "", targets_ if found else set())
        return members[sid]

    out: list[int | None] = []
    by_metric: dict[str, set[tuple[int, int]]] = {}
    for row_id, metric, rank, *_rest, named, line in rows:
        if named is None:
            by_metric.setdefault(metric, set()).add((row_id, rank))
            continue
        found_metric, held = sample(int(named))
        if not found_metric:
            raise c.fail(f"there is no review sample {named}", line, "sample_id")
        if found_metric != metric:
            raise c.fail(f"sample {named} is a sample for {found_metric}, not {metric}", line, "sample_id")
        if (row_id, rank) not in held:
            raise c.fail(f"run row {row_id}" + (f", item {rank}" if rank else "") + f" is not a target of sample "
                         f"{named}", line, "sample_id")
    fitting: dict[str, int | None] = {}
    for metric, rated in by_metric.items():
        fitting[metric] = None
        for (sid,) in conn.execute("SELECT id FROM review_samples WHERE metric = ? ORDER BY id DESC", (metric,)):
            if rated <= sample(int(sid))[1]:
                fitting[metric] = int(sid)
                break
    for _row, metric, _rank, *_rest, named, _line in rows:
        out.append(int(named) if named is not None else fitting[metric])
    return out


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
