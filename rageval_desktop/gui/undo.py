"""Undo and redo of user edits as a QUndoStack whose commands call core ops in a worker: the edit is done (and
recorded in the project's history) first, then pushed; undoing runs the inverse op, which is recorded too — the
project's history never loses a step, it only gains the undo."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QUndoCommand, QUndoStack

from rageval_desktop.gui import workers

Op = Callable[[Any], Any]  # fn(ctx) run in a worker


class CoreCommand(QUndoCommand):
    def __init__(self, window: Any, text: str, redo_op: Op, undo_op: Op) -> None:
        super().__init__(text)
        self.window, self.redo_op, self.undo_op = window, redo_op, undo_op
        self._pushed = False

    def redo(self) -> None:
        if not self._pushed:  # the edit already happened when the command is pushed
            self._pushed = True
            return
        self._run(self.redo_op, f"Redo: {self.text()}")

    def undo(self) -> None:
        self._run(self.undo_op, f"Undo: {self.text()}")

    def _run(self, op: Op, label: str) -> None:
        window = self.window
        workers.start(op, on_done=lambda _r: window.statusBar().showMessage(label, 6000),
                      on_error=lambda message, details: window.show_error(f"{label} failed: {message}", details))


def make_stack(parent: Any) -> QUndoStack:
    stack = QUndoStack(parent)
    stack.setUndoLimit(200)
    return stack


# --- commands for the edits people make --------------------------------------------------------------
def golden_edit(window: Any, before: dict[str, Any], after: dict[str, Any]) -> CoreCommand:
    from rageval_desktop.core.golden.edits import edit_row

    fields = ("question", "gold_answer", "gold_chunk_ids", "slice_tag")
    old = {k: before[k] for k in fields}
    new = {k: after[k] for k in fields}
    project, gid = window.project, before["id"]
    return CoreCommand(window, f"edit golden row {gid}",
                       lambda ctx: edit_row(project, gid, "redo", **new),
                       lambda ctx: edit_row(project, gid, "undo", **old))


def golden_status(window: Any, gid: str, before: str, after: str) -> CoreCommand:
    from rageval_desktop.core.golden.edits import set_status

    project = window.project
    return CoreCommand(window, f"{after} golden row {gid}",
                       lambda ctx: set_status(project, gid, after, "redo"),
                       lambda ctx: set_status(project, gid, before, "undo"))


def judge_edit(window: Any, name: str, before: dict[str, Any], after: dict[str, Any]) -> CoreCommand:
    from rageval_desktop.core.judges.registry import update_judge

    project = window.project
    return CoreCommand(window, f"edit judge {name}",
                       lambda ctx: update_judge(project, name, **after),
                       lambda ctx: update_judge(project, name, **before))


def judge_status(window: Any, name: str, before: str, after: str, reason: str) -> CoreCommand:
    from rageval_desktop.core.review.agreement import set_status

    project = window.project
    verb = "retire" if after == "retired" else "reinstate"
    return CoreCommand(window, f"{verb} judge {name}",
                       lambda ctx: set_status(project, name, after, f"redo: {reason}", force=True),
                       lambda ctx: set_status(project, name, before, f"undo: {reason}", force=True))
