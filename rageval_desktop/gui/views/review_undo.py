"""The desk's entries on the window's undo stack: a rating (undo withdraws it, redo rates again) and a check's
rating (undo withdraws it and shows the check again; redo is the operation's redo)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.gui.undo import EditCommand

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.ops.sources import PackSource, ProjectSource
    from rageval_desktop.core.review.quality import Check
    from rageval_desktop.core.review.ratings import Rating
    from rageval_desktop.gui.models.desk import Desk
    from rageval_desktop.gui.state import AppState


class DeskView(Protocol):
    """What the commands ask of the review view."""

    state: AppState
    desk: Desk | None

    def source(self) -> ProjectSource | PackSource | None: ...
    def set_busy(self, busy: bool) -> None: ...
    def show_row(self) -> None: ...
    def rating_undone(self, sample_id: int, index: int, rating: Rating) -> None: ...
    def rating_redone(self, sample_id: int, index: int, rating: Rating) -> None: ...
    def check_undone(self, sample_id: int, check: Check) -> None: ...


def rating_command(view: DeskView, sample_id: int, index: int, rating: Rating, comment: str | None,
                   seconds: float | None) -> EditCommand[None, Rating]:
    """A rating on the window's undo stack: undo withdraws it, redo rates again (a new rating, same values)."""
    source, made = view.source(), [rating]
    assert source is not None          # (it was rated through it)

    def undo(ctx: TaskContext) -> None:
        source.withdraw(made[0].id)

    def redo(ctx: TaskContext) -> Rating:
        r = made[0]
        return source.rate(r.run_row_id, r.metric, r.reviewer, r.score, sample_id=sample_id, skipped=r.skipped,
                           item=r.item, item_key=r.item_key, comment=comment, seconds=seconds)

    def redone(new: Rating) -> None:
        made[0] = new
        view.rating_redone(sample_id, index, new)

    label = (f"rate {'row' if not rating.item else 'item'} {index + 1} of sample {sample_id}"
             + (" (skipped)" if rating.skipped else f": {rating.score:g}"))
    return EditCommand(view.state, label, undo, redo, undone=lambda _r: view.rating_undone(sample_id, index, made[0]),
                       redone=redone, busy=view.set_busy)


def check_command(view: DeskView, sample_id: int, check: Check, operation: int) -> EditCommand[None, int]:
    """A check's rating on the window's undo stack: undo withdraws it (the check is shown again), redo rates it
    again with the same score (checks are the project's: a pack has none)."""
    from rageval_desktop.core.ops.sources import ProjectSource

    source, made = view.source(), [operation]
    assert isinstance(source, ProjectSource)

    def undo(ctx: TaskContext) -> None:
        source.withdraw_check(made[0])

    def redo(ctx: TaskContext) -> int:
        from rageval_desktop.core import ops
        from rageval_desktop.core.store import oplog

        op = oplog.get(source.project, made[0])
        if op is None or op.undone_by is None:
            raise RagevalError("its undo did not happen")
        again = ops.redo(source.project, int(op.undone_by), initiator="gui").operation
        if again is None:
            raise RagevalError("redoing it changed nothing")
        return again

    def redone(new: int) -> None:
        made[0] = new
        if view.desk is not None and view.desk.check == check:
            view.desk.check = None
            view.show_row()

    return EditCommand(view.state, f"rate row {check.row_id} of sample {sample_id}", undo, redo,
                       undone=lambda _r: view.check_undone(sample_id, check), redone=redone, busy=view.set_busy)
