"""Curating the golden set from the window: edit with a reason and chunk search, versions and diff, promote."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QPlainTextEdit

from rageval_desktop.core.golden.edits import history
from rageval_desktop.gui.views.common import TextDialog
from rageval_desktop.gui.views.golden_tools import GoldenRowDialog
from tests.gui.conftest import settle


def test_edit_a_row_with_reason_and_a_chunk_found_by_search(window, qtbot):
    assert window.rows.golden_bar.isVisible()
    qtbot.waitUntil(lambda: "easy 12" in window.rows.golden_bar.balance.text(), timeout=10_000)   # read off the GUI
    window.rows.table.selectRow(0)
    gid = window.golden.selected_golden_id()
    from rageval_desktop.core.golden.edits import row

    dialog = GoldenRowDialog(window.project, ["easy", "edge"], row(window.project, gid), window)
    qtbot.addWidget(dialog)
    dialog.answer.setPlainText("It raises AssertionError when the expression is false.")
    dialog.search.setText("assertionerror debug")
    qtbot.keyClick(dialog.search, Qt.Key.Key_Return)
    assert dialog.results.count() > 0 and "#" in dialog.results.item(0).text()
    dialog.add_chunk(dialog.results.item(0))
    # gold chunks show their text, not bare ids; the ids are what is saved
    first = dialog.gold.item(0)
    assert " — " in first.text() and len(first.text()) > len(dialog.chunk_ids()[0]) + 10
    dialog.reason.setText("more precise reference")
    with qtbot.waitSignal(window.task_finished, timeout=10_000) as done:
        window.state.run_op("save", dialog.operation())
    assert done.args == ["done"]
    saved = row(window.project, gid)
    assert saved["revision"] == 2 and saved["gold_answer"].startswith("It raises")
    assert len(saved["gold_chunk_ids"]) >= 1
    assert history(window.project, gid)[-1]["reason"] == "more precise reference"


def test_invalid_edit_is_refused_with_a_message(window, qtbot):
    from rageval_desktop.core.golden.edits import row

    window.rows.table.selectRow(0)
    dialog = GoldenRowDialog(window.project, ["easy"], row(window.project, window.golden.selected_golden_id()), window)
    qtbot.addWidget(dialog)
    dialog.add_gold("no-such-chunk#9999", None)
    assert dialog.gold.item(dialog.gold.count() - 1).text() == "no-such-chunk#9999 — (not in the project's corpus)"
    dialog.reason.setText("test")
    with qtbot.waitSignal(window.task_finished, timeout=10_000) as done:
        window.state.run_op("save", dialog.operation())
    assert done.args == ["failed"] and "not in the corpus" in window.last_error


def test_version_diff_and_promote(window, qtbot, monkeypatch):
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("v1", True))
    with qtbot.waitSignal(window.task_finished, timeout=10_000):
        window.golden.save_golden_version()
    window.rows.table.selectRow(1)
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("duplicate", True))
    with qtbot.waitSignal(window.task_finished, timeout=10_000):
        window.golden.retire_golden()
    answers = iter([("v1", True), ("current", True)])
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: next(answers))
    with qtbot.waitSignal(window.task_finished, timeout=10_000):
        window.golden.diff_golden()
    dialog = window.findChild(TextDialog)
    text = dialog.findChild(QPlainTextEdit).toPlainText()
    assert "1 changed" in text and "status: 'approved'" in text
    window.select(run="v2")
    settle(qtbot, window)
    window.rows.table.selectRow(0)
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: ("adversarial", True))
    with proj_question_freed(window):
        with qtbot.waitSignal(window.task_finished, timeout=10_000) as done:
            window.golden.promote_current_row()
    assert done.args == ["done"]
    src = window.project.reader().execute("SELECT source, status FROM golden_rows WHERE source = "
                                          "'production_failure'").fetchone()
    assert src == ("production_failure", "draft")


class proj_question_freed:  # noqa: N801 - a tiny context manager for the test
    """The demo's run rows repeat golden questions; give the row a new question so promotion adds a row."""

    def __init__(self, window):
        self.window = window

    def __enter__(self):
        model = self.window.rows.table.model()
        row_id = model.row_id(self.window.rows.table.currentIndex().row())
        with self.window.project.write("free") as w:
            w.execute("UPDATE run_rows SET question = 'A question production got wrong?' WHERE id = ?", (row_id,))
        return self

    def __exit__(self, *exc):
        return False
