"""Undoable operations (Anki's `operations/`): each is defined once, here — its typed arguments (a frozen dataclass
named after it) and what undoes it. Running one commits the edit and its entry in the operations log in one
transaction and returns what it changed; undoing runs the inverse and is itself logged. The app's undo stack and
`rageval undo` use this one list.

    result = ops.run(project, ops.EditGoldenRow("g-1", {"gold_answer": "…"}, reason="typo"), initiator="gui")
    ops.undo(project)                      # the newest operation still in effect (or ops.undo(project, op_id))
    ops.redo(project, undo_id)             # the operation an undo undid, done again

The log keeps an operation's arguments as their fields (`dataclasses.asdict`) under its name; a redo reads them back
into the same class (`OpSpec.load`). The inverse stays a mapping: it is what the log stored, read back as it was.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

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

Stored = dict[str, Any]                 # an inverse as the log keeps it (JSON), read back as it was written
Inverse = Stored | Callable[[sqlite3.Connection], Stored]   # a callable: read in the operation's own transaction


@dataclass(frozen=True)
class Op:
    """An operation's typed arguments: a frozen dataclass of JSON-able fields with the operation's name."""
    NAME: ClassVar[str] = ""

    def stored(self) -> dict[str, object]:
        return dataclasses.asdict(self)


A = TypeVar("A", bound=Op)


@dataclass(frozen=True)
class OpSpec(Generic[A]):
    args: type[A]
    areas: tuple[Area, ...]
    label: Callable[[A], str]
    prepare: Callable[[Project, A], Inverse]   # what will undo it, read before the write (or in it)
    do: Callable[[Project, A], object]         # the write
    revert: Callable[[Project, Stored], object]     # undoes it, from the inverse
    # what the operation left, read in its own transaction after the write (kept with the inverse); an undo finds
    # it still so or refuses, naming who changed it since (`since`) — an undo never overwrites later work
    left: Callable[[sqlite3.Connection, A], Stored] | None = None
    since: Callable[[Project, A, str], str] | None = None

    @property
    def name(self) -> str:
        return self.args.NAME

    def load(self, stored: Mapping[str, object]) -> A:
        """The arguments the log kept, as the operation's class (fields the log has not kept take their defaults)."""
        known = {f.name for f in dataclasses.fields(self.args)}
        return self.args(**{k: v for k, v in stored.items() if k in known})


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

    def as_dict(self) -> dict[str, object]:
        return {"operation": self.operation, "label": self.label, "areas": sorted(self.areas), "undid": self.undid,
                "outcome": self.outcome}


SPECS: dict[str, OpSpec[Any]] = {}


def define(spec: OpSpec[A]) -> OpSpec[A]:
    SPECS[spec.name] = spec
    return spec


# --- the golden set -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EditGoldenRow(Op):
    NAME: ClassVar[str] = "edit golden row"
    id: str
    fields: dict[str, Any]          # question, gold_answer, gold_chunk_ids, slice_tag: their new values
    reason: str | None = None


@dataclass(frozen=True)
class AddGoldenRow(Op):
    NAME: ClassVar[str] = "add golden row"
    question: str
    gold_answer: str | None = None
    gold_chunk_ids: list[str] | None = None
    slice_tag: str | None = None
    reason: str | None = None
    status: str | None = None       # done again after an undo: the status it comes back with (default approved)


@dataclass(frozen=True)
class PromoteFailure(Op):
    NAME: ClassVar[str] = "promote failure"
    row: int                        # the run row that failed
    slice: str
    reason: str | None = None


@dataclass(frozen=True)
class SetGoldenStatus(Op):
    NAME: ClassVar[str] = "set golden status"
    id: str
    status: str                     # approved, retired or draft
    reason: str | None = None


def _golden_before(project: Project, a: EditGoldenRow) -> Inverse:
    before = edits.row(project, a.id)
    return {"id": a.id, "fields": {k: before[k] for k in a.fields}, "reason": "undo"}


def _golden_left(conn: sqlite3.Connection, gid: str) -> Stored:
    row = conn.execute("SELECT revision FROM golden_rows WHERE id = ?", (gid,)).fetchone()
    return {"revision": row[0] if row else None}


def _golden_since(project: Project, gid: str) -> str:
    row = project.reader().execute("SELECT author, at, reason, revision FROM golden_edits WHERE golden_id = ? "
                                   "ORDER BY revision DESC LIMIT 1", (gid,)).fetchone()
    if row is None:
        return f"golden row {gid} is gone"
    return (f"golden row {gid} was changed since by {row[0]} at {row[1][:19].replace('T', ' ')} UTC "
            f"(revision {row[3]}: {row[2] or 'no reason given'})")


def _set_golden_status(project: Project, i: Stored) -> object:
    return edits.set_status(project, i["id"], i["status"], i.get("reason") or "undo")


define(OpSpec(EditGoldenRow, (Area.GOLDEN,), lambda a: f"edit golden row {a.id}", _golden_before,
              lambda p, a: edits.edit_row(p, a.id, a.reason or "edit", **a.fields),
              lambda p, i: edits.edit_row(p, i["id"], i.get("reason") or "undo", **i["fields"]),
              lambda conn, a: _golden_left(conn, a.id), lambda p, a, at: _golden_since(p, a.id)))


def _add_golden(project: Project, a: AddGoldenRow) -> object:
    """Add a row; done again after an undo (the row is there, retired): its status comes back."""
    gid = edits.golden_id_for(a.question)
    exists = project.reader().execute("SELECT status FROM golden_rows WHERE id = ?", (gid,)).fetchone()
    if exists and exists[0] == "retired":
        return edits.set_status(project, gid, a.status or "approved", "redo: add")
    return edits.add_row(project, a.question, gold_answer=a.gold_answer, gold_chunk_ids=a.gold_chunk_ids or [],
                         slice_tag=a.slice_tag, reason=a.reason or "added by hand")


define(OpSpec(AddGoldenRow, (Area.GOLDEN,), lambda a: f"add golden row {edits.golden_id_for(a.question)}",
              lambda p, a: {"id": edits.golden_id_for(a.question), "status": "retired",
                            "reason": "undo: added by mistake"},
              _add_golden, _set_golden_status,
              lambda conn, a: _golden_left(conn, edits.golden_id_for(a.question)),
              lambda p, a, at: _golden_since(p, edits.golden_id_for(a.question))))


def _promoted(conn: sqlite3.Connection, a: PromoteFailure) -> str:
    """The golden row a promotion of run row `row` makes (its id follows from the row's question)."""
    found = conn.execute("SELECT question FROM run_rows WHERE id = ?", (a.row,)).fetchone()
    return edits.golden_id_for(found[0] if found else "")


define(OpSpec(PromoteFailure, (Area.GOLDEN,), lambda a: f"promote run row {a.row} to the golden set",
              lambda p, a: {"id": _promoted(p.reader(), a), "status": "retired", "reason": "undo: promoted by mistake"},
              lambda p, a: edits.promote_failure(p, a.row, a.slice, a.reason), _set_golden_status,
              lambda conn, a: _golden_left(conn, _promoted(conn, a)),
              lambda p, a, at: _golden_since(p, _promoted(p.reader(), a))))
define(OpSpec(SetGoldenStatus, (Area.GOLDEN,),
              lambda a: f"{ {'retired': 'retire', 'approved': 'approve'}.get(a.status, 'restore')} golden row {a.id}",
              lambda p, a: {"id": a.id, "status": edits.row(p, a.id)["status"], "reason": "undo"},
              lambda p, a: edits.set_status(p, a.id, a.status, a.reason or a.status), _set_golden_status,
              lambda conn, a: _golden_left(conn, a.id), lambda p, a, at: _golden_since(p, a.id)))


# --- judges ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EditJudge(Op):
    NAME: ClassVar[str] = "edit judge"
    name: str
    changes: dict[str, Any]         # a setting (base_url, model, rubric, concurrency, …) → its new value


@dataclass(frozen=True)
class SetJudgeStatus(Op):
    NAME: ClassVar[str] = "set judge status"
    name: str
    status: str                     # retired or active
    reason: str
    force: bool = False             # reinstate without a passing audit (an undo of a retirement just made)


@dataclass(frozen=True)
class RecordAudit(Op):
    NAME: ClassVar[str] = "record audit"
    name: str
    reason: str | None = None


def _judge_before(project: Project, a: EditJudge) -> Inverse:
    judge = get_judge(project, a.name)
    columns = {"base_url": judge.base_url, "api_key_ref": judge.api_key_ref, "model": judge.model}
    before: dict[str, object] = {}
    for key in a.changes:
        if key == "rubric":                 # a new text: undone by the version the judge had
            before["rubric_id"] = judge.rubric_id
        else:
            before[key] = columns[key] if key in columns else judge.params.get(key)
    return {"name": a.name, "changes": before}


def _judge_left(conn: sqlite3.Connection, a: EditJudge) -> Stored:
    """The judge's settings the edit touched, as it left them (a job noting where calls went is not an edit)."""
    row = conn.execute("SELECT base_url, api_key_ref, model, rubric_id, params FROM judges WHERE name = ?",
                       (a.name,)).fetchone()
    if row is None:
        return {"gone": True}
    columns = {"base_url": row[0], "api_key_ref": row[1], "model": row[2], "rubric": row[3], "rubric_id": row[3]}
    params = json.loads(row[4] or "{}")
    return {key: columns[key] if key in columns else params.get(key) for key in sorted(a.changes)}


def _judge_status_left(conn: sqlite3.Connection, name: str) -> Stored:
    """The status as the operation left it, when it was set, and the audits recorded so far: an audit since (which
    may have retired the judge) or another status change makes an undo a new decision, taken by the command's
    rules, not the undo's."""
    row = conn.execute("SELECT j.status, j.status_at, (SELECT COUNT(*) FROM agreement_reports a WHERE a.judge_id = "
                       "j.id) FROM judges j WHERE j.name = ?", (name,)).fetchone()
    return {"status": row[0], "status_at": row[1], "audits": row[2]} if row else {"gone": True}


def _judge_since(project: Project, name: str, at: str) -> str:
    row = project.reader().execute("SELECT actor, action, at FROM audit_log WHERE entity = 'judge' AND entity_id = ? "
                                   "AND at >= ? ORDER BY id DESC LIMIT 1", (name, at)).fetchone()
    if row is None:
        return f"judge {name} was changed since"
    return f"judge {name} was changed since: {row[1]} by {row[0]} at {row[2][:19].replace('T', ' ')} UTC"


def _revert_judge(project: Project, i: Stored) -> object:
    changes: dict[str, object] = i["changes"]
    return update_judge(project, i["name"], unset=tuple(k for k, v in changes.items() if v is None),
                        **{k: v for k, v in changes.items() if v is not None})


define(OpSpec(EditJudge, (Area.JUDGES,), lambda a: f"edit judge {a.name}", _judge_before,
              lambda p, a: update_judge(p, a.name, **a.changes), _revert_judge,
              _judge_left, lambda p, a, at: _judge_since(p, a.name, at)))
define(OpSpec(SetJudgeStatus, (Area.JUDGES, Area.AUDIT),
              lambda a: f"{'retire' if a.status == 'retired' else 'reinstate'} judge {a.name}",
              lambda p, a: {"name": a.name, "status": get_judge(p, a.name).status, "reason": f"undo: {a.reason}"},
              lambda p, a: agreement.set_status(p, a.name, a.status, a.reason, force=a.force),
              # (force: undoing a status change nothing has happened since — no audit, no other change: `left`)
              lambda p, i: agreement.set_status(p, i["name"], i["status"], i["reason"], force=True),
              lambda conn, a: _judge_status_left(conn, a.name), lambda p, a, at: _judge_since(p, a.name, at)))


def _audit_before(project: Project, a: RecordAudit) -> Inverse:
    """The judge's status before the audit is recorded, and — read in the write — the audit it records."""
    judge = get_judge(project, a.name)
    status, at, why = project.reader().execute("SELECT status, status_at, status_reason FROM judges WHERE id = ?",
                                               (judge.id,)).fetchone()
    before = {"name": judge.name, "status": status, "status_at": at, "status_reason": why}
    return lambda conn: {**before, "report": conn.execute(
        "SELECT MAX(id) FROM agreement_reports WHERE judge_id = ?", (judge.id,)).fetchone()[0]}


define(OpSpec(RecordAudit, (Area.JUDGES, Area.AUDIT), lambda a: f"record the audit of judge {a.name}",
              _audit_before,
              lambda p, a: record_audit(p, agreement.agreement(p, get_judge(p, a.name)), a.reason),
              lambda p, i: agreement.withdraw_audit(p, i),
              lambda conn, a: _judge_status_left(conn, a.name), lambda p, a, at: _judge_since(p, a.name, at)))


# --- ratings --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rate(Op):
    NAME: ClassVar[str] = "rate"
    row: int
    metric: str
    reviewer: str
    score: float | None = None
    sample_id: int | None = None
    comment: str | None = None
    seconds: float | None = None
    skipped: bool = False
    item: int = 0                   # the row (0), or a passage's rank, a nugget's or a citation's number
    item_key: str | None = None


@dataclass(frozen=True)
class RatePair(Op):
    NAME: ClassVar[str] = "rate pair"
    sample_id: int
    position: int
    reviewer: str
    preference: str | None = None   # a, b, tie; None: skipped
    seconds: float | None = None


@dataclass(frozen=True)
class CheckReviewer(Op):
    NAME: ClassVar[str] = "check reviewer"
    reviewer: str
    kind: str                       # gold or retest
    row: int
    metric: str
    expected: float                 # the settled score (gold) or their earlier one (retest)
    sample_id: int | None = None
    item: int = 0
    item_key: str | None = None
    score: float | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class ImportRatings(Op):
    NAME: ClassVar[str] = "import ratings"
    path: str
    sample_id: int | None = None


@dataclass(frozen=True)
class SetReviewerAside(Op):
    NAME: ClassVar[str] = "set reviewer aside"
    reviewer: str
    metric: str
    reason: str
    lead: str                       # who decided it


@dataclass(frozen=True)
class BringReviewerBack(Op):
    NAME: ClassVar[str] = "bring reviewer back"
    reviewer: str
    metric: str


def _made(project: Project, a: Op) -> Inverse:
    """The row the write inserted (its id, read in the write): what an undo withdraws."""
    return lambda conn: {"rating": conn.execute("SELECT last_insert_rowid()").fetchone()[0]}


def _imported_ratings(project: Project, a: ImportRatings) -> Inverse:
    """The ratings the import made, read in its write (its audit entry names them)."""
    def made(conn: sqlite3.Connection) -> Stored:
        details = json.loads(conn.execute("SELECT details FROM audit_log WHERE action = 'import ratings' ORDER BY id "
                                          "DESC LIMIT 1").fetchone()[0])
        return {"first": details["first_id"], "last": details["last_id"]}
    return made


def _import_ratings(project: Project, a: ImportRatings) -> RatingsImport:
    return import_ratings(project, a.path, sample_id=a.sample_id)


def _rate(project: Project, a: Rate) -> object:
    return ratings.rate(project, a.row, a.metric, a.reviewer, a.score, sample_id=a.sample_id, comment=a.comment,
                        seconds=a.seconds, skipped=a.skipped, item=a.item, item_key=a.item_key)


def _check(project: Project, a: CheckReviewer) -> object:
    check = quality.Check(a.kind, a.row, a.metric, a.item, a.item_key, a.expected)
    return quality.record(project, a.sample_id, a.reviewer, check, a.score, seconds=a.seconds)


def _bring_back_before(project: Project, a: BringReviewerBack) -> Inverse:
    hold = quality.hold_of(project, a.reviewer, a.metric) or {}
    return {"reviewer": a.reviewer, "metric": a.metric, **{k: v for k, v in hold.items() if k in ("reason", "lead")}}


define(OpSpec(ImportRatings, (Area.RATINGS,), lambda a: f"import ratings from {Path(a.path).name}",
              _imported_ratings, _import_ratings, lambda p, i: ratings.withdraw_range(p, i["first"], i["last"])))
define(OpSpec(Rate, (Area.RATINGS,),
              lambda a: f"rate row {a.row} ({a.metric}, {a.reviewer})" + (" skipped" if a.skipped else f": {a.score}"),
              _made, _rate, lambda p, i: ratings.withdraw(p, i["rating"])))
define(OpSpec(RatePair, (Area.RATINGS,),
              lambda a: f"rate pair {a.position} of pair sample {a.sample_id} ({a.reviewer})"
                        + (" skipped" if a.preference is None else f": {a.preference}"), _made,
              lambda p, a: pairwise.rate_pair(p, a.sample_id, a.position, a.reviewer, a.preference, a.seconds),
              lambda p, i: pairwise.withdraw_pair_rating(p, i["rating"])))
define(OpSpec(CheckReviewer, (Area.RATINGS,), lambda a: f"check {a.reviewer} on row {a.row} ({a.metric}, {a.kind})",
              lambda p, a: lambda conn: {"check": conn.execute("SELECT last_insert_rowid()").fetchone()[0]},
              _check, lambda p, i: quality.withdraw_check(p, i["check"])))
define(OpSpec(SetReviewerAside, (Area.RATINGS, Area.AUDIT),
              lambda a: f"set {a.reviewer}'s ratings of {a.metric} aside",
              lambda p, a: {"reviewer": a.reviewer, "metric": a.metric},
              lambda p, a: quality.set_aside(p, a.reviewer, a.metric, a.reason, a.lead),
              lambda p, i: quality.bring_back(p, i["reviewer"], i["metric"])))
define(OpSpec(BringReviewerBack, (Area.RATINGS, Area.AUDIT),
              lambda a: f"bring {a.reviewer}'s ratings of {a.metric} back", _bring_back_before,
              lambda p, a: quality.bring_back(p, a.reviewer, a.metric),
              lambda p, i: quality.set_aside(p, i["reviewer"], i["metric"], i.get("reason") or "undo: bring back",
                                             i.get("lead") or "undo")))


# --- running, undoing, redoing --------------------------------------------------------------------------------------
def _spec(name: str) -> OpSpec[Any]:
    if name not in SPECS:
        raise RagevalError(f"'{name}' is not an operation this version of the app can undo")
    return SPECS[name]


def run(project: Project, op: Op, *, initiator: str = "api") -> OpResult:
    """Do an operation and log it with its inverse, in one transaction. It changed nothing: nothing is logged."""
    spec = _spec(op.NAME)
    if not isinstance(op, spec.args):
        raise TypeError(f"{type(op).__name__} is not the arguments of '{op.NAME}'")
    record = Recording(op.NAME, spec.label(op), op.stored(), _with_left(spec, op, spec.prepare(project, op)),
                       initiator, project.actor)
    with project.recording(record):
        done = spec.do(project, op)
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
    op = spec.load(original.args)
    record = Recording(original.name, original.label, original.args,
                       _with_left(spec, op, spec.prepare(project, op)), initiator, project.actor, undoes=undo_id)
    with project.recording(record):
        spec.do(project, op)
    return OpResult(record.id, original.label, frozenset(spec.areas) | {Area.OPERATIONS}, undid=undo_id)


def _with_left(spec: OpSpec[A], op: A, prepared: Inverse) -> Inverse:
    """The inverse, and what the operation left (read in its transaction, after its write)."""
    left = spec.left
    if left is None:
        return prepared

    def inverse(conn: sqlite3.Connection) -> Stored:
        base = prepared(conn) if callable(prepared) else prepared
        return {**base, LEFT: left(conn, op)}
    return inverse


def _check_left(project: Project, spec: OpSpec[Any], op: Operation) -> None:
    """Refuse to undo what someone changed since (a colleague's import of the row, an audit of the judge): the
    undo would overwrite their work. Operations logged before this check was kept undo as before."""
    if spec.left is None or LEFT not in op.inverse:
        return
    args = spec.load(op.args)
    now = json.loads(json.dumps(spec.left(project.reader(), args)))
    if now != op.inverse[LEFT]:
        who = spec.since(project, args, op.at) if spec.since else "it was changed since"
        raise UndoRefused(f"cannot undo operation {op.id} ({op.label}): {who}; undoing it would overwrite that. "
                          "Nothing was changed", gui_hint="make the change you want as a new edit",
                          cli_hint="make the change you want as a new edit")


def describe(op: Operation) -> str:
    """One line for `rageval undo`: what will be undone, who made it, when and from where."""
    where = {"gui": "the app", "cli": "the command line", "api": "the Python API"}.get(op.initiator, op.initiator)
    return f"operation {op.id}: {op.label} — by {op.actor}, {op.at[:19].replace('T', ' ')} UTC, from {where}"


__all__ = ["SPECS", "AddGoldenRow", "BringReviewerBack", "CheckReviewer", "EditGoldenRow", "EditJudge", "ImportRatings",
           "Op", "OpResult", "OpSpec", "PromoteFailure", "Rate", "RatePair", "RecordAudit", "SetGoldenStatus",
           "SetJudgeStatus", "SetReviewerAside", "UndoRefused", "define", "describe", "redo", "run", "undo"]
