"""The desk's hidden checks (gold items and retests, core.review.quality): asked of the read lane after each card
and shown in place of the next target — the card, the keys and the progress line do not change — and their ratings
saved as logged operations on the write lane, each on the undo stack."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from rageval_desktop.gui.views.review_undo import DeskView, check_command

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QLabel

    from rageval_desktop.core.review.quality import Check
    from rageval_desktop.core.store.queries import RowDetail


class CheckDesk(DeskView, Protocol):
    """What the checks ask of the review view, beyond what its undo entries do."""

    reveal: QLabel                      # the line under the card
    details: dict[int, RowDetail]       # the rows read for the cards
    shown_at: float                     # when the card was drawn (a rating's seconds)

    @property
    def rated(self) -> SignalInstance: ...
    @property
    def pack_mode(self) -> bool: ...


def ask_check(view: CheckDesk) -> None:
    """Ask (in a worker) whether a check is due in this reviewer's queue; show it in place of the next target.
    It looks like any target: the card, the keys and the progress line do not change."""
    source, desk, reviewer = view.source(), view.desk, view.state.reviewer()
    if source is None or desk is None or not reviewer or view.pack_mode:
        return
    sid = desk.sample.id

    def read(ctx: object) -> tuple[Check, RowDetail] | None:
        check = source.due_check(sid, reviewer)
        return None if check is None else (check, source.detail(check.row_id))    # its row, read with it

    def arrived(found: tuple[Check, RowDetail] | None) -> None:
        if found is None or view.desk is not desk or desk.check is not None:
            return
        said = view.reveal.text()        # what the last save said stays (it names the row just rated)
        desk.check, view.details[found[0].row_id] = found
        view.show_row()
        view.reveal.setText(said)

    view.state.run_read("review-check", read, on_done=arrived)


def save_check(view: CheckDesk, reviewer: str, score: float | None) -> None:
    """The check's rating, saved as a logged operation (undone as a rating is); the desk moves on when it lands and
    asks for the next check."""
    from rageval_desktop.core.ops.sources import ProjectSource
    from rageval_desktop.core.review.card import side_by_side

    desk, source = view.desk, view.source()
    assert desk is not None and desk.check is not None and isinstance(source, ProjectSource)  # (a pack has none)
    check, sid = desk.check, desk.sample.id
    seconds = round(time.monotonic() - view.shown_at, 2)
    view.set_busy(True)

    def done(operation: int) -> None:
        desk.check = None
        view.state.undo_stack.push(check_command(view, sid, check, operation))
        if desk is view.desk:
            view.show_row()
            if score is None:
                view.reveal.setText("Skipped.")
            else:
                detail = view.details.get(check.row_id)
                line = "" if detail is None else ": " + side_by_side(detail, check.metric, score, item=check.item,
                                                                     key=check.item_key)
                view.reveal.setText(f"Saved{line}.")
            view.rated.emit(check.row_id)
            ask_check(view)
        view.set_busy(False)

    def failed(message: str, details: str) -> None:
        view.set_busy(False)
        view.state.show_error(message, details)

    view.state.run_write("Saving the rating", lambda ctx: source.record_check(sid, reviewer, check, score, seconds),
                         on_done=done, on_error=failed)
