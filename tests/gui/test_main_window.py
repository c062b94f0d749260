"""The main window, driven offscreen through its main paths."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from rageval_desktop.gui import workers
from rageval_desktop.gui.main_window import MainWindow
from tests.conftest import table_dump
from tests.core.test_importers import GOLDEN, write
from tests.gui.conftest import close_window, select_row, settle


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    yield w
    close_window(qtbot, w)
    assert workers.active() == 0  # no thread outlives the window


@pytest.fixture
def opened(window, qtbot, demo_file, tmp_path):
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with qtbot.waitSignal(window.project_opened, timeout=20_000):
        window.open_path(copy)
    settle(qtbot, window)
    return window


def test_opens_demo_and_shows_golden_rows(opened):
    model = opened.rows.table.model()
    assert model.rowCount() >= 60
    assert model.index(0, 2).data() == "What does the assert statement do?"
    assert opened.rows_label.text() == f"{model.rowCount()} rows"
    assert "demo.rageval" in opened.path_label.text()
    nav = [opened.nav.item(i).text() for i in range(opened.nav.count())]
    assert nav[0].startswith("Golden set") and any(t.startswith("v1") for t in nav)


def test_run_view_detail_marks_gold_passages_as_plain_text(opened, qtbot):
    opened.select(run="v1")
    settle(qtbot, opened)
    model = opened.rows.table.model()
    assert model.source.title == "Run v1"
    assert model.rowCount() == 72
    select_row(opened, qtbot, 0)
    text = opened.rows.detail.toPlainText()
    assert "QUESTION\nWhat does the assert statement do?" in text
    assert "★ GOLD" in text and "assert#000" in text
    assert "RETRIEVED PASSAGES (50; gold chunks: assert#000)" in text


def test_slice_filter_carries_across_views(opened, qtbot):
    opened.select(slice_tag="keyword-heavy")
    settle(qtbot, opened)
    assert opened.rows.table.model().rowCount() == 12
    opened.select(run="v2")
    settle(qtbot, opened)
    assert opened.rows.table.model().rowCount() == 12
    assert {opened.rows.table.model().index(r, 1).data() for r in range(12)} == {"keyword-heavy"}


def test_keyboard_moves_through_rows_and_updates_detail(opened, qtbot):
    opened.rows.table.setFocus()
    select_row(opened, qtbot, 0)
    first = opened.rows.detail.toPlainText()
    with qtbot.waitSignal(opened.rows.row_shown, timeout=30_000):
        qtbot.keyClick(opened.rows.table, Qt.Key.Key_Down)
    assert opened.rows.table.currentIndex().row() == 1
    assert opened.rows.detail.toPlainText() != first


@pytest.mark.slow   # heavy: the golden import's near-duplicate check loads the embedding model
def test_import_through_the_window_refreshes_views(opened, qtbot, tmp_path):
    path = write(tmp_path / "extra.jsonl", [dict(GOLDEN[0], id="new-1", question="A brand new question?")])
    before = opened.rows.table.model().rowCount()
    with qtbot.waitSignal(opened.task_finished, timeout=20_000) as signal:
        opened.files.import_file(path, ask=False, kind="golden")
    assert signal.args == ["done"]
    qtbot.waitUntil(lambda: opened.rows.table.model().rowCount() == before + 1, timeout=5000)


def test_bad_import_shows_readable_error_and_changes_nothing(opened, qtbot, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("question,answer\nq,a\n")
    before = table_dump(opened.project.path)
    with qtbot.waitSignal(opened.task_finished, timeout=20_000) as signal:
        opened.files.import_file(bad, ask=False, kind="run", run_name="x")
    assert signal.args == ["failed"]
    assert opened.last_error.startswith("bad.csv: missing required columns")
    assert table_dump(opened.project.path) == before


def test_drop_a_project_file_opens_it(window, qtbot, demo_file, tmp_path):
    copy = tmp_path / "dropped.rageval"
    shutil.copy(demo_file, copy)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(copy))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.project_opened, timeout=20_000):
        window.dropEvent(event)
    assert window.project.path == copy


def test_refused_file_shows_error(window, qtbot, tmp_path):
    bad = tmp_path / "bad.rageval"
    bad.write_text("nope")
    with qtbot.waitSignal(window.task_finished, timeout=10_000):
        window.open_path(bad)
    assert "not a RAGEval project" in window.last_error
    assert window.project is None


def test_lazy_model_fetches_only_visible_pages(window, qtbot, tmp_path):
    from rageval_desktop.core.metrics.triage import run_source
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.models.lazy_table import FIRST_IDS, PAGE, LazyTableModel

    with Project.create(tmp_path / "big.rageval") as p:
        with p.write("fill") as w:
            w.execute("INSERT INTO runs (name, created_at) VALUES ('big', 'now')")
            w.executemany("INSERT INTO run_rows (run_id, position, external_id, question, answer) "
                          "VALUES (1, ?, ?, ?, 'a')", [(i, f"r{i}", f"question {i}") for i in range(20_000)])
        model = LazyTableModel(p, run_source(p, 1, "big"))
        # the first screens' ids at once (a flat first paint), the rest on the next turns of the event loop
        assert model.rowCount() == FIRST_IDS and model.canFetchMore() and not model.complete
        with qtbot.waitSignal(model.loaded, timeout=5_000) as loaded:
            pass
        assert loaded.args == [20_000] and model.rowCount() == 20_000 and model.complete and not model.cached_pages
        question = [c.header for c in model.source.columns].index("question")
        assert model.index(19_999, question).data() == "question 19999"
        assert model.cached_pages == [19_999 // PAGE]


def test_shortcut_sheet_lists_keys(window, qtbot):
    """A two-column table that does not wrap (was a monospace message box that wrapped)."""
    from PySide6.QtWidgets import QTableWidget

    window.files.show_shortcuts()
    table = window.files.shortcut_sheet.findChild(QTableWidget, "shortcuts")
    keys = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert table.columnCount() == 2 and "Ctrl+I" in keys and "F1" in keys and not table.wordWrap()
    assert table.horizontalScrollBar().maximum() == 0     # nothing cut off sideways
    window.files.shortcut_sheet.close()


def test_every_listed_shortcut_is_bound(qtbot):
    """Was: the F1 sheet listed Ctrl+, and Ctrl+Q, which were not bound on Linux (empty standard keys)."""
    from PySide6.QtGui import QAction, QKeySequence

    from rageval_desktop.gui.file_actions import SHORTCUTS
    from rageval_desktop.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    bound = {seq.toString() for act in w.findChildren(QAction) for seq in act.shortcuts()}
    listed = [key for key, _ in SHORTCUTS if key.startswith(("Ctrl+", "F1", "Esc"))]
    assert "Ctrl+," in listed and "Ctrl+Q" in listed
    missing = [key for key in listed if QKeySequence(key).toString() not in bound]
    assert missing == []


def test_the_detail_pane_remembers_its_width(opened, qtbot):
    from rageval_desktop.gui.views.rows_view import DETAIL_WIDTH
    from tests.gui.conftest import close_window, open_window

    window = opened
    window.resize(1280, 720)
    window.select(run="v1")
    qtbot.waitUntil(lambda: window.detail_width_ready, timeout=5_000)
    assert window.rows_page.sizes()[1] == DETAIL_WIDTH          # was ~180 px on the golden set: text wrapped
    window.rows_page.setSizes([500, 520])
    window.rows_page.splitterMoved.emit(500, 1)                 # what a drag of the handle emits
    path = window.project.path
    close_window(qtbot, window)
    again = open_window(qtbot, path)
    again.resize(1280, 720)
    again.select(run="v1")
    qtbot.waitUntil(lambda: again.detail_width_ready, timeout=5_000)
    assert again.rows_page.sizes()[1] == 520
    close_window(qtbot, again)


def test_the_welcome_page_is_a_centred_card_with_a_placeholder(window, qtbot):
    from rageval_desktop.gui.views.welcome import CARD_WIDTH

    window.resize(1280, 720)
    page = window.welcome
    qtbot.waitUntil(lambda: page.isVisible(), timeout=5_000)
    assert page.empty.isVisible() and not page.recent.isVisible()     # no recent projects: a placeholder
    card = page.findChild(type(page.recent.parent()), "welcomeCard")
    left = card.mapTo(page, card.rect().topLeft()).x()
    right = page.width() - (left + card.width())
    assert card.width() <= CARD_WIDTH and abs(left - right) <= 2          # centred, not 1,340-px-wide buttons
    assert max(b.width() for b in page.buttons.values()) < CARD_WIDTH / 2


@pytest.mark.slow   # heavy: the golden import's near-duplicate check loads the embedding model
def test_import_a_file_without_a_project_makes_one_beside_it(window, qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    source = tmp_path / "golden.jsonl"
    write(source, GOLDEN)
    target = tmp_path / "made.rageval"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    with qtbot.waitSignal(window.project_opened, timeout=20_000):
        window.files.import_file(source, ask=False, kind="golden")
    qtbot.waitUntil(lambda: window.project is not None and window.project.reader().execute(
        "SELECT COUNT(*) FROM golden_rows").fetchone()[0] == len(GOLDEN), timeout=20_000)
    assert window.project.path == target
