"""The app's undo stack: one kind of entry (`EditCommand`) for every edit — an operation of core (core/ops, logged with
what undoes it), a rating, a desk check. An edit is done when it is pushed; Ctrl+Z and Ctrl+Shift+Z queue its undo
and redo on the write lane (`AppState.run_write`: in order, behind the write that made it). Operations are the list
`rageval undo` reads, so an undo in either place is seen by the other (History shows this session's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from PySide6.QtGui import QUndoCommand, QUndoStack

if TYPE_CHECKING:
    from PySide6.QtCore import QObject
    from PySide6.QtWidgets import QDialog, QWidget

    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.ops import OpResult
    from rageval_desktop.core.store.project import Project

T = TypeVar("T")
U = TypeVar("U")      # what an entry's undo returns (handed to `undone`)
R = TypeVar("R")      # what its redo returns (handed to `redone`)


class UndoOwner(Protocol):
    """What an entry asks of the app state it was pushed by."""

    @property
    def project(self) -> Project | None: ...
    def run_write(self, label: str, fn: Callable[[TaskContext], T], *, on_done: Callable[[T], object] | None = None,
                  on_error: Callable[[str, str], object] | None = None) -> None: ...
    def status(self, message: str, ms: int = 6000) -> None: ...
    def show_error(self, message: str, details: str = "") -> None: ...


class EditCommand(QUndoCommand, Generic[U, R]):
    """One edit on the stack. `undo` and `redo` run in a worker, queued on the write lane; `undone` and `redone` get
    what they returned, on the GUI thread; `busy(True)` is called as either is asked, `busy(False)` once it has
    landed and `undone` or `redone` ran."""

    def __init__(self, owner: UndoOwner, label: str, undo: Callable[[TaskContext], U],
                 redo: Callable[[TaskContext], R], undone: Callable[[U], object] | None = None,
                 redone: Callable[[R], object] | None = None, busy: Callable[[bool], object] | None = None) -> None:
        super().__init__(label)
        self.owner = owner
        self._undo, self._redo, self._undone, self._redone, self._busy = undo, redo, undone, redone, busy
        self._pushed = False

    def redo(self) -> None:
        if not self._pushed:  # the edit was done when the command was pushed
            self._pushed = True
            return
        self._run(self._redo, f"Redo: {self.text()}", self._redone)

    def undo(self) -> None:
        self._run(self._undo, f"Undo: {self.text()}", self._undone)

    def _run(self, fn: Callable[[TaskContext], T], label: str, after: Callable[[T], object] | None) -> None:
        owner, busy = self.owner, self._busy
        if busy is not None:
            busy(True)

        def done(result: T) -> None:
            try:
                if after is not None:
                    after(result)
            finally:       # free only once the page has drawn what changed: keys that waited apply to it
                if busy is not None:
                    busy(False)
            owner.status(label)

        def failed(message: str, details: str) -> None:
            if busy is not None:
                busy(False)
            owner.show_error(f"{label} failed: {message}", details)

        owner.run_write(label, fn, on_done=done, on_error=failed)


def op_command(owner: UndoOwner, result: OpResult) -> EditCommand[OpResult, OpResult]:
    """A logged operation of core: its undo and redo are operations too (logged, undoable)."""
    from rageval_desktop.core.base.errors import RagevalError

    project = owner.project
    if project is None:
        raise RuntimeError("an operation is pushed while its project is open")
    ids: dict[str, int | None] = {"operation": result.operation, "undo": None}

    def undo(ctx: TaskContext) -> OpResult:
        from rageval_desktop.core import ops  # start-up deferral: the operations' modules load on first undo

        return ops.undo(project, ids["operation"], initiator="gui")

    def redo(ctx: TaskContext) -> OpResult:
        from rageval_desktop.core import ops

        if ids["undo"] is None:       # (its undo failed: there is nothing to redo)
            raise RagevalError("its undo did not happen")
        return ops.redo(project, ids["undo"], initiator="gui")

    return EditCommand(owner, result.label, undo, redo, undone=lambda r: ids.update(undo=r.operation),
                       redone=lambda r: ids.update(operation=r.operation))


def push(owner: UndoOwner, stack: QUndoStack, result: OpResult) -> None:
    """Put a finished operation on the stack (one that changed nothing logged nothing, and is not pushed)."""
    if result.operation is not None:
        stack.push(op_command(owner, result))


def make_stack(parent: QObject | None) -> QUndoStack:
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
