"""The app's undo stack over core's operations log (core/ops): an edit runs as an operation (logged with what undoes
it) and is then pushed; Ctrl+Z runs `ops.undo` and Ctrl+Shift+Z `ops.redo` in a worker. The same list is what
`rageval undo` reads, so an undo in either place is seen by the other (History shows this session's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QUndoCommand, QUndoStack

from rageval_desktop.gui import workers

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDialog, QWidget

    from rageval_desktop.core.ops import OpResult


class OpCommand(QUndoCommand):
    """One logged operation on the stack. Its undo and redo are operations too (logged, undoable)."""

    def __init__(self, owner: Any, result: OpResult) -> None:
        super().__init__(result.label)
        self.owner, self.operation = owner, result.operation
        self.undo_id: int | None = None
        self._pushed = False

    def redo(self) -> None:
        if not self._pushed:  # the operation already ran when the command was pushed
            self._pushed = True
            return
        from rageval_desktop.core import ops  # start-up deferral: the operations' modules load on first undo

        project, undo_id = self.owner.project, self.undo_id
        if undo_id is None:
            self.owner.show_error(f"Redo: {self.text()} — the undo has not finished yet; try again")
            return
        self._run(lambda ctx: ops.redo(project, undo_id, initiator="gui"), f"Redo: {self.text()}",
                  lambda r: setattr(self, "operation", r.operation))

    def undo(self) -> None:
        from rageval_desktop.core import ops  # start-up deferral, as in redo

        project, operation = self.owner.project, self.operation
        self._run(lambda ctx: ops.undo(project, operation, initiator="gui"), f"Undo: {self.text()}",
                  lambda r: setattr(self, "undo_id", r.operation))

    def _run(self, op: Any, label: str, after: Any) -> None:
        owner = self.owner

        def done(result: OpResult) -> None:
            after(result)
            owner.status(label)

        workers.start(op, on_done=done,
                      on_error=lambda message, details: owner.show_error(f"{label} failed: {message}", details))


def push(owner: Any, stack: QUndoStack, result: OpResult) -> None:
    """Put a finished operation on the stack (one that changed nothing logged nothing, and is not pushed)."""
    if result.operation is not None:
        stack.push(OpCommand(owner, result))


def make_stack(parent: Any) -> QUndoStack:
    stack = QUndoStack(parent)
    stack.setUndoLimit(200)
    return stack


def history_dialog(stack: QUndoStack, parent: QWidget) -> QDialog:
    """Edit › History: this session's edits; a click goes back to that point (redo brings the later ones back)."""
    from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QUndoView, QVBoxLayout

    dialog = QDialog(parent)
    dialog.setWindowTitle("History of this session's edits")
    dialog.resize(560, 460)
    layout = QVBoxLayout(dialog)
    hint = QLabel("Click an entry to go back to that point (later edits are undone; redo brings them back).")
    hint.setObjectName("hint")
    hint.setWordWrap(True)
    view = QUndoView(stack)
    view.setEmptyLabel("(project opened)")
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(hint)
    layout.addWidget(view)
    layout.addWidget(buttons)
    dialog.open()
    return dialog
