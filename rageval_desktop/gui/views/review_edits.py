"""What the card's side buttons do beyond rating: the judge's prompt for the target (one click from the human rubric,
no verdict shown), the reviewer's fix of a wrong reference answer (an undoable golden edit with its reason) and a
comment for the next rating. Each reads or writes on a lane; the view draws what comes back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QDialog, QInputDialog, QWidget

from rageval_desktop.gui.views.common import TextDialog
from rageval_desktop.gui.views.review_card import ReferenceDialog

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel

    from rageval_desktop.core.ops import OpResult
    from rageval_desktop.core.ops.sources import PackSource, ProjectSource
    from rageval_desktop.core.store.queries import RowDetail
    from rageval_desktop.gui.models.desk import Desk
    from rageval_desktop.gui.state import AppState


class EditDesk(Protocol):
    """What these actions ask of the review view."""

    state: AppState
    desk: Desk | None
    reveal: QLabel                      # the line under the card
    details: dict[int, RowDetail]       # the rows read for the cards

    @property
    def pack_mode(self) -> bool: ...
    def source(self) -> ProjectSource | PackSource | None: ...
    def read_rows(self, rows: list[int], show: bool = True, said: str = "") -> None: ...
    def draw_progress(self) -> None: ...
    def setFocus(self) -> None: ...


def show_prompt(view: EditDesk, parent: QWidget) -> None:
    """The LLM prompt for this target, rendered on the task lane, in a dialog."""
    source, desk = view.source(), view.desk
    if desk is None or not desk.sample.row_ids or source is None:
        return
    metric = desk.sample.metric
    row_id, item, key = desk.target()
    view.state.run_task("Rendering the judge's prompt", lambda ctx: source.judge_prompt(metric, row_id, item, key),
                        on_done=lambda text: TextDialog("The judge's prompt", text, parent).open())


def fix_reference(view: EditDesk, parent: QWidget) -> None:
    """R (and Fix reference…): the reviewer corrects the golden row's reference answer from the card. An undoable
    golden edit with its reason, kept in the row's history; the judgments made against the old reference are marked
    as such where reports show them."""
    from rageval_desktop.core.ops import EditGoldenRow

    desk = view.desk
    if desk is None or not desk.sample.row_ids or view.pack_mode:
        return
    row_id, _, _ = desk.target()
    detail = view.details.get(row_id)
    golden = detail.facts.get("golden row") if detail is not None else None
    if detail is None or not golden or golden == "unlinked":
        view.reveal.setText("This row is not linked to a golden row: there is no reference to fix.")
        return
    dialog = ReferenceDialog(golden, detail.gold_answer or "", parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        view.setFocus()
        return
    text, reason = dialog.values()

    def done(result: OpResult) -> None:         # read again: the card shows the new reference
        view.read_rows([row_id], said=f"Reference of {golden} fixed ({result.label}); Ctrl+Z takes it back.")

    view.state.run_op("Fixing the reference", EditGoldenRow(golden, {"gold_answer": text}, reason), on_done=done)
    view.setFocus()


def ask_comment(view: EditDesk, parent: QWidget) -> None:
    """c: a comment, kept with the next rating (the line above the card says one waits)."""
    text, ok = QInputDialog.getText(parent, "Comment", "Comment for this row's rating:")
    if ok and view.desk is not None:
        view.desk.comment = text.strip() or None
        view.draw_progress()
