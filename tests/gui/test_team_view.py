"""The Team page on two reviewers' imported packs: a row per reviewer with agreement and CIs, the pair's kappa and
alpha, the disagreements queued; a lead settles one with a reason and it leaves the queue. With
RAGEVAL_SCREENSHOT_DIR set, the page is saved there (the README's picture), light and dark."""

from __future__ import annotations

import shutil

from PySide6.QtCore import Qt

from rageval_desktop.core.review import packs
from rageval_desktop.core.store.project import Project
from rageval_desktop.gui.main_window import settings
from tests.conftest import pack_ids, team_packs
from tests.gui.conftest import close_window, open_window, save_shots, visit


def test_the_team_page_shows_reviewers_pairs_and_a_queue_a_lead_settles(qtbot, demo_file, tmp_path):
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        sample, made = team_packs(p, tmp_path / "packs", 20)
        for info in made:
            pack, ids = packs.Pack(info.path), pack_ids(p, info)
            for i, row in enumerate(sample.row_ids):
                truth = i % 5 + 1
                far = info.reviewer == "bob" and i % 4 == 0      # bob reads every fourth answer very differently
                score = (truth + 3 - 1) % 5 + 1 if far else truth
                pack.rate(ids[row], 0, float(score), seconds=3.0 if info.reviewer == "ann" else 6.5,
                          comment="misses the point" if far else None)
            packs.import_pack(p, info.path)
    settings().setValue("reviewer", "lee")
    w = open_window(qtbot, copy)
    try:
        w.resize(1280, 720)
        visit(w, qtbot, "team", "team.samples")
        view = w.page("team")
        with qtbot.waitSignal(w.read_finished, timeout=20_000):
            view.sample_box.setCurrentIndex(view.sample_box.findData(sample.id))
        report = view.report
        assert [r.reviewer for r in report.reviewers] == ["ann", "bob"]
        assert view.people.rowCount() == 2 and view.pairs.rowCount() == 1
        pairs = view.pairs_view           # the κ column whole at 1280 px (was cut; issue 31)
        assert pairs.columnViewportPosition(3) + pairs.columnWidth(3) <= pairs.viewport().width()
        assert view.queue.rowCount() == 5 and "To adjudicate: 5" in view.queue_title.text()
        assert "misses the point" in view.queue.data(view.queue.index(0, 3))
        assert "nan" not in view.queue.data(view.queue.index(0, 3))
        save_shots(qtbot, w, "team")
        view.queue_view.sortByColumn(4, Qt.SortOrder.DescendingOrder)    # sorted by question: not the report's order
        view.queue_view.selectRow(0)
        chosen = view.queue.record(0)["queued"]["row_id"]
        assert chosen != view.report.queue[0]["row_id"]      # so the test tells a table row from a report index
        view.settle_button.click()
        dialog = view.settle_dialog
        dialog.score.setCurrentIndex(dialog.score.findData(2.0))
        dialog.reason.setText("both missed the second half")
        with qtbot.waitSignal(w.read_finished, timeout=20_000):
            dialog.buttons.accepted.emit()
        assert view.queue.rowCount() == 4 and "settled: 1" in view.queue_title.text()
        lead = w.project.reader().execute("SELECT run_row_id, lead, score, reason FROM adjudications").fetchall()
        assert lead == [(chosen, "lee", 2.0, "both missed the second half")]
    finally:
        close_window(qtbot, w)


def test_a_reviewer_failing_gold_checks_is_set_aside_from_the_team_page_and_brought_back(qtbot, demo_file, tmp_path,
                                                                                       monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    from rageval_desktop.core.review import quality, ratings

    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        sample, _ = team_packs(p, tmp_path / "packs", 20)
        for row in sample.row_ids[:12]:
            ratings.rate(p, row, "correctness", "carol", 3.0, sample_id=sample.id, seconds=1.0)
        for row in sample.row_ids[:15]:     # settled elsewhere; carol answers every gold item wrongly
            quality.record(p, sample.id, "carol", quality.Check("gold", row, "correctness", 0, None, 5.0), 1.0)
    settings().setValue("reviewer", "lee")
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("failed the gold checks", True))
    w = open_window(qtbot, copy)
    try:
        w.resize(1024, 768)
        w.select_nav("team")
        view = w.page("team")
        qtbot.waitUntil(lambda: view.quality is not None, timeout=20_000)
        carol = next(i for i in range(view.people.rowCount()) if view.people.record(i)["reviewer"] == "carol")
        record = view.people.record(carol)
        assert record["status"] == "fails gold" and record["gold"].startswith("0/15 = 0%")
        assert "12 of 12 ratings under the speed floor" in record["gold__tip"]
        assert "carol fails the gold checks" in view.summary.text()
        view.people_view.selectRow(carol)
        save_shots(qtbot, w, "team-checks")
        assert view.aside_button.isEnabled() and "aside" in view.aside_button.text()
        with qtbot.waitSignal(w.read_finished, timeout=20_000):
            view.aside_button.click()
        qtbot.waitUntil(lambda: any(r["reviewer"] == "carol" and r["status"] == "set aside"
                                    for r in view.people.records), timeout=20_000)
        standing = "SELECT COUNT(*) FROM human_ratings WHERE reviewer = 'carol' AND withdrawn_at IS NULL"
        assert w.project.reader().execute(standing).fetchone()[0] == 0
        assert "carol" not in [r.reviewer for r in view.report.reviewers]    # her ratings count nowhere
        w.state.undo_stack.undo()
        qtbot.waitUntil(lambda: w.project.reader().execute(standing).fetchone()[0] == 12, timeout=20_000)
    finally:
        close_window(qtbot, w)
