"""Undoable operations (Anki's `operations/`): each is defined once, here, with what undoes it. Running one commits
the edit and its entry in the operations log in one transaction and returns what it changed; undoing runs the
inverse and is itself logged. The app's undo stack and `rageval undo` use this one list.

    result = ops.run(project, "edit golden row", {"id": "g-1", "fields": {...}, "reason": "typo"}, initiator="gui")
    ops.undo(project)                      # the newest operation still in effect (or ops.undo(project, op_id))
    ops.redo(project, undo_id)             # the operation an undo undid, done again
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.errors import NotFound, RagevalError
from rageval_desktop.core.golden import edits
from rageval_desktop.core.importers.ratings_import import RatingsImport, import_ratings
from rageval_desktop.core.judges.registry import get_judge, update_judge
from rageval_desktop.core.review import agreement, pairwise, quality, ratings
from rageval_desktop.core.review.licence import record_audit
from rageval_desktop.core.store import oplog
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.oplog import Operation, Recording
from rageval_desktop.core.store.project import Project

Inverse = dict[str, Any] | Callable[[Any], dict[str, Any]]


@dataclass(frozen=True)
class OpSpec:
    name: str
    areas: tuple[Area, ...]
    label: Callable[[dict[str, Any]], str]
    prepare: Callable[[Project, dict[str, Any]], Inverse]   # what will undo it, read before the write (or in it)
    do: Callable[[Project, dict[str, Any]], object]         # the write
    revert: Callable[[Project, dict[str, Any]], object]     # undoes it, from the inverse
    # what the operation left, read in its own transaction after the write (kept with the inverse); an undo finds
    # it still so or refuses, naming who changed it since (`since`) — an undo never overwrites later work
    left: Callable[[sqlite3.Connection, dict[str, Any]], dict[str, Any]] | None = None
    since: Callable[[Project, dict[str, Any], str], str] | None = None


class UndoRefused(RagevalError):
    """What the operation left was changed since by someone else: undoing it would overwrite that."""


LEFT = "left"      # the inverse's key for what the operation left

@dataclass(frozen=True)
class OpResult:
    """What an operation (or an undo) changed: its log entry, its words, the areas pages refresh."""
    operation: int | None          # None: it changed nothing, so nothing was logged
    label: str
    areas: frozenset[Area]
    undid: int | None = None
    outcome: str = ""              # what the operation says it did, in a word ("retired"), where it says one
    value: object = None           # what its write returned (an import's report)

    def as_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "label": self.label, "areas": sorted(self.areas), "undid": self.undid,
                "outcome": self.outcome}


SPECS: dict[str, OpSpec] = {}


def define(spec: OpSpec) -> OpSpec:
    SPECS[spec.name] = spec
    return spec


# --- the operations ------------------------------------------------------------------------------------------------
def _golden_before(project: Project, args: dict[str, Any]) -> Inverse:
    before = edits.row(project, args["id"])
    return {"id": args["id"], "fields": {k: before[k] for k in args["fields"]}, "reason": "undo"}


def _golden_status_before(project: Project, args: dict[str, Any]) -> Inverse:
    return {"id": args["id"], "status": edits.row(project, args["id"])["status"], "reason": "undo"}


def _judge_before(project: Project, args: dict[str, Any]) -> Inverse:
    judge = get_judge(project, args["name"])
    columns = {"base_url": judge.base_url, "api_key_ref": judge.api_key_ref, "model": judge.model}
    before: dict[str, Any] = {}
    for key in args["changes"]:
        if key == "rubric":                 # a new text: undone by the version the judge had
            before["rubric_id"] = judge.rubric_id
        else:
            before[key] = columns[key] if key in columns else judge.params.get(key)
    return {"name": args["name"], "changes": before}


def _judge_status_before(project: Project, args: dict[str, Any]) -> Inverse:
    return {"name": args["name"], "status": get_judge(project, args["name"]).status,
            "reason": f"undo: {args['reason']}"}


def _golden_left(conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
    gid = args["id"] if "id" in args else edits.golden_id_for(args["question"])
    row = conn.execute("SELECT revision FROM golden_rows WHERE id = ?", (gid,)).fetchone()
    return {"revision": row[0] if row else None}


def _golden_since(project: Project, args: dict[str, Any], at: str) -> str:
    gid = args["id"] if "id" in args else edits.golden_id_for(args["question"])
    row = project.reader().execute("SELECT author, at, reason, revision FROM golden_edits WHERE golden_id = ? "
                                   "ORDER BY revision DESC LIMIT 1", (gid,)).fetchone()
    if row is None:
        return f"golden row {gid} is gone"
    return (f"golden row {gid} was changed since by {row[0]} at {row[1][:19].replace('T', ' ')} UTC "
            f"(revision {row[3]}: {row[2] or 'no reason given'})")


def _judge_left(conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
    """The judge's settings the edit touched, as it left them (a job noting where calls went is not an edit)."""
    row = conn.execute("SELECT base_url, api_key_ref, model, rubric_id, params FROM judges WHERE name = ?",
                       (args["name"],)).fetchone()
    if row is None:
        return {"gone": True}
    columns = {"base_url": row[0], "api_key_ref": row[1], "model": row[2], "rubric": row[3], "rubric_id": row[3]}
    params = json.loads(row[4] or "{}")
    return {key: columns[key] if key in columns else params.get(key) for key in sorted(args["changes"])}


def _judge_status_left(conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
    """The status as the operation left it, when it was set, and the audits recorded so far: an audit since (which
    may have retired the judge) or another status change makes an undo a new decision, taken by the command's
    rules, not the undo's."""
    row = conn.execute("SELECT j.status, j.status_at, (SELECT COUNT(*) FROM agreement_reports a WHERE a.judge_id = "
                       "j.id) FROM judges j WHERE j.name = ?", (args["name"],)).fetchone()
    return {"status": row[0], "status_at": row[1], "audits": row[2]} if row else {"gone": True}


def _judge_since(project: Project, args: dict[str, Any], at: str) -> str:
    row = project.reader().execute("SELECT actor, action, at FROM audit_log WHERE entity = 'judge' AND entity_id = ? "
                                   "AND at >= ? ORDER BY id DESC LIMIT 1", (args["name"], at)).fetchone()
    if row is None:
        return f"judge {args['name']} was changed since"
    return f"judge {args['name']} was changed since: {row[1]} by {row[0]} at {row[2][:19].replace('T', ' ')} UTC"


def _rating_made(project: Project, args: dict[str, Any]) -> Inverse:
    return lambda conn: {"rating": conn.execute("SELECT last_insert_rowid()").fetchone()[0]}


def _rate(project: Project, args: dict[str, Any]) -> object:
    return ratings.rate(project, args["row"], args["metric"], args["reviewer"], args.get("score"),
                        sample_id=args.get("sample_id"), comment=args.get("comment"), seconds=args.get("seconds"),
                        skipped=args.get("skipped", False), item=args.get("item", 0), item_key=args.get("item_key"))


define(OpSpec("edit golden row", (Area.GOLDEN,), lambda a: f"edit golden row {a['id']}", _golden_before,
              lambda p, a: edits.edit_row(p, a["id"], a.get("reason") or "edit", **a["fields"]),
              lambda p, i: edits.edit_row(p, i["id"], i.get("reason") or "undo", **i["fields"]),
              _golden_left, _golden_since))
def _add_golden(project: Project, args: dict[str, Any]) -> object:
    """Add a row; done again after an undo (the row is there, retired): its status comes back."""
    gid = edits.golden_id_for(args["question"])
    exists = project.reader().execute("SELECT status FROM golden_rows WHERE id = ?", (gid,)).fetchone()
    if exists and exists[0] == "retired":
        return edits.set_status(project, gid, args.get("status") or "approved", "redo: add")
    return edits.add_row(project, args["question"], gold_answer=args.get("gold_answer"),
                         gold_chunk_ids=args.get("gold_chunk_ids") or [], slice_tag=args.get("slice_tag"),
                         reason=args.get("reason") or "added by hand")


define(OpSpec("add golden row", (Area.GOLDEN,), lambda a: f"add golden row {edits.golden_id_for(a['question'])}",
              lambda p, a: {"id": edits.golden_id_for(a["question"]), "status": "retired",
                            "reason": "undo: added by mistake"},
              _add_golden, lambda p, i: edits.set_status(p, i["id"], i["status"], i["reason"]),
              _golden_left, _golden_since))
def _promoted(conn: sqlite3.Connection, args: dict[str, object]) -> dict[str, object]:
    """The golden row a promotion of run row `row` makes (its id follows from the row's question)."""
    found = conn.execute("SELECT question FROM run_rows WHERE id = ?", (args["row"],)).fetchone()
    return {"question": found[0] if found else ""}


def _promote(project: Project, args: dict[str, object]) -> dict[str, object]:
    reason = args.get("reason")
    return edits.promote_failure(project, int(str(args["row"])), str(args["slice"]),
                                 None if reason is None else str(reason))


define(OpSpec("promote failure", (Area.GOLDEN,), lambda a: f"promote run row {a['row']} to the golden set",
              lambda p, a: {"id": edits.golden_id_for(str(_promoted(p.reader(), a)["question"])),
                            "status": "retired", "reason": "undo: promoted by mistake"},
              _promote, lambda p, i: edits.set_status(p, i["id"], i["status"], i["reason"]),
              lambda conn, a: _golden_left(conn, _promoted(conn, a)),
              lambda p, a, at: _golden_since(p, _promoted(p.reader(), a), at)))
define(OpSpec("set golden status", (Area.GOLDEN,),
              lambda a: f"{ {'retired': 'retire', 'approved': 'approve'}.get(a['status'], 'restore')} golden row "
                        f"{a['id']}", _golden_status_before,
              lambda p, a: edits.set_status(p, a["id"], a["status"], a.get("reason") or a["status"]),
              lambda p, i: edits.set_status(p, i["id"], i["status"], i.get("reason") or "undo"),
              _golden_left, _golden_since))
define(OpSpec("edit judge", (Area.JUDGES,), lambda a: f"edit judge {a['name']}", _judge_before,
              lambda p, a: update_judge(p, a["name"], **a["changes"]),
              lambda p, i: update_judge(p, i["name"], unset=tuple(k for k, v in i["changes"].items() if v is None),
                                        **{k: v for k, v in i["changes"].items() if v is not None}),
              _judge_left, _judge_since))
define(OpSpec("set judge status", (Area.JUDGES, Area.AUDIT),
              lambda a: f"{'retire' if a['status'] == 'retired' else 'reinstate'} judge {a['name']}",
              _judge_status_before,
              lambda p, a: agreement.set_status(p, a["name"], a["status"], a["reason"], force=a.get("force", False)),
              # (force: undoing a status change nothing has happened since — no audit, no other change: `left`)
              lambda p, i: agreement.set_status(p, i["name"], i["status"], i["reason"], force=True),
              _judge_status_left, _judge_since))
def _audit_before(project: Project, args: dict[str, object]) -> Inverse:
    """The judge's status before the audit is recorded, and — read in the write — the audit it records."""
    judge = get_judge(project, str(args["name"]))
    status, at, why = project.reader().execute("SELECT status, status_at, status_reason FROM judges WHERE id = ?",
                                               (judge.id,)).fetchone()
    before = {"name": judge.name, "status": status, "status_at": at, "status_reason": why}
    return lambda conn: {**before, "report": conn.execute(
        "SELECT MAX(id) FROM agreement_reports WHERE judge_id = ?", (judge.id,)).fetchone()[0]}


def _record_audit(project: Project, args: dict[str, object]) -> str:
    reason = args.get("reason")
    return record_audit(project, agreement.agreement(project, get_judge(project, str(args["name"]))),
                        None if reason is None else str(reason))


define(OpSpec("record audit", (Area.JUDGES, Area.AUDIT), lambda a: f"record the audit of judge {a['name']}",
              _audit_before, _record_audit, lambda p, i: agreement.withdraw_audit(p, i),
              _judge_status_left, _judge_since))
def _imported_ratings(project: Project, args: dict[str, object]) -> Inverse:
    """The ratings the import made, read in its write (its audit entry names them)."""
    def made(conn: sqlite3.Connection) -> dict[str, object]:
        details = json.loads(conn.execute("SELECT details FROM audit_log WHERE action = 'import ratings' ORDER BY id "
                                          "DESC LIMIT 1").fetchone()[0])
        return {"first": details["first_id"], "last": details["last_id"]}
    return made


def _import_ratings(project: Project, args: dict[str, object]) -> RatingsImport:
    sample = args.get("sample_id")
    return import_ratings(project, str(args["path"]), sample_id=None if sample is None else int(str(sample)))


define(OpSpec("import ratings", (Area.RATINGS,), lambda a: f"import ratings from {Path(a['path']).name}",
              _imported_ratings, _import_ratings, lambda p, i: ratings.withdraw_range(p, i["first"], i["last"])))
define(OpSpec("rate", (Area.RATINGS,),
              lambda a: f"rate row {a['row']} ({a['metric']}, {a['reviewer']})"
                        + (" skipped" if a.get("skipped") else f": {a.get('score')}"), _rating_made, _rate,
              lambda p, i: ratings.withdraw(p, i["rating"])))

define(OpSpec("rate pair", (Area.RATINGS,),
              lambda a: f"rate pair {a['position']} of pair sample {a['sample_id']} ({a['reviewer']})"
                        + (" skipped" if a.get("preference") is None else f": {a['preference']}"), _rating_made,
              lambda p, a: pairwise.rate_pair(p, a["sample_id"], a["position"], a["reviewer"], a.get("preference"),
                                              a.get("seconds")),
              lambda p, i: pairwise.withdraw_pair_rating(p, i["rating"])))
define(OpSpec("check reviewer", (Area.RATINGS,),
              lambda a: f"check {a['reviewer']} on row {a['row']} ({a['metric']}, {a['kind']})",
              lambda p, a: lambda conn: {"check": conn.execute("SELECT last_insert_rowid()").fetchone()[0]},
              lambda p, a: quality.record(p, a.get("sample_id"), a["reviewer"], quality.Check(
                  a["kind"], a["row"], a["metric"], a.get("item", 0), a.get("item_key"), a["expected"]),
                  a.get("score"), seconds=a.get("seconds")),
              lambda p, i: quality.withdraw_check(p, i["check"])))
define(OpSpec("set reviewer aside", (Area.RATINGS, Area.AUDIT),
              lambda a: f"set {a['reviewer']}'s ratings of {a['metric']} aside",
              lambda p, a: {"reviewer": a["reviewer"], "metric": a["metric"]},
              lambda p, a: quality.set_aside(p, a["reviewer"], a["metric"], a["reason"], a["lead"]),
              lambda p, i: quality.bring_back(p, i["reviewer"], i["metric"])))
define(OpSpec("bring reviewer back", (Area.RATINGS, Area.AUDIT),
              lambda a: f"bring {a['reviewer']}'s ratings of {a['metric']} back",
              lambda p, a: {**a, **{k: v for k, v in (quality.hold_of(p, a["reviewer"], a["metric"]) or {}).items()
                                   if k in ("reason", "lead")}},
              lambda p, a: quality.bring_back(p, a["reviewer"], a["metric"]),
              lambda p, i: quality.set_aside(p, i["reviewer"], i["metric"], i.get("reason") or "undo: bring back",
                                             i.get("lead") or "undo")))


# --- running, undoing, redoing --------------------------------------------------------------------------------------
def _spec(name: str) -> OpSpec:
    if name not in SPECS:
        raise RagevalError(f"'{name}' is not an operation this version of the app can undo")
    return SPECS[name]


def run(project: Project, name: str, args: dict[str, Any], *, initiator: str = "api") -> OpResult:
    """Do an operation and log it with its inverse, in one transaction. It changed nothing: nothing is logged."""
    spec = _spec(name)
    record = Recording(name, spec.label(args), args, _with_left(spec, args, spec.prepare(project, args)), initiator,
                       project.actor)
    with project.recording(record):
        done = spec.do(project, args)
    return OpResult(record.id, record.label, frozenset(spec.areas) | {Area.OPERATIONS},
                    outcome=done if isinstance(done, str) else "", value=done)


def undo(project: Project, operation_id: int | None = None, *, initiator: str = "api") -> OpResult:
    """Undo an operation (default: the newest still in effect): its inverse runs, logged as an undo of it."""
    op = oplog.get(project, operation_id) if operation_id is not None else oplog.last_undoable(project)
    if op is None:
        raise NotFound("nothing to undo" if operation_id is None else f"no operation {operation_id}")
    if op.undone_at is not None:
        raise RagevalError(f"operation {op.id} ({op.label}) was undone already (by operation {op.undone_by})")
    if op.name == oplog.UNDO:
        return redo(project, op.id, initiator=initiator)
    spec = _spec(op.name)
    _check_left(project, spec, op)
    record = Recording(oplog.UNDO, f"undo: {op.label}", {"of": op.id}, {"of": op.id}, initiator, project.actor,
                       undoes=op.id)
    with project.recording(record):
        spec.revert(project, op.inverse)
    if record.id is None:     # the inverse changed nothing (already as before): the entry is closed all the same
        with project.write("close operation", changed=(Area.OPERATIONS,)) as conn:
            record.commit(conn)
    return OpResult(record.id, f"undo: {op.label}", frozenset(spec.areas) | {Area.OPERATIONS}, undid=op.id)


def redo(project: Project, undo_id: int, *, initiator: str = "api") -> OpResult:
    """Do again what an undo undid (the app's Redo): the original operation runs again, logged as new."""
    marker = oplog.get(project, undo_id)
    if marker is None or marker.name != oplog.UNDO:
        raise NotFound(f"no undo {undo_id} to redo")
    if marker.undone_at is not None:
        raise RagevalError(f"undo {undo_id} was redone already")
    original = oplog.get(project, marker.args["of"])
    assert original is not None
    spec = _spec(original.name)
    record = Recording(original.name, original.label, original.args,
                       _with_left(spec, original.args, spec.prepare(project, original.args)), initiator,
                       project.actor, undoes=undo_id)
    with project.recording(record):
        spec.do(project, original.args)
    return OpResult(record.id, original.label, frozenset(spec.areas) | {Area.OPERATIONS}, undid=undo_id)


def _with_left(spec: OpSpec, args: dict[str, Any], prepared: Inverse) -> Inverse:
    """The inverse, and what the operation left (read in its transaction, after its write)."""
    left = spec.left
    if left is None:
        return prepared

    def inverse(conn: sqlite3.Connection) -> dict[str, Any]:
        base = prepared(conn) if callable(prepared) else prepared
        return {**base, LEFT: left(conn, args)}
    return inverse


def _check_left(project: Project, spec: OpSpec, op: Operation) -> None:
    """Refuse to undo what someone changed since (a colleague's import of the row, an audit of the judge): the
    undo would overwrite their work. Operations logged before this check was kept undo as before."""
    if spec.left is None or LEFT not in op.inverse:
        return
    now = json.loads(json.dumps(spec.left(project.reader(), op.args)))
    if now != op.inverse[LEFT]:
        who = spec.since(project, op.args, op.at) if spec.since else "it was changed since"
        raise UndoRefused(f"cannot undo operation {op.id} ({op.label}): {who}; undoing it would overwrite that. "
                          "Nothing was changed", gui_hint="make the change you want as a new edit",
                          cli_hint="make the change you want as a new edit")


def describe(op: Operation) -> str:
    """One line for `rageval undo`: what will be undone, who made it, when and from where."""
    where = {"gui": "the app", "cli": "the command line", "api": "the Python API"}.get(op.initiator, op.initiator)
    return f"operation {op.id}: {op.label} — by {op.actor}, {op.at[:19].replace('T', ' ')} UTC, from {where}"


__all__ = ["SPECS", "OpSpec", "OpResult", "UndoRefused", "define", "describe", "redo", "run", "undo"]
