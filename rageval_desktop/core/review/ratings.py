"""Human ratings. Each is its own transaction (a rating survives a crash the moment it is made), carries its
reviewer, time and seconds taken, and never touches a judgment. Undo withdraws a rating rather than deleting it."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.base.text import neutralise
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.review.guidelines import human_rubric
from rageval_desktop.core.review.targets import BY_TEXT, unit
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project


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
    held: bool = False            # saved, but set aside with the reviewer's other ratings (core.review.quality)


# The ratings a standing hold set aside (core.review.quality): withdrawn while it stands, restored when it is lifted.
HELD = ("SELECT hr.rating_id FROM reviewer_hold_ratings hr JOIN reviewer_holds rh ON rh.id = hr.hold_id "
        "WHERE rh.withdrawn_at IS NULL")


def apply_holds(conn: sqlite3.Connection, metric: str | None = None, reviewer: str | None = None) -> int:
    """Inside a write: set aside the standing ratings of every reviewer a standing hold names (of `metric`, or of
    every metric; of `reviewer`, or of everyone held) — ratings made or imported while a reviewer is held are held
    too. The ratings it set aside."""
    where, params = "", list[str]()
    if metric is not None:
        where, params = where + " AND metric = ?", [*params, metric]
    if reviewer is not None:
        where, params = where + " AND reviewer = ?", [*params, reviewer]
    now, total = utcnow(), 0
    for hold_id, who, what in conn.execute(
            "SELECT id, reviewer, metric FROM reviewer_holds WHERE withdrawn_at IS NULL" + where, params).fetchall():
        ids = [r for (r,) in conn.execute("SELECT id FROM human_ratings WHERE reviewer = ? AND metric = ? AND "
                                          "withdrawn_at IS NULL", (who, what))]
        conn.executemany("INSERT OR IGNORE INTO reviewer_hold_ratings (hold_id, rating_id) VALUES (?, ?)",
                         [(hold_id, r) for r in ids])
        conn.executemany("UPDATE human_ratings SET withdrawn_at = ? WHERE id = ?", [(now, r) for r in ids])
        total += len(ids)
    return total


def check_score(metric: str, score: float) -> float:
    """A score on the metric's human scale: a whole number (1-5, 0-3, 0/1), or 0, 0.5, 1 for a nugget's or a
    citation's support."""

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
    with project.write("rate", changed=(Area.RATINGS,)) as conn:
        cur = conn.execute(
            "INSERT INTO human_ratings (run_row_id, metric, passage_rank, item_key, reviewer, score, skipped, "
            "comment, seconds_taken, sample_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_row_id, metric, item, item_key, reviewer.strip(), None if skipped else score, int(skipped),
             comment, seconds, sample_id, utcnow()))
        held = apply_holds(conn, metric, reviewer.strip()) > 0
    assert cur.lastrowid is not None
    return Rating(cur.lastrowid, run_row_id, metric, reviewer, None if skipped else score, skipped, item, item_key,
                  held)


def withdraw(project: Project, rating_id: int) -> None:
    """Undo: the rating stays in the file, marked withdrawn, and stops counting."""
    with project.write("undo rating", changed=(Area.RATINGS,)) as conn:
        cur = conn.execute("UPDATE human_ratings SET withdrawn_at = ? WHERE id = ? AND withdrawn_at IS NULL",
                           (utcnow(), rating_id))
        if cur.rowcount == 0:     # set aside by a hold: taken off its list, so lifting the hold leaves it withdrawn
            cur = conn.execute(f"DELETE FROM reviewer_hold_ratings WHERE rating_id = ? AND rating_id IN ({HELD})",
                               (rating_id,))
        if cur.rowcount == 0:
            raise NotFound(f"no rating {rating_id} to undo")


def withdraw_range(project: Project, first: int, last: int) -> int:
    """Undo an import of ratings (core.ops' "import ratings"): its ratings, ids `first`..`last`, stay in the file,
    marked withdrawn, and stop counting (those set aside by a hold come off its list too). How many it withdrew."""
    with project.write("undo import of ratings", changed=(Area.RATINGS,)) as conn:
        done = conn.execute("UPDATE human_ratings SET withdrawn_at = ? WHERE id BETWEEN ? AND ? AND withdrawn_at IS "
                            "NULL", (utcnow(), first, last)).rowcount
        conn.execute("DELETE FROM reviewer_hold_ratings WHERE rating_id BETWEEN ? AND ?", (first, last))
        return int(done)


def current(project: Project, metric: str, reviewer: str | None = None) -> dict[int, float]:
    """Each row's latest standing score for a metric (by one reviewer, or the latest of anyone)."""
    sql = ("SELECT run_row_id, score FROM human_ratings WHERE metric = ? AND withdrawn_at IS NULL AND skipped = 0"
           + (" AND reviewer = ?" if reviewer else "") + " ORDER BY id")
    params: tuple[str, ...] = (metric, reviewer) if reviewer else (metric,)
    return {row: score for row, score in project.reader().execute(sql, params)}


RATING_COLUMNS = ("row_id", "question", "run", "metric", "reviewer", "score", "comment", "passage_rank", "item",
                  "sample_id")


def export_ratings(project: Project, out: str | Path) -> int:
    import pandas as pd

    out = Path(out)
    frame = pd.read_sql_query(
        "SELECT h.id AS rating_id, h.run_row_id AS row_id, r.name AS run, rr.external_id, rr.question, h.metric, "
        "h.passage_rank, h.item_key AS item, "
        "h.reviewer, h.score, h.skipped, h.comment, h.seconds_taken, h.created_at, h.sample_id FROM human_ratings h "
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
    """This reviewer's standing ratings in a sample by target (row, item) (None = skipped), latest last; ratings set
    aside by a hold are theirs still (the desk shows them rated)."""
    return {(r, item): s for r, item, s in project.reader().execute(
        "SELECT run_row_id, passage_rank, score FROM human_ratings WHERE sample_id = ? AND reviewer = ? "
        f"AND (withdrawn_at IS NULL OR id IN ({HELD})) ORDER BY id", (sample_id, reviewer))}
