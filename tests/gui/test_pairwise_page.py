"""The Pairwise page end to end (issue 77.7): a pair sample drawn from the page, rated by keys blind to run and judge
(two keys 0 ms apart both land, in order), undone and redone on the window's undo stack, a pairwise judge asked in
both orders, and the results — the win rate and the judge's agreement — read where they are made."""

from __future__ import annotations

import re
import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QInputDialog

from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.review import pairwise
from rageval_desktop.core.store.project import Project
from rageval_desktop.gui import workers
from rageval_desktop.gui.main_window import settings
from rageval_desktop.gui.views.pairwise_view import NewPairsDialog
from tests.gui.conftest import close_window, open_window, save_shots
from tests.support.fake_openai import FakeOpenAI, Reply


@pytest.fixture
def server():
    with FakeOpenAI(lambda body, n: Reply("2")) as s:      # always the second answer: a position-following judge
        yield s


@pytest.fixture
def window(qtbot, demo_file, tmp_path, server, monkeypatch):
    monkeypatch.setenv("PAIR_KEY", "sk-pairs-0123456789")
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        add_judge(p, "pair-judge", "correctness", "llm", model="m", base_url=server.url, api_key_ref="PAIR_KEY",
                  params={"timeout": 2.0, "max_retries": 1})
    settings().setValue("reviewer", "kim")
    w = open_window(qtbot, copy)
    w.select_nav("pairwise")
    yield w
    close_window(qtbot, w)
    assert workers.active() == 0


def ratings(window) -> list[tuple]:
    return window.project.reader().execute(
        "SELECT position, preference, skipped, withdrawn_at IS NULL FROM pair_ratings WHERE sample_id = 2 "
        "ORDER BY id").fetchall()


def test_draw_rate_by_keys_undo_judge_and_read_the_results(window, qtbot, monkeypatch, server):
    view = window.page("pairwise")
    qtbot.waitUntil(lambda: view.desk is not None, timeout=10_000)      # the demo's pair sample of v1 and v2
    assert view.sample_box.count() == 1 and "30 pairs" in view.sample_box.currentText()
    assert not view.empty.isVisible() and view.card.isVisible()
    monkeypatch.setattr(NewPairsDialog, "exec", lambda self: (self.pairs.setValue(12),
                                                               QDialog.DialogCode.Accepted)[1])
    with qtbot.waitSignal(window.task_finished, timeout=20_000):
        view.new_button.click()
    qtbot.waitUntil(lambda: view.desk is not None and len(view.desk.items) == 12, timeout=10_000)
    assert view.sample_box.count() == 2 and view.sample_box.currentText() == "#2 · v1 vs v2 · 12 pairs"
    text = " ".join(w.text() for w in view.findChildren(type(view.question)))
    assert "v1" not in text.replace(view.sample_box.currentText(), "") and "v2" not in view.left.toPlainText()
    assert not view.results.isVisible()                               # blind: no results while rating
    first, second = view.desk.items[0], view.desk.items[1]
    assert view.left.toPlainText() == first.sides()[0]
    view.setFocus()
    qtbot.keyClicks(view, "12")                                       # two keys 0 ms apart
    qtbot.waitUntil(lambda: len(ratings(window)) == 2 and not view.desk.pending, timeout=10_000)
    assert ratings(window) == [(1, first.preference("left"), 0, 1), (2, second.preference("right"), 0, 1)]
    assert view.desk.index == 2 and "pair 3 of 12 · 2 rated" in view.progress.text()
    qtbot.keyClick(view, Qt.Key.Key_Backspace)                        # undo: the last rating withdrawn
    qtbot.waitUntil(lambda: ratings(window)[-1][3] == 0, timeout=10_000)
    qtbot.waitUntil(lambda: view.desk.index == 1, timeout=10_000)
    assert "Not rated yet" in view.said.text()
    window.state.undo_stack.redo()                                    # redo: rated again, the desk moves on
    qtbot.waitUntil(lambda: len(ratings(window)) == 3 and view.desk.index == 2, timeout=10_000)
    for _ in range(10):
        qtbot.keyClicks(view, "3")
    qtbot.waitUntil(lambda: not view.desk.pending and view.desk.current() is None, timeout=10_000)
    assert "Every pair of this sample is rated" in view.question.text()
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: ("pair-judge", True))
    with qtbot.waitSignal(window.task_finished, timeout=30_000):
        view.judge_button.click()
        qtbot.waitUntil(lambda: server.calls > 0, timeout=10_000)
    assert server.calls == 24                                         # both orders of 12 pairs
    view.results_button.click()
    qtbot.waitUntil(lambda: "win" in view.results.text(), timeout=10_000)
    shown = view.results.text()
    assert re.search(r"v2 wins \d+% of 12 rated pairs", shown) and "cannot tell yet" in shown
    assert "pair-judge agrees on" in shown and "chose the same position in both orders on 100% of 12 pairs" in shown
    assert "needs more ratings" in shown
    report = pairwise.pair_report(window.project, view.sample)
    assert report.judges[0].judge_win_rate.ties == 12
    window.select_nav("compare")                                      # Compare says what reviewers preferred
    compare = window.page("compare")
    qtbot.waitUntil(lambda: compare.preferred.isVisible(), timeout=20_000)
    assert re.match(r"Side by side \(Pairwise page\): v2 wins \d+% of 12 rated pairs", compare.preferred.text())
    window.select_nav("pairwise")
    for size in ((1280, 720), (1024, 768)):
        window.resize(*size)
        qtbot.waitUntil(lambda width=size[0]: window.width() == width, timeout=5_000)
        save_shots(qtbot, window, f"pairwise-{size[0]}")


def test_pairwise_packs_go_out_from_the_page_are_rated_in_the_pack_window_and_come_back(window, qtbot, monkeypatch,
                                                                                          tmp_path):
    """Issue 77.7: the review pack carries pairwise items — exported from the Pairwise page, rated by the same keys
    in the pack's own window (blind: the pack does not know its runs), imported with File › Import Review Packs."""
    from PySide6.QtWidgets import QFileDialog

    from rageval_desktop.core.review.pair_packs import PairPack
    from rageval_desktop.gui.pack_window import PackWindow

    view = window.page("pairwise")
    qtbot.waitUntil(lambda: view.desk is not None, timeout=10_000)
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("ann, bob", True))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path / "packs"))
    with qtbot.waitSignal(window.task_finished, timeout=20_000):
        view.export_button.click()
    ann = tmp_path / "packs" / "pairs1-ann.ragevalpack"
    assert ann.exists() and (tmp_path / "packs" / "pairs1-bob.ragevalpack").exists()
    pack_window = PackWindow(ann)
    qtbot.addWidget(pack_window)
    pack_window.show()
    desk_view = pack_window.review_view
    qtbot.waitUntil(lambda: desk_view.desk is not None, timeout=10_000)
    assert desk_view.sample_box.currentText() == "#1 · 30 pairs" and not desk_view.new_button.isVisible()
    assert "Pairwise pack · ann · 30 pairs" in pack_window.windowTitle()
    first = desk_view.desk.items[0]
    desk_view.setFocus()
    qtbot.keyClicks(desk_view, "12")
    qtbot.waitUntil(lambda: not desk_view.desk.pending and len(PairPack(ann).ratings()) == 2, timeout=10_000)
    qtbot.keyClick(desk_view, Qt.Key.Key_Backspace)                   # undo the 2: withdrawn in the pack
    qtbot.waitUntil(lambda: PairPack(ann).ratings()[-1][6] is not None, timeout=10_000)
    assert [(r[1], r[2]) for r in PairPack(ann).ratings()] == [(first.position, "left"), (2, "right")]
    save_shots(qtbot, pack_window, "pairwise-pack")
    pack_window.close()
    qtbot.waitUntil(lambda: workers.active() == 0, timeout=10_000)
    with qtbot.waitSignal(window.task_finished, timeout=20_000):
        window.files.import_packs([str(ann)])
    items = {i.position: i for i in pairwise.pair_items(window.project, 1)}
    got = window.project.reader().execute("SELECT position, reviewer, preference, withdrawn_at IS NULL FROM "
                                          "pair_ratings WHERE origin LIKE 'pairpack:%' ORDER BY id").fetchall()
    assert got == [(first.position, "ann", "a" if items[first.position].a_left else "b", 1),
                   (2, "ann", "b" if items[2].a_left else "a", 0)]
