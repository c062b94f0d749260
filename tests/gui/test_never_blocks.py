"""The GUI thread never waits: closing during a job with hung calls, page reads while a task runs, and the
rule that widgets never run SQL."""

from __future__ import annotations

import re
import shutil
import time

from rageval_desktop.core.judges.registry import add_judge
from tests.conftest import REPO
from tests.gui.conftest import close_window, open_window, select_row, settle
from tests.support.fake_openai import FakeOpenAI, Reply, default_content


def test_no_sql_under_gui():
    """Widgets call core; SQL lives in core (was: six places ran `execute(` in gui/)."""
    offenders = [f"{p.relative_to(REPO)}:{n}" for p in (REPO / "rageval_desktop" / "gui").rglob("*.py")
                 for n, line in enumerate(p.read_text().splitlines(), 1)
                 if re.search(r"\.execute(many|script)?\(|\.reader\(\)|\.write\(\"", line)]
    assert offenders == []


def test_closing_during_a_hung_job_never_blocks_the_gui_thread(qtbot, demo_file, tmp_path):
    """Was: closing waited 10 s and then 30 s on the GUI thread while calls hung, and backed up there."""
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    hang = lambda body, n: Reply(default_content(body["messages"][-1]["content"]), delay=60.0)  # noqa: E731
    with FakeOpenAI(hang) as server:
        w = open_window(qtbot, copy)
        add_judge(w.project, "slow", "correctness", "llm", model="m", base_url=server.url,
                  params={"concurrency": 4, "timeout": 120})
        w.judging.start_judging("v1", ["slow"])
        qtbot.waitUntil(lambda: server.calls >= 4, timeout=20_000)
        started = time.monotonic()
        w.close()                                 # returns at once: the window waits, the GUI thread does not
        returned_after = time.monotonic() - started
        close_window(qtbot, w)                    # the job's calls are cancelled, the file closed
        closed_after = time.monotonic() - started
    assert returned_after < 0.5 and closed_after < 10


def test_pages_read_while_a_task_runs(window, qtbot):
    """Was: navigating while a task ran said "Please wait: … is still running"."""
    release = []

    def slow_task(ctx):
        while not release and not ctx.cancelled:
            time.sleep(0.01)

    window.run_task("A long task", slow_task)
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        window.select_nav("dashboard")
    assert getattr(window, "last_error", None) is None or "Please wait" not in window.last_error
    assert window.page("dashboard").model.rowCount() > 0
    release.append(True)
    qtbot.waitUntil(lambda: not window.busy, timeout=10_000)


def test_the_detail_pane_keeps_its_place_while_judgments_arrive(window, qtbot):
    """Was: every refresh during a job rebuilt the pane and jumped to the top."""
    from dataclasses import replace

    from rageval_desktop.core.store.queries import run_row_detail

    window.select(run="v1")
    settle(qtbot, window)
    select_row(window, qtbot, 0)
    pane = window.rows.detail
    pane.resize(400, 120)
    detail = pane.detail
    assert detail is not None
    pane.verticalScrollBar().setValue(pane.verticalScrollBar().maximum())
    place = pane.verticalScrollBar().value()
    assert place > 0
    pane.show_detail(detail)                                    # the same row, unchanged: nothing redrawn
    assert pane.verticalScrollBar().value() == place
    pane.show_detail(replace(detail, facts={**detail.facts, "judged": "now"}))  # the same row, changed
    assert pane.verticalScrollBar().value() == place
    other = run_row_detail(window.project, 2)
    pane.show_detail(other)                                     # another row starts at the top
    assert pane.verticalScrollBar().value() == 0


def test_restore_from_backup_in_the_window(window, qtbot, tmp_path):
    from rageval_desktop.core.golden.edits import add_row

    path = window.project.path
    backup = window.project.backup("manual")
    add_row(window.project, "A question added after the backup?", gold_answer="x", reason="test")
    with qtbot.waitSignal(window.project_opened, timeout=30_000):
        window.session.restore_backup(str(backup), confirm=False)
    from rageval_desktop.core.store.queries import golden_questions

    assert window.project.path == path
    assert "A question added after the backup?" not in golden_questions(window.project).values()


def test_a_slow_close_shows_its_progress_dialog(qtbot, demo_file, tmp_path, monkeypatch):
    """Was: a busy-indicator QProgressDialog gets no setValue calls, so it never appeared however long it took."""
    from PySide6.QtWidgets import QProgressDialog

    from rageval_desktop.gui import main_window, workers

    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    w = open_window(qtbot, copy)
    real = workers.in_thread
    monkeypatch.setattr(main_window.workers, "in_thread",
                        lambda fn, **kw: real(lambda: (time.sleep(1.5), fn())[1], **kw))
    w.close_project()
    qtbot.waitUntil(lambda: any(d.isVisible() for d in w.findChildren(QProgressDialog)), timeout=3_000)
    qtbot.waitUntil(lambda: w.closing == 0, timeout=10_000)
    assert not any(d.isVisible() for d in w.findChildren(QProgressDialog))
    monkeypatch.undo()
    close_window(qtbot, w)
