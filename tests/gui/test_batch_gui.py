"""Batch jobs in the window: "Run as batch", closing the app leaves the remote batches running, reopening the
project collects them; Cancel calls them off."""

from __future__ import annotations

import shutil

import pytest

from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.store.project import Project
from rageval_desktop.gui import operations
from tests.gui.conftest import close_window, open_window, save_shots
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def batch_project(tmp_path, demo_file, monkeypatch):
    monkeypatch.setattr(operations, "BATCH_POLL_SECONDS", 0.05)
    path = tmp_path / "demo.rageval"
    shutil.copy(demo_file, path)
    with FakeOpenAI() as server:
        with Project.open(path) as p:
            add_judge(p, "llm-batch", "correctness", "llm", model="m", base_url=server.url)
        yield path, server


def _judged(path):
    with Project.open(path, read_only=True) as p:
        return p.reader().execute("SELECT COUNT(*) FROM judgments WHERE judge_id = "
                                  "(SELECT id FROM judges WHERE name = 'llm-batch')").fetchone()[0]


def test_closing_leaves_the_batch_running_and_reopening_collects_it(qtbot, batch_project):
    path, server = batch_project
    server.hold = True
    w = open_window(qtbot, path)
    w.select_nav("judges")
    view = w.page("judges")
    view.run_box.setCurrentIndex(view.run_box.findData("v1"))
    view.batch_box.setChecked(True)
    view.run_all.click()
    qtbot.waitUntil(lambda: server.retrieves >= 2, timeout=20_000)
    assert w.pages.currentWidget() is w.page("jobs")
    qtbot.waitUntil(lambda: "batches done" in w.page("jobs").live_label.text(), timeout=10_000)
    save_shots(qtbot, w, "batch-polling")
    close_window(qtbot, w)
    assert server.cancels == [] and len(server.batches) == 1 and server.calls == 0
    assert _judged(path) == 0

    server.hold = False
    w = open_window(qtbot, path)                         # reopening picks the batch job up again
    qtbot.waitUntil(lambda: "collected in the background" in w.notice_bar.label.text(), timeout=10_000)
    save_shots(qtbot, w, "batch-reopened")
    qtbot.waitUntil(lambda: "Batch job" in w.page("jobs").live_label.text()
                    and "done" in w.page("jobs").live_label.text(), timeout=30_000)
    assert "at batch prices" in w.page("jobs").live_label.text()
    close_window(qtbot, w)
    assert _judged(path) == 72 and server.calls == 0 and len(server.batches) == 1
    assert len(server.batch_requests) == 72


def test_cancel_calls_the_remote_batches_off(qtbot, batch_project):
    path, server = batch_project
    server.hold = True
    w = open_window(qtbot, path)
    w.judging.start_judging("v1", ["llm-batch"], batch=True)
    qtbot.waitUntil(lambda: server.retrieves >= 1 and w.page("jobs").cancel_button.isEnabled(), timeout=20_000)
    with qtbot.waitSignal(w.job_finished, timeout=20_000) as ended:
        w.page("jobs").cancel_button.click()
    assert "cancelled" in ended.args[0] and len(server.cancels) == 1
    close_window(qtbot, w)
