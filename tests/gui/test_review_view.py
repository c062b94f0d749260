"""The review screen rated by keyboard alone: 40 rows, with a skip and an undo; blind until rated."""

from __future__ import annotations

import shutil
import time

import pytest
from PySide6.QtCore import Qt

from rageval_desktop.core.jobs.judge_job import JobSpec, run_judge_job
from rageval_desktop.core.review.sampling import create_sample
from rageval_desktop.core.store.project import Project
from rageval_desktop.gui import workers
from rageval_desktop.gui.main_window import MainWindow, settings
from tests.gui.conftest import close_window


@pytest.fixture
def window(qtbot, demo_file, tmp_path):
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        run_judge_job(p, JobSpec(run="v2", judges=["token-f1"]))
        create_sample(p, "v2", "correctness_binary", size=40, seed=5)
    settings().setValue("reviewer", "kim")
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.project_opened, timeout=20_000):
        w.open_path(copy)
    w.select_nav("review")
    yield w
    close_window(qtbot, w)
    assert workers.active() == 0


def press(qtbot, view, key, text=""):
    with qtbot.waitSignal(view.rated, timeout=10_000):
        qtbot.keyClick(view, key) if not text else qtbot.keyClicks(view, text)


def test_forty_rows_by_keyboard_with_skip_and_undo(window, qtbot):
    view = window.review_view
    assert window.pages.currentWidget() is view and view.sample is not None
    view.setFocus()
    assert "Judge verdicts are hidden" in view.reveal.text()
    assert "JUDGMENTS" not in view.detail.toPlainText()      # blind
    assert "The rubric the judge receives" in view.rubric.toPlainText()
    first_row = view.sample.row_ids[0]
    press(qtbot, view, None, "1")
    assert view.index == 1 and "Row 1 saved. Judges: token-f1" in view.reveal.text()
    press(qtbot, view, None, "s")                           # skip row 2
    press(qtbot, view, None, "u")                           # undo the skip: back on row 2
    assert view.index == 1
    for i in range(39):
        press(qtbot, view, None, "0" if i % 3 else "1")
    assert "40/40 rated" in view.progress_label.text()
    conn = window.project.reader()
    rows = conn.execute("SELECT COUNT(*), COUNT(DISTINCT run_row_id), SUM(skipped) FROM human_ratings "
                        "WHERE withdrawn_at IS NULL AND reviewer = 'kim'").fetchone()
    assert rows == (40, 40, 0)
    assert conn.execute("SELECT COUNT(*) FROM human_ratings WHERE withdrawn_at IS NOT NULL").fetchone()[0] == 1
    assert conn.execute("SELECT MIN(seconds_taken) >= 0 FROM human_ratings").fetchone()[0] == 1
    # judgments untouched by ratings
    judged = conn.execute("SELECT COUNT(*), MIN(status) FROM judgments WHERE run_row_id = ?", (first_row,)).fetchone()
    assert judged == (1, "ok")
    # navigating back to a rated row reveals the judges
    qtbot.keyClick(view, Qt.Key.Key_Home)
    view.index = 0
    view.show_row()
    assert "JUDGMENTS" in view.detail.toPlainText()


def test_keys_are_ignored_while_saving_and_on_auto_repeat(window, qtbot):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent

    view = window.review_view
    view.setFocus()
    view.saving = True
    qtbot.keyClicks(view, "1")
    assert view.index == 0 and not window.project.reader().execute("SELECT COUNT(*) FROM human_ratings").fetchone()[0]
    view.saving = False
    repeat = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_1, Qt.KeyboardModifier.NoModifier, "1", True)
    view.keyPressEvent(repeat)
    time.sleep(0.05)
    qtbot.wait(50)
    assert window.project.reader().execute("SELECT COUNT(*) FROM human_ratings").fetchone()[0] == 0


def test_audit_view_shows_agreement_and_retires_with_a_reason(window, qtbot, monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    view = window.review_view
    view.setFocus()
    for _ in range(30):
        press(qtbot, view, None, "1")
    with qtbot.waitSignal(window.task_finished, timeout=30_000):
        window.select_nav("audit")
    audit = window.audit_view
    records = {audit.model.record(r)["judge"]: audit.model.record(r) for r in range(audit.model.rowCount())}
    assert records["token-f1"]["n"] == 30 and records["token-f1"]["statistic"] == "cohen_kappa"
    assert records["minilm-similarity"]["verdict"] == "needs more ratings"
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("drifts on keyword questions", True))
    audit.table.selectRow(list(records).index("token-f1"))
    with qtbot.waitSignal(window.task_finished, timeout=30_000):
        audit.retire_button.click()
    qtbot.waitUntil(lambda: window.project.reader().execute(
        "SELECT status FROM judges WHERE name = 'token-f1'").fetchone()[0] == "retired", timeout=10_000)
    reason = window.project.reader().execute("SELECT status_reason FROM judges WHERE name = 'token-f1'").fetchone()[0]
    assert reason == "drifts on keyword questions"


def test_ratings_are_on_the_window_undo_stack_with_redo(window, qtbot):
    view = window.review_view
    view.setFocus()
    press(qtbot, view, None, "1")
    assert window.undo_stack.undoText() == "rate row 1 of sample 1: 1"
    with qtbot.waitSignal(view.rated, timeout=10_000):
        window.undo()                                   # Ctrl+Z from anywhere in the window
    count = lambda: window.project.reader().execute(  # noqa: E731
        "SELECT COUNT(*) FROM human_ratings WHERE withdrawn_at IS NULL").fetchone()[0]
    assert count() == 0 and view.index == 0
    with qtbot.waitSignal(view.rated, timeout=10_000):
        window.undo_stack.redo()
    assert count() == 1 and "1/40 rated" in view.progress_label.text()
