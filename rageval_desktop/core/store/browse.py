"""Row sources for lazy tables: the ids of a listing in display order, and pages of visible rows by id.

The GUI's table model holds only ids and asks for the rows it paints, so a 200k-row run opens as fast as
a 10-row one (Anki's browser does the same). Kept in core so the SQL is tested headless.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rageval_desktop.core.store.project import Project


@dataclass(frozen=True)
class Column:
    header: str
    kind: str = "text"  # text | number | money | ms | count | tag
    width: int = 120


@dataclass(frozen=True)
class TableSource:
    """`ids_sql` lists ids in display order; `page_sql` returns (id, *columns) for ids given in `{ids}`."""

    key: str
    title: str
    columns: tuple[Column, ...]
    ids_sql: str
    page_sql: str
    params: tuple[Any, ...] = ()

    def ids(self, project: Project) -> list[Any]:
        return [r[0] for r in project.reader().execute(self.ids_sql, self.params)]

    def page(self, project: Project, ids: list[Any]) -> dict[Any, tuple]:
        if not ids:
            return {}
        sql = self.page_sql.format(ids=",".join("?" * len(ids)))
        return {row[0]: row[1:] for row in project.reader().execute(sql, (*ids,))}


def golden_source(slice_tag: str | None = None) -> TableSource:
    where, params = ("WHERE slice_tag = ?", (slice_tag,)) if slice_tag else ("", ())
    return TableSource(
        key=f"golden:{slice_tag or '*'}", title="Golden set",
        columns=(Column("id", width=70), Column("slice", "tag", 100), Column("question", width=330),
                 Column("gold answer", width=360), Column("gold chunks", "count", 90), Column("status", width=80),
                 Column("source", width=80)),
        ids_sql=f"SELECT id FROM golden_rows {where} ORDER BY created_at, id", params=params,
        page_sql="SELECT id, id, slice_tag, question, gold_answer, json_array_length(gold_chunk_ids), status, "
                 "source FROM golden_rows WHERE id IN ({ids})")


def run_source(run_id: int, run_name: str, slice_tag: str | None = None) -> TableSource:
    where, params = "WHERE rr.run_id = ?", (run_id,)
    if slice_tag:
        where += " AND rr.golden_id IN (SELECT id FROM golden_rows WHERE slice_tag = ?)"
        params = (run_id, slice_tag)
    return TableSource(
        key=f"run:{run_id}:{slice_tag or '*'}", title=f"Run {run_name}",
        columns=(Column("id", width=70), Column("slice", "tag", 100), Column("question", width=250),
                 Column("gold@5", "text", 64), Column("latency", "ms", 75), Column("cost", "money", 80),
                 Column("passages", "count", 65), Column("answer", width=360)),
        ids_sql=f"SELECT rr.id FROM run_rows rr {where} ORDER BY rr.position", params=params,
        page_sql="""
            SELECT rr.id, rr.external_id, g.slice_tag, rr.question,
                   CASE WHEN g.id IS NULL OR json_array_length(g.gold_chunk_ids) = 0 THEN '—'
                        WHEN EXISTS (SELECT 1 FROM retrieved_passages p, json_each(g.gold_chunk_ids) j
                                     WHERE p.run_row_id = rr.id AND p.rank <= 5 AND p.chunk_id = j.value)
                        THEN 'yes' ELSE 'no' END,
                   rr.latency_ms, rr.cost_usd,
                   (SELECT COUNT(*) FROM retrieved_passages p WHERE p.run_row_id = rr.id), rr.answer
            FROM run_rows rr LEFT JOIN golden_rows g ON g.id = rr.golden_id
            WHERE rr.id IN ({ids})""")


def list_runs(project: Project) -> list[tuple[int, str, int]]:
    """(id, name, rows) of every run, oldest first."""
    return [tuple(r) for r in project.reader().execute(
        "SELECT r.id, r.name, (SELECT COUNT(*) FROM run_rows WHERE run_id = r.id) FROM runs r ORDER BY r.id")]


def list_slices(project: Project) -> list[str]:
    return [r[0] for r in project.reader().execute("SELECT name FROM slices ORDER BY position, name")]


def slice_choices(project: Project) -> list[str]:
    """What a curator may tag a row with: the project's slices, then the standard names it does not have yet."""
    from rageval_desktop.core.store.schema import STANDARD_SLICES

    have = list_slices(project)
    return have + [s for s in STANDARD_SLICES if s not in have]
