"""Row sources for lazy tables: the ids of a listing in display order, and pages of visible rows by id.

The GUI's table model holds only ids and asks for the rows it paints, so a 200k-row run opens as fast as
a 10-row one (Anki's browser does the same). Kept in core so the SQL is tested headless.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.store.schema import STANDARD_SLICES

if TYPE_CHECKING:   # an annotation: the app's first window imports the listings before any project is opened
    from rageval_desktop.core.store.project import Project


@dataclass(frozen=True)
class Column:
    header: str
    kind: str = "text"  # text | number | score | money | ms | count | tag
    width: int = 120
    sort: str = ""      # the SQL expression the column shows and sorts by
    tip: str = ""       # what the column means (header tooltip)
    joins: bool = False  # its expression reads the source's `join` (sorting by it adds the join to the id query)


@dataclass(frozen=True)
class TableSource:
    """`ids_sql` lists ids in display order — its `{order}` placeholder takes the sort a user chose — and
    `page_sql` returns (id, *columns) for ids given in `{ids}`. Filters and search live in `ids_sql` (built by
    `review.triage`), so sorting and filtering any number of rows is one SQL query."""

    key: str
    title: str
    columns: tuple[Column, ...]
    ids_sql: str
    page_sql: str
    params: tuple[Any, ...] | dict[str, Any] = ()
    join: str = ""              # `{join}` in ids_sql: added only when the filters or the sort need it
    join_needed: bool = False   # the filters need it

    def ids(self, project: Project, order: tuple[int, bool] | None = None) -> list[Any]:
        """Ids in display order; `order` = (column index, descending) sorts by that column (empty values last)."""
        return [r[0] for r in self.id_cursor(project, order)]

    def id_cursor(self, project: Project, order: tuple[int, bool] | None = None) -> sqlite3.Cursor:
        """The id query, not yet read: a table reads the first screens' ids, then the rest in chunks."""
        clause, join = "", self.join if self.join_needed else ""
        if order is not None and self.columns[order[0]].sort:
            column = self.columns[order[0]]
            # empty values last either way; NULLS LAST evaluates the expression once per row (`x IS NULL, x` twice)
            clause = f"{column.sort} {'DESC' if order[1] else 'ASC'} NULLS LAST, "
            join = self.join if column.joins else join
        return project.reader().execute(self.ids_sql.format(order=clause, join=join), self.params)

    def page(self, project: Project, ids: list[Any]) -> dict[Any, tuple]:
        if not ids:
            return {}
        sql = self.page_sql.format(ids=",".join("?" * len(ids)))
        return {row[0]: row[1:] for row in project.reader().execute(sql, (*ids,))}


def list_runs(project: Project) -> list[tuple[int, str, int]]:
    """(id, name, rows) of every run, oldest first."""
    return [tuple(r) for r in project.reader().execute(
        "SELECT r.id, r.name, COALESCE(c.rows, 0) FROM runs r LEFT JOIN run_counts c ON c.run_id = r.id "
        "WHERE r.purpose = 'run' ORDER BY r.id")]   # counts the triggers keep: at once at a million rows


def list_slices(project: Project) -> list[str]:
    return [r[0] for r in project.reader().execute("SELECT name FROM slices ORDER BY position, name")]


def slice_choices(project: Project) -> list[str]:
    """What a curator may tag a row with: the project's slices, then the standard names it does not have yet."""

    have = list_slices(project)
    return have + [s for s in STANDARD_SLICES if s not in have]
