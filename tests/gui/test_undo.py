"""Undo and redo of edits from the window: golden rows, their status, judge retirements; a visible history."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QUndoView

from rageval_desktop.core import ops
from rageval_desktop.core.golden.edits import history, row
from rageval_desktop.gui import workers
from rageval_desktop.gui.views.golden_tools import GoldenRowDialog
from tests.gui.conftest import close_window


def wait_workers(qtbot):
    qtbot.waitUntil(lambda: workers.active() == 0, timeout=10_000)



def edit_first_golden_row(w, qtbot, monkeypatch, answer: str, reason: str) -> tuple[str, str]:
    """The first golden row's reference answer edited through its dialog: (its id, the answer before)."""
    w.rows.table.selectRow(0)
    gid = w.golden.selected_golden_id()
    original = row(w.project, gid)["gold_answer"]

    def fill(dialog: GoldenRowDialog) -> int:
        dialog.answer.setPlainText(answer)
        dialog.reason.setText(reason)
        return GoldenRowDialog.DialogCode.Accepted

    monkeypatch.setattr(GoldenRowDialog, "exec", fill)
    with qtbot.waitSignal(w.task_finished, timeout=10_000):
        w.golden.edit_golden(gid)
    return gid, original


def test_undo_redo_golden_edits_and_status(qtbot, window, monkeypatch):
    w = window
    gid, original = edit_first_golden_row(w, qtbot, monkeypatch, "A new reference.", "clearer")
    assert row(w.project, gid)["gold_answer"] == "A new reference."
    assert w.undo_stack.count() == 1 and w.undo_stack.undoText() == f"edit golden row {gid}"
    w.undo()
    wait_workers(qtbot)
    assert row(w.project, gid)["gold_answer"] == original
    assert [h["reason"] for h in history(w.project, gid)][-2:] == ["clearer", "undo"]   # the undo is recorded too
    w.undo_stack.redo()
    wait_workers(qtbot)
    assert row(w.project, gid)["gold_answer"] == "A new reference."
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("duplicate", True))
    with qtbot.waitSignal(w.task_finished, timeout=10_000):
        w.golden.retire_golden()
    assert row(w.project, gid)["status"] == "retired"
    w.undo()
    wait_workers(qtbot)
    assert row(w.project, gid)["status"] == "approved"
    w.show_history()
    view = w.history_dialog.findChild(QUndoView)
    assert view.model().rowCount() == 3   # the clean state + two commands
    close_window(qtbot, w)


def test_undo_a_judge_retirement(qtbot, window, monkeypatch):
    w = window
    with qtbot.waitSignal(w.read_finished, timeout=30_000, check_params_cb=lambda page: page == "audit"):
        w.select_nav("audit")
    audit = w.page("audit")
    names = [audit.model.record(r)["judge"] for r in range(audit.model.rowCount())]
    audit.table.selectRow(names.index("answer-recall"))
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("testing undo", True))
    audit.retire_button.click()
    qtbot.waitUntil(lambda: w.undo_stack.count() == 1, timeout=20_000)
    status = lambda: w.project.reader().execute("SELECT status FROM judges WHERE name = 'answer-recall'").fetchone()[0]  # noqa: E731
    assert status() == "retired"
    wait_workers(qtbot)
    w.undo()
    qtbot.waitUntil(lambda: status() == "active", timeout=10_000)
    wait_workers(qtbot)
    close_window(qtbot, w)


def test_the_selected_golden_row_survives_save_version(qtbot, window, monkeypatch):
    """Was: saving a version rebuilt the table and selected row 1 again."""
    w = window
    w.rows.table.selectRow(5)
    gid = w.golden.selected_golden_id()
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("v-test", True))
    with qtbot.waitSignal(w.task_finished, timeout=10_000):
        w.golden.save_golden_version()
    qtbot.waitUntil(lambda: w.rows.table.model().rowCount() > 0, timeout=5_000)
    assert w.golden.selected_golden_id() == gid and w.rows.table.currentIndex().row() == 5


def test_undo_then_redo_at_once_run_in_order_on_the_write_lane(qtbot, window, monkeypatch):
    """Ctrl+Z, Ctrl+Shift+Z, Ctrl+Z pressed before the first lands: each waits for the one before on the write lane
    (they raced in the thread pool: "operation 1 was undone already (by operation 2)")."""
    w = window
    gid, original = edit_first_golden_row(w, qtbot, monkeypatch, "Edited once.", "first")
    w.last_error = ""
    w.undo()
    w.undo_stack.redo()
    w.undo()
    wait_workers(qtbot)
    assert w.last_error == ""
    assert row(w.project, gid)["gold_answer"] == original
    assert [h["reason"] for h in history(w.project, gid)][-4:] == ["first", "undo", "first", "undo"]
    close_window(qtbot, w)


def test_a_page_refreshes_once_after_its_own_operation(qtbot, window, monkeypatch):
    """Retiring a judge on the Audit page refreshed it four times: in the operation's on_done, on the state's
    announcement of the changes, and twice from the window (refilling the navigation re-selected the page, then the
    window showed it again). Now the changes carry the page as their initiator (Anki's pattern), the navigation
    refills quietly, and the page refreshes once; a write another asks for still refreshes it."""
    w = window
    with qtbot.waitSignal(w.read_finished, timeout=30_000, check_params_cb=lambda page: page == "audit"):
        w.select_nav("audit")
    audit = w.page("audit")
    refreshes = []
    real = audit.refresh
    monkeypatch.setattr(audit, "refresh", lambda runs=None: (refreshes.append(1), real(runs or w.run_names())))
    names = [audit.model.record(r)["judge"] for r in range(audit.model.rowCount())]
    audit.table.selectRow(names.index("answer-recall"))
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("once", True))
    audit.retire_button.click()
    qtbot.waitUntil(lambda: w.undo_stack.count() == 1, timeout=20_000)
    qtbot.wait(audit.refresh_delay_ms + 600 if hasattr(audit, "refresh_delay_ms") else 1400)
    wait_workers(qtbot)
    assert len(refreshes) == 1
    refreshes.clear()
    w.state.run_op("Reinstating", ops.SetJudgeStatus(name="answer-recall", status="active", reason="x",
                                                     force=True))
    qtbot.waitUntil(lambda: len(refreshes) >= 1, timeout=10_000)
    wait_workers(qtbot)
    close_window(qtbot, w)
