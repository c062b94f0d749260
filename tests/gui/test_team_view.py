"""The Team page on two reviewers' imported packs: a row per reviewer with agreement and CIs, the pair's kappa and
alpha, the disagreements queued; a lead settles one with a reason and it leaves the queue. With
RAGEVAL_SCREENSHOT_DIR set, the page is saved there (the README's picture), light and dark."""

from __future__ import annotations

import shutil

from PySide6.QtCore import Qt

from rageval_desktop.core.review import packs
from rageval_desktop.core.store.project import Project
from rageval_desktop.gui.main_window import settings
from tests.conftest import team_packs
from tests.gui.conftest import close_window, open_window, save_shots


def test_the_team_page_shows_reviewers_pairs_and_a_queue_a_lead_settles(qtbot, demo_file, tmp_path):
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    with Project.open(copy) as p:
        sample, made = team_packs(p, tmp_path / "packs", 20)
        for info in made:
            pack = packs.Pack(info.path)
            for i, row in enumerate(sample.row_ids):
                truth = i % 5 + 1
                far = info.reviewer == "bob" and i % 4 == 0      # bob reads every fourth answer very differently
                score = (truth + 3 - 1) % 5 + 1 if far else truth
                pack.rate(row, 0, float(score), seconds=3.0 if info.reviewer == "ann" else 6.5,
                          comment="misses the point" if far else None)
            packs.import_pack(p, info.path)
    settings().setValue("reviewer", "lee")
    w = open_window(qtbot, copy)
    try:
        w.resize(1280, 720)
        w.select_nav("team")
        view = w.team_view
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
