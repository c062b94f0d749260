"""Human ratings. Each is its own transaction (a rating survives a crash the moment it is made), carries its
reviewer, time and seconds taken, and never touches a judgment. Undo withdraws a rating rather than deleting it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval_desktop.core.errors import ImportFailed, NotFound, RagevalError
from rageval_desktop.core.judges.registry import METRICS
from rageval_desktop.core.store.project import Project, utcnow
from rageval_desktop.core.text import normalise_question


@dataclass(frozen=True)
class Rating:
    id: int
    run_row_id: int
    metric: str
    reviewer: str
    score: float | None
    skipped: bool
    item: int = 0                 # 0 = the row; a passage's rank, a nugget's or a citation's number
    item_key: str | None = None   # a nugget's or a citation's text (see core.review.targets)


def check_score(metric: str, score: float) -> float:
    """A score on the metric's human scale: a whole number (1-5, 0-3, 0/1), or 0, 0.5, 1 for a nugget's or a
    citation's support."""
    from rageval_desktop.core.review.guidelines import human_rubric

    if metric not in METRICS:
        raise RagevalError(f"unknown metric '{metric}'")
    points = [p.score for p in human_rubric(metric).points]
    if float(score) not in points:
        if all(p == int(p) for p in points):
            raise RagevalError(f"{metric} is rated with a whole number from {points[0]:g} to {points[-1]:g}, "
                               f"not {score:g}")
        raise RagevalError(f"{metric} is rated {', '.join(f'{p:g}' for p in points)}, not {score:g}")
    return float(score)


def rate(project: Project, run_row_id: int, metric: str, reviewer: str, score: float | None, *,
         sample_id: int | None = None, comment: str | None = None, seconds: float | None = None,
         skipped: bool = False, item: int = 0, item_key: str | None = None) -> Rating:
    """One rating of a target: the row (item 0), a passage (item = its rank), a nugget or a citation (item = its
    number, item_key = its text)."""
    from rageval_desktop.core.review.targets import BY_TEXT, unit

    if not reviewer.strip():
        raise RagevalError("ratings need a reviewer name (set it in the preferences)")
    kind = unit(metric)
    if kind == "row" and item != 0:
        raise RagevalError(f"{metric} is rated per row: rate the row (item 0), not item {item}")
    if kind != "row" and (item < 1 or (kind in BY_TEXT and not item_key)):
        raise RagevalError(f"{metric} is rated per {kind}: name the {kind} (its number"
                           + (" and its text)" if kind in BY_TEXT else ")"))
    if not skipped:
        if score is None:
            raise RagevalError("a rating needs a score (or skip the row)")
        score = check_score(metric, score)
    with project.write("rate", changed=("ratings",)) as conn:
        cur = conn.execute(
            "INSERT INTO human_ratings (run_row_id, metric, passage_rank, item_key, reviewer, score, skipped, "
            "comment, seconds_taken, sample_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_row_id, metric, item, item_key, reviewer.strip(), None if skipped else score, int(skipped),
             comment, seconds, sample_id, utcnow()))
    return Rating(cur.lastrowid, run_row_id, metric, reviewer, None if skipped else score, skipped, item, item_key)


def withdraw(project: Project, rating_id: int) -> None:
    """Undo: the rating stays in the file, marked withdrawn, and stops counting."""
    with project.write("undo rating", changed=("ratings",)) as conn:
        cur = conn.execute("UPDATE human_ratings SET withdrawn_at = ? WHERE id = ? AND withdrawn_at IS NULL",
                           (utcnow(), rating_id))
        if cur.rowcount == 0:
            raise NotFound(f"no rating {rating_id} to undo")


def current(project: Project, metric: str, reviewer: str | None = None) -> dict[int, float]:
    """Each row's latest standing score for a metric (by one reviewer, or the latest of anyone)."""
    sql = ("SELECT run_row_id, score FROM human_ratings WHERE metric = ? AND withdrawn_at IS NULL AND skipped = 0"
           + (" AND reviewer = ?" if reviewer else "") + " ORDER BY id")
    params: tuple = (metric, reviewer) if reviewer else (metric,)
    return {row: score for row, score in project.reader().execute(sql, params)}


RATING_COLUMNS = ("row_id", "question", "run", "metric", "reviewer", "score", "comment", "passage_rank", "item")


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
    from rageval_desktop.core.importers.cells import Cells
    from rageval_desktop.core.importers.readers import read_records

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
                                           "ON r.id = rr.run_id ORDER BY rr.id"):
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
    with project.write("import ratings", changed=("ratings",)) as w:
        w.executemany("INSERT INTO human_ratings (run_row_id, metric, passage_rank, item_key, reviewer, score, "
                      "comment, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        project.audit(w, "import ratings", "ratings", None, file=path.name, rows=len(rows))
    return RatingsImport(path.name, len(rows), [col for col in columns if col not in RATING_COLUMNS])


def _target(conn: Any, c: Any, r: dict, i: int, metric: str, row_id: int, seen: dict) -> tuple[int, str | None]:
    """The rated target's (item, key), checked against what the row has."""
    from rageval_desktop.core.review import targets

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


def _passage_rank(conn: Any, c: Any, rank: int | None, i: int, metric: str, row_id: int) -> int:
    if rank is None or rank < 1:
        raise c.fail(f"{metric} is rated per retrieved passage: passage_rank must name the passage (1 = first)",
                     i, "passage_rank")
    if not conn.execute("SELECT 1 FROM retrieved_passages WHERE run_row_id = ? AND rank = ?",
                        (row_id, rank)).fetchone():
        raise c.fail(f"run row {row_id} has no retrieved passage at rank {rank}", i, "passage_rank")
    return int(rank)


def export_ratings(project: Project, out: str | Path) -> int:
    import pandas as pd

    from rageval_desktop.core.reports.write import neutralise

    out = Path(out)
    frame = pd.read_sql_query(
        "SELECT h.id AS rating_id, h.run_row_id AS row_id, r.name AS run, rr.external_id, rr.question, h.metric, "
        "h.passage_rank, h.item_key AS item, "
        "h.reviewer, h.score, h.skipped, h.comment, h.seconds_taken, h.created_at FROM human_ratings h "
        "JOIN run_rows rr ON rr.id = h.run_row_id JOIN runs r ON r.id = rr.run_id WHERE h.withdrawn_at IS NULL "
        "ORDER BY h.id", project.reader())
    if out.suffix == ".jsonl":
        frame.to_json(out, orient="records", lines=True, force_ascii=False)
    elif out.suffix == ".csv":
        frame.map(neutralise).to_csv(out, index=False)
    else:
        raise RagevalError(f"cannot write '{out.name}': ratings export to .csv or .jsonl")
    return len(frame)


def progress(project: Project, sample_id: int, reviewer: str) -> dict[str, Any]:
    conn = project.reader()
    total = conn.execute("SELECT COUNT(*) FROM review_sample_rows WHERE sample_id = ?", (sample_id,)).fetchone()[0]
    done = conn.execute("SELECT COUNT(DISTINCT run_row_id || ':' || passage_rank) FROM human_ratings "
                        "WHERE sample_id = ? AND reviewer = ? AND withdrawn_at IS NULL",
                        (sample_id, reviewer)).fetchone()[0]
    return {"done": done, "total": total}


def my_ratings(project: Project, sample_id: int, reviewer: str) -> dict[tuple[int, int], float | None]:
    """This reviewer's standing ratings in a sample by target (row, item) (None = skipped), latest last."""
    return {(r, item): s for r, item, s in project.reader().execute(
        "SELECT run_row_id, passage_rank, score FROM human_ratings WHERE sample_id = ? AND reviewer = ? "
        "AND withdrawn_at IS NULL ORDER BY id", (sample_id, reviewer))}
