"""The detail pane of a row judged by the gold-free judges: nuggets with their importance and assignment, each
citation with its support (a citation of a passage that was not retrieved says so), UMBRELA grades per passage.
With RAGEVAL_SCREENSHOT_DIR set, the pane is saved there (the README's picture) at 1280x720, light and dark."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from rageval_desktop.core.importers import import_run
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.store.project import Project
from tests.core.test_gold_free import ORE, Script, add_gold_free_judges
from tests.gui.conftest import close_window, open_window, select_row, settle
from tests.support.fake_openai import FakeOpenAI


def judged_project(path: Path) -> Path:
    project = Project.create(path)
    import_run(project, ORE, "ore")
    with FakeOpenAI(Script()) as server:
        add_gold_free_judges(project, server)
        run_judge_job(project, JobSpec(run="ore"))
    project.close()
    return path


def test_the_detail_pane_shows_nuggets_and_citations(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    w = open_window(qtbot, judged_project(tmp_path / "ore.rageval"))
    try:
        w.resize(1280, 720)
        w.select(run="ore")
        settle(qtbot, w)
        select_row(w, qtbot, 0)
        text = w.rows.detail.toPlainText()
        assert "nug · nuggets: " in text and "nuggets (generated list):" in text
        assert "◐ [okay] Blackholes are dense — partial_support" in text
        assert "vital —  ·  weighted 50" in text                          # no vital nugget: unknown, not 0
        assert "[4] My name is x — no_support (cites [4], which is not among the retrieved passages)" in text
        assert "passage #1" in text                                       # UMBRELA grades stay per passage
        assert "nuggets · passage" not in text                            # a nugget is not a passage
        shots = os.environ.get("RAGEVAL_SCREENSHOT_DIR")
        if shots:
            from rageval_desktop.gui.appearance import apply_appearance, settings

            cursor = w.rows.detail.document().find("RETRIEVED PASSAGES")   # scrolled so the nuggets and citations show
            cursor.clearSelection()
            w.rows.detail.setTextCursor(cursor)
            w.rows.detail.ensureCursorVisible()
            w.grab().save(str(Path(shots) / "detail-nuggets.png"))
            before = settings().value("theme", "system")
            settings().setValue("theme", "dark")
            apply_appearance()
            QApplication.processEvents()
            w.grab().save(str(Path(shots) / "detail-nuggets-dark.png"))
            settings().setValue("theme", before)
            apply_appearance()
    finally:
        close_window(qtbot, w)


@pytest.mark.slow
def test_the_dashboard_draws_box_plots_of_the_gold_free_metrics(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    w = open_window(qtbot, judged_project(tmp_path / "ore.rageval"))
    try:
        w.resize(1280, 720)
        with qtbot.waitSignal(w.read_finished, timeout=20_000):
            w.select_nav("dashboard")
        view = w.page("dashboard")
        assert "nugget_weighted" in view.summary["distributions"]["ore"]
        bars = view.plot.pixmap().toImage()
        assert view.plot.regions                                   # the slice bars can be clicked
        view.chart_kind.setCurrentIndex(view.chart_kind.findData("boxes"))
        qtbot.waitUntil(lambda: view.plot.pixmap().toImage() != bars, timeout=20_000)
        assert view.plot.regions == []
        shots = os.environ.get("RAGEVAL_SCREENSHOT_DIR")
        if shots:
            QApplication.processEvents()
            w.grab().save(str(Path(shots) / "dashboard-boxes.png"))
    finally:
        close_window(qtbot, w)


def test_review_rates_one_nugget_at_a_time_blind_with_n_p_f(qtbot, tmp_path, monkeypatch):
    """A nuggets sample in Review: the nugget is boxed above its row, the judge's assignment stays hidden until
    rated, `p` rates it partial (0.5) with its text, `s` still skips, and the reveal names the judge's label."""
    from rageval_desktop.core.review.sampling import create_sample
    from rageval_desktop.gui.main_window import settings

    monkeypatch.setenv("JUDGE_KEY", "sk-test")
    path = judged_project(tmp_path / "ore.rageval")
    with Project.open(path) as p:
        sample = create_sample(p, "ore", "nuggets", size=6, seed=2)
    settings().setValue("reviewer", "kim")
    w = open_window(qtbot, path)
    try:
        w.resize(1280, 720)
        w.select_nav("review")
        view = w.page("review")
        qtbot.waitUntil(lambda: view.sample is not None and view.sample.id == sample.id, timeout=10_000)
        view.setFocus()
        assert [b.text() for b in view.scores.buttons] == ["not_support  [&n]", "partial_support  [&p]",
                                                          "support  [&f]"]
        text = view.detail.toPlainText()
        key = sample.keys[0]
        assert "RATE THIS NUGGET · Nugget" in text and key in text
        assert "JUDGMENTS" not in text and "support" not in text.split("QUESTION")[0].replace(key, "")
        assert "nugget 1 of 6" in view.progress_label.text()
        shots = os.environ.get("RAGEVAL_SCREENSHOT_DIR")
        if shots:
            QApplication.processEvents()
            w.grab().save(str(Path(shots) / "review-nugget.png"))
        with qtbot.waitSignal(view.rated, timeout=10_000):
            qtbot.keyClicks(view, "p")
        stored = w.project.reader().execute(
            "SELECT run_row_id, passage_rank, item_key, score, skipped FROM human_ratings").fetchall()
        assert stored == [(sample.row_ids[0], sample.items[0], key, 0.5, 0)]
        assert "Nugget 1 saved: you 0.5 partial_support · nug " in view.reveal.text()
        with qtbot.waitSignal(view.rated, timeout=10_000):
            qtbot.keyClicks(view, "s")                      # s skips: it is not a score key on this scale
        assert w.project.reader().execute("SELECT skipped FROM human_ratings ORDER BY id DESC").fetchone() == (1,)
        if shots:
            view.index = 0
            view.show_row()
            settings().setValue("theme", "dark")
            from rageval_desktop.gui.appearance import apply_appearance

            apply_appearance()
            QApplication.processEvents()
            w.grab().save(str(Path(shots) / "review-nugget-dark.png"))
            settings().setValue("theme", "system")
            apply_appearance()
    finally:
        close_window(qtbot, w)
