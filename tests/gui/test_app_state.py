"""Pages depend on the app state, not on the window (issue 29): a page added by one module and one line; a page
built with a state whose host is not a window; changes announced by core reach the pages that show them."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer

from rageval_desktop.core import ops
from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.store import oplog
from rageval_desktop.core.store.changes import Area, Changes
from rageval_desktop.gui import pages
from rageval_desktop.gui.state import AppState
from rageval_desktop.gui.views.jobs_view import JobsView
from tests.gui.conftest import close_window, open_window


def test_a_new_page_is_one_module_and_one_line(qtbot, monkeypatch, demo_file, tmp_path):
    """The module is tests/support/extra_page.py (made importable where the pages live); the line is its PageSpec."""
    import shutil
    import sys

    import tests.support.extra_page as module

    monkeypatch.setitem(sys.modules, "rageval_desktop.gui.views.extra_page", module)
    monkeypatch.setattr(
        pages,
        "PAGES",
        (*pages.PAGES, pages.PageSpec("runs_count", "Runs count", "EVALUATE", "extra_page", "RunsCountPage")),
    )
    monkeypatch.setattr(pages, "BY_KEY", {p.key: p for p in pages.PAGES})
    monkeypatch.setattr(pages, "BY_CLASS", {p.cls: p for p in pages.PAGES})
    shutil.copy(demo_file, tmp_path / "d.rageval")
    w = open_window(qtbot, tmp_path / "d.rageval")
    titles = [w.nav.item(i).text() for i in range(w.nav.count())]
    assert "Runs count" in titles
    w.select_nav("runs_count")
    page = w.page("runs_count")
    assert w.pages.currentWidget() is page and page.refreshes == 1 and w.view(module.RunsCountPage) is page
    assert page.label.text().startswith("2 runs")
    close_window(qtbot, w)


class FakeHost:
    """A host that is not a window: what a page needs is the state's protocol, nothing more."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    # called as the real lanes call them (gui/workers.py: fn(*args, ctx=ctx)) — the fake called fn(None, *args), so a
    # page built on it could fail on the real lane (issue 78)
    def run_task(self, label: str, fn: Any, *args: Any, on_done: Any = None) -> Any:
        result = fn(*args, ctx=TaskContext())
        if on_done:
            on_done(result)

    def run_read(self, page: str, fn: Any, *args: Any, on_done: Any, announce: bool = True) -> None:
        on_done(fn(*args, ctx=TaskContext()))

    def show_error(self, message: str, details: str = "") -> None:
        self.messages.append(message)

    def show_status(self, message: str, ms: int = 6000) -> None:
        self.messages.append(message)

    def reviewer(self, ask: bool = False, force: bool = False) -> str:
        return "ann"

    def review_source(self) -> Any:
        return None

    def run_names(self) -> list[str]:
        return ["v1", "v2"]

    def navigate(self, page: str, **where: Any) -> None:
        self.messages.append(f"go {page}")


def jobs_page(qtbot, demo) -> tuple[FakeHost, AppState, JobsView]:
    """The jobs page on a state whose host is not a window."""
    host = FakeHost()
    state = AppState(host)
    state.set_project(demo)
    page = JobsView(state)
    qtbot.addWidget(page)
    return host, state, page


def test_a_page_needs_only_the_state(qtbot, demo):
    host, _state, page = jobs_page(qtbot, demo)
    page.refresh()
    assert page.table.model().rowCount() >= 1  # the demo's jobs, read through the state's project
    assert host.messages == []


def test_no_page_knows_the_window():
    """The page modules name the state, never the window (they reached into it 72 times)."""
    from tests.conftest import REPO

    for spec in pages.PAGES:
        source = (REPO / "rageval_desktop" / "gui" / "views" / f"{spec.module}.py").read_text()
        assert "MainWindow" not in source and "main_window" not in source and "window_" not in source, spec.module


def test_changes_reach_the_pages_that_show_them(qtbot, demo):
    _host, state, page = jobs_page(qtbot, demo)
    page.show()
    calls = []
    page.refresh = lambda runs=None: calls.append(runs)  # noqa: E731 - counts the refreshes
    state.subscribe(page)
    state.announce(Changes("rate", frozenset({Area.RATINGS})))
    assert not any(t.isActive() for t in page.findChildren(QTimer)) and calls == []  # jobs do not show ratings
    state.announce(Changes("job", frozenset({Area.JOBS})))
    qtbot.waitUntil(lambda: calls == [["v1", "v2"]], timeout=2_000)


def test_the_state_runs_an_operation_and_puts_it_on_its_undo_stack(qtbot, demo):
    state = AppState(FakeHost())
    state.set_project(demo)
    gid = demo.reader().execute("SELECT id FROM golden_rows ORDER BY id LIMIT 1").fetchone()[0]
    state.run_op("retire", ops.SetGoldenStatus(id=gid, status="retired", reason="test"))
    assert state.undo_stack.count() == 1 and state.undo_stack.undoText() == f"retire golden row {gid}"
    assert oplog.last_undoable(demo).label == f"retire golden row {gid}"
