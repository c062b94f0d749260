"""The log of undoable operations (Anki's model): each row is one operation someone made — what it was (`name`,
`args`), what undoes it (`inverse`), who made it and from where (`initiator`: the app, the CLI, the Python API).
Undoing is an operation too: it is logged, and marks what it undid. The app's undo stack and `rageval undo` read
this one list. core/ops defines the operations; this module only stores them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.clock import utcnow

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project

UNDO = "undo"     # the name of an undo's own row (its args: {"of": the operation it undid})


@dataclass
class Recording:
    """An operation about to be committed with the write that does it (`Project.recording`)."""
    name: str
    label: str
    args: dict[str, Any]
    inverse: dict[str, Any] | Callable[[sqlite3.Connection], dict[str, Any]]   # a callable: read in the transaction
    initiator: str
    actor: str
    undoes: int | None = None           # an undo: the operation it undoes (marked in the same transaction)
    id: int | None = field(default=None)

    def commit(self, conn: sqlite3.Connection) -> int:
        inverse = self.inverse(conn) if callable(self.inverse) else self.inverse
        cur = conn.execute(
            "INSERT INTO operations (name, label, args, inverse, initiator, actor, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (self.name, self.label, json.dumps(self.args, sort_keys=True), json.dumps(inverse, sort_keys=True),
             self.initiator, self.actor, utcnow()))
        self.id = int(cur.lastrowid or 0)
        if self.undoes is not None:
            conn.execute("UPDATE operations SET undone_at = ?, undone_by = ? WHERE id = ?",
                         (utcnow(), self.id, self.undoes))
        return self.id


@dataclass(frozen=True)
class Operation:
    id: int
    name: str
    label: str
    args: dict[str, Any]
    inverse: dict[str, Any]
    initiator: str
    actor: str
    at: str
    undone_at: str | None
    undone_by: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "label": self.label, "initiator": self.initiator,
                "actor": self.actor, "at": self.at, "undone_at": self.undone_at, "undone_by": self.undone_by}


_COLUMNS = "id, name, label, args, inverse, initiator, actor, at, undone_at, undone_by"


def _operation(row: tuple) -> Operation:
    oid, name, label, args, inverse, initiator, actor, at, undone_at, undone_by = row
    return Operation(oid, name, label, json.loads(args), json.loads(inverse), initiator, actor, at, undone_at,
                     undone_by)


def get(project: Project, operation_id: int) -> Operation | None:
    row = project.reader().execute(f"SELECT {_COLUMNS} FROM operations WHERE id = ?", (operation_id,)).fetchone()
    return _operation(row) if row else None


def last_undoable(project: Project) -> Operation | None:
    """The newest operation still in effect that is not itself an undo (what `rageval undo` undoes next)."""
    row = project.reader().execute(
        f"SELECT {_COLUMNS} FROM operations WHERE undone_at IS NULL AND name != ? ORDER BY id DESC LIMIT 1",
        (UNDO,)).fetchone()
    return _operation(row) if row else None


def recent(project: Project, limit: int = 20) -> list[Operation]:
    return [_operation(r) for r in project.reader().execute(
        f"SELECT {_COLUMNS} FROM operations ORDER BY id DESC LIMIT ?", (limit,))]


def made_by(project: Project, name: str, key: str, value: int | str) -> int | None:
    """The operation still in effect whose inverse names this thing (a rating by its id): what undoing it undoes."""
    row = project.reader().execute(
        "SELECT id FROM operations WHERE name = ? AND undone_at IS NULL AND json_extract(inverse, '$.' || ?) = ? "
        "ORDER BY id DESC LIMIT 1", (name, key, value)).fetchone()
    return int(row[0]) if row else None
