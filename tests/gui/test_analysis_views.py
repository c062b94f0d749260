"""Dashboard, compare, failure browser and export, driven through the window on the judged demo project."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt

from tests.gui.conftest import close_window, open_window, save_shots


@pytest.fixture
def window(qtbot, demo_file, tmp_path):
    copy = tmp_path / "demo.rageval"   # the demo ships judged by its offline judges, with synthetic ratings
    shutil.copy(demo_file, copy)
    w = open_window(qtbot, copy)
    yield w
    close_window(qtbot, w)


def open_view(window, qtbot, kind):
    """Go to a page and wait for its read (the run table's own reads may land meanwhile)."""
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == kind) as done:
        window.select_nav(kind)
    assert done.args == [kind]


def set_drop(window, qtbot, view, value: float) -> None:
    """Set the Compare page's drop limit and wait for the gate's verdict at it (read in the helper process)."""
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == "compare-verdict"):
        view.drop.setValue(value)


def test_dashboard_table_and_chart(window, qtbot):
    open_view(window, qtbot, "dashboard")
    view = window.page("dashboard")
    assert window.pages.currentWidget() is view
    slices = [view.model.record(r)["slice"] for r in range(view.model.rowCount())]
    assert slices[0] == "all" and "keyword-heavy" in slices
    headers = [view.model.headerData(c, Qt.Orientation.Horizontal)
               for c in range(view.model.columnCount())]
    assert "hit@5" in headers and "correctness_binary" in headers
    assert not view.plot.pixmap().isNull() and view.plot.pixmap().width() > 400
    col = headers.index("correctness_binary")
    tip = view.model.index(len(slices) - 1, col).data(Qt.ItemDataRole.ToolTipRole)
    assert "95% CI [" in tip and "judges: answer-recall" in tip
    # a judge the audit would retire is counted until the audit is recorded, and the note says so (was: "not yet
    # confirmed", issue 31); columns say what they mean
    assert "The audit would retire minilm-similarity (n=144): still counted until Audit › Record audit and apply" \
        in view.note.text()
    # answer-recall agrees well but its anytime interval still reaches below 0.7 (issue 27): flagged, not kept
    assert "answer-recall (needs more ratings, n=144)" in view.note.text()
    col = headers.index("hit@5")
    assert "any gold chunk in the top 5" in view.model.headerData(col, Qt.Orientation.Horizontal,
                                                                  Qt.ItemDataRole.ToolTipRole)


def test_compare_shows_deltas_and_gate_verdict(window, qtbot):
    open_view(window, qtbot, "compare")
    view = window.page("compare")
    assert (view.base_box.currentData(), view.cand_box.currentData()) == ("v1", "v2")
    records = [view.model.record(r) for r in range(view.model.rowCount())]
    kw = next(r for r in records if r["slice"] == "keyword-heavy")
    assert kw["hit@5"] < 0
    # 12 questions a slice: the keyword-heavy drop (-33 points) is not shown at a 5% family-wise error, nor ruled
    # out: the gate is not decision-grade (issue 44: it "passed"), says which cells it could not settle, with the
    # drop each could have detected, and what would settle them
    assert "The gate cannot decide yet (" in view.note.text() and "undecided" in view.note.text()
    assert "As rageval gate --max-slice-drop 2:" in view.note.toolTip() and "detects ≥" in view.note.toolTip()
    assert "rageval gate plan" in view.note.text()
    tip = view.model.index(records.index(kw), [k for k, _ in view.model.columns].index("hit@5")).data(
        Qt.ItemDataRole.ToolTipRole)
    assert "95% CI [" in tip and "n=" in tip
    set_drop(window, qtbot, view, 100)      # every retrieval cell settles; the unaudited judges still cannot gate
    assert "not evaluated: correctness, correctness_binary" in view.note.text()
    assert "Not evaluated: correctness — not licensed to gate" in view.badge.toolTip()
    assert "audit the unlicensed judges (Audit page)" in view.note.text()
    assert view.badge.property("outcome") == "not_decision_grade"
    from rageval_desktop.core.metrics import gate_config

    config = gate_config.from_dict({"format": "rageval-gate-config", "version": 1, "cells": [
        {"slice": "all", "metric": "hit@5", "tolerance": 45}, {"slice": "all", "metric": "mrr", "tolerance": 40}],
        "not_gated": {"correctness": "unaudited", "correctness_binary": "unaudited"}})
    gate_config.save(window.project, config)
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        view.compute()
    # (an amber pass: two slices not gated on their own dropped beyond doubt — issue 73)
    assert view.badge.text().startswith("PASS") and view.badge.property("outcome") == "pass_with_drops"
    assert "The gate passes: " in view.note.text()
    assert "As rageval gate (configuration: the project's gate configuration):" in view.note.toolTip()
    assert not view.drop.isEnabled()


def test_compare_verdict_is_the_cli_gate(window, qtbot):
    """Was: the page had its own rule (slices only, 10 drops) and disagreed with `rageval gate` (14)."""
    from rageval_desktop.core.metrics.gate import gate
    from rageval_desktop.core.metrics.gate_text import headline

    open_view(window, qtbot, "compare")
    view = window.page("compare")
    view.drop.setValue(2)
    cli = gate(window.project, "v1", "v2", max_slice_drop=2, max_aggregate_drop=2)
    assert headline(cli) in view.note.text() and cli.decision == "not_decision_grade"
    # the verdict is a badge, in words (issue 31: it was grey hint text)
    assert view.badge.text().startswith("CANNOT DECIDE YET  ·  ")
    assert view.badge.property("outcome") == "not_decision_grade"
    set_drop(window, qtbot, view, 100)
    wide = gate(window.project, "v1", "v2", max_slice_drop=100, metrics=["hit@5", "mrr"])
    assert wide.decision == "pass" and view.badge.property("outcome") == "not_decision_grade"   # + the judges
    # each cell says baseline -> candidate (delta); colour and a mark only where the CI excludes 0
    model = view.model
    col = [k for k, _ in model.columns].index("hit@5")
    cells = {model.record(r)["slice"]: model.index(r, col) for r in range(model.rowCount())}
    for name, index in cells.items():
        cell = cli.comparison["slices"][name]["hit@5"]
        text = index.data()
        assert text.startswith(f"{cell['baseline']:.1f} → {cell['candidate']:.1f}")
        within = cell["ci"][0] <= 0 <= cell["ci"][1]
        assert (index.data(Qt.ItemDataRole.ForegroundRole) is None) == (within or cell["delta"] == 0), name
        assert ("▲" in text or "▼" in text) == (not within), name


@pytest.mark.slow
def test_compare_corrected_by_ratings_is_the_cli_ppi_gate(window, qtbot):
    from rageval_desktop.core.metrics.gate import gate
    from rageval_desktop.core.metrics.gate_text import headline

    open_view(window, qtbot, "compare")
    view = window.page("compare")
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        view.estimator.setCurrentIndex(view.estimator.findData("ppi"))
    records = [view.model.record(r) for r in range(view.model.rowCount())]
    cli = gate(window.project, "v1", "v2", max_slice_drop=2, estimator="ppi")
    kw = next(r for r in records if r["slice"] == "keyword-heavy")
    assert kw["correctness"] == cli.comparison["slices"]["keyword-heavy"]["correctness"]["delta"]
    column = [k for k, _ in view.model.columns].index("correctness")
    tip = view.model.index(records.index(kw), column).data(Qt.ItemDataRole.ToolTipRole)
    assert "(PPI)" in tip
    assert headline(cli) in view.note.text()


def test_failure_browser_filters_and_samples(window, qtbot):
    open_view(window, qtbot, "failures")
    view = window.page("failures")
    # it opens on what the licensed judges say (issue 48: 70 of 72 rows "failing", 40 of them by the judge the audit
    # retires): on the demo no judge holds a licence yet, so only retrieval and reranker failures, and it says why
    assert view.judges_box.currentData() == "licensed"
    assert {view.model.record(r)["failure"] for r in range(view.model.rowCount())} <= {"retrieval", "reranker"}
    assert "no judge holds a licence yet" in view.note.text()
    licensed = view.model.rowCount()
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        view.judges_box.setCurrentIndex(view.judges_box.findData("all"))
    total = view.model.rowCount()
    assert total > max(10, licensed)
    assert any("minilm-similarity" in view.model.record(r)["judges"].split(", ") for r in range(total))
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        view.class_box.setCurrentIndex(view.class_box.findData("retrieval"))
    assert {view.model.record(r)["failure"] for r in range(view.model.rowCount())} == {"retrieval"}
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        view.class_box.setCurrentIndex(0)
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        view.sample_button.click()
    assert view.model.rowCount() == 10
    view.table.selectRow(0)
    qtbot.waitUntil(lambda: "QUESTION" in view.detail.toPlainText(), timeout=30_000)     # read on the read lane


def test_export_writes_the_report_of_the_comparison(window, qtbot, tmp_path):
    open_view(window, qtbot, "compare")
    out = tmp_path / "pr.md"
    with qtbot.waitSignal(window.task_finished, timeout=30_000) as done:
        window.files.export_report(str(out))
    assert done.args == ["done"]
    text = out.read_text()
    assert "RAG evaluation: v2 vs v1" in text and "### Against v1" in text


@pytest.mark.slow      # heavy (2-3 s): make test stays near 90 s; CI runs it
def test_the_chosen_run_carries_across_views(window, qtbot):
    window.select(run="v1")
    open_view(window, qtbot, "dashboard")
    assert window.page("dashboard").run_box.currentData() == "v1"
    open_view(window, qtbot, "failures")
    assert window.page("failures").run_box.currentData() == "v1"
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        window.page("failures").run_box.setCurrentIndex(window.page("failures").run_box.findData("v2"))
    open_view(window, qtbot, "dashboard")
    assert window.page("dashboard").run_box.currentData() == "v2"
    open_view(window, qtbot, "compare")
    compare = window.page("compare")
    assert (compare.cand_box.currentData(), compare.base_box.currentData()) == ("v2", "v1")


@pytest.mark.slow
def test_dashboard_refreshes_when_judgments_arrive(window, qtbot):
    """Staying on the dashboard: judgments written meanwhile show up without any navigation."""
    from rageval_desktop.core.base.clock import utcnow
    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.review.agreement import set_status

    set_status(window.project, "minilm-similarity", "retired", "the demo's audit says so")  # correctness: unjudged
    judge = add_judge(window.project, "f1-correct", "correctness", "lexical")
    open_view(window, qtbot, "dashboard")
    assert "correctness" not in window.page("dashboard").summary["judge_metrics"]
    rows = [r[0] for r in window.project.reader().execute(
        "SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id WHERE r.name = 'v2'")]
    with window.project.write("fake judgments", changed=("judgments",)) as w:
        w.executemany("INSERT INTO judgments (judge_id, run_row_id, idem_key, status, score, created_at) "
                      "VALUES (?, ?, ?, 'ok', 5, ?)", [(judge.id, r, f"x{r}", utcnow()) for r in rows])
    assert window.pages.currentWidget() is window.page("dashboard")
    qtbot.waitUntil(lambda: "correctness" in window.page("dashboard").summary["judge_metrics"], timeout=20_000)
    assert window.page("dashboard").summary["slices"]["all"]["correctness"] == 100.0


def test_the_window_fits_a_1024_px_screen(window, qtbot):
    """Was: once a project was open, the window could not be narrower than 1402 px (rows of buttons)."""
    for kind in ("judges", "jobs", "dashboard", "compare", "failures", "review", "audit"):
        window.page(kind)
    window.select_nav("golden")
    assert window.minimumSizeHint().width() <= 1024
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.width() <= 1024, timeout=5_000)
    from rageval_desktop.gui.views.common import ButtonBar

    bars = window.rows.golden_bar.findChildren(ButtonBar)
    assert bars and bars[0].width() < sum(b.sizeHint().width() for b in window.rows.golden_bar.buttons.values())


@pytest.mark.slow      # heavy (2-3 s): make test stays near 90 s; CI runs it
def test_compare_keeps_its_own_runs_when_another_page_chooses_one(window, qtbot):
    """Was: choosing v1 on the Dashboard turned Compare into 'baseline v2, candidate v1' and a failing gate."""
    open_view(window, qtbot, "dashboard")
    dash = window.page("dashboard")
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        dash.run_box.setCurrentIndex(dash.run_box.findData("v1"))
    assert window.current_run == "v1"
    open_view(window, qtbot, "compare")
    view = window.page("compare")
    assert (view.base_box.currentData(), view.cand_box.currentData()) == ("v1", "v2")


def test_compare_with_the_same_run_twice_says_to_choose_two_not_a_table_of_zeros(window, qtbot):
    """Was: both boxes on v2 (or a project with one run) showed every delta +0.0, wide intervals, a gate 'not
    decision-grade' and what a gate on each judge would have shipped — of a run against itself."""
    open_view(window, qtbot, "compare")
    view = window.page("compare")
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == "compare"):
        view.base_box.setCurrentIndex(view.base_box.findData("v2"))
    assert view.badge.text() == "Choose two runs" and view.model.rowCount() == 0 and not view.table.isVisible()
    assert "both v2: choose a different run" in view.note.text()
    assert not view.record_button.isEnabled() and not view.shipped_view.isVisible()
    assert view.plot.regions == []                        # nothing to click
    save_shots(qtbot, window, "compare-same-run")
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == "compare"):
        view.base_box.setCurrentIndex(view.base_box.findData("v1"))
    assert view.model.rowCount() > 0 and view.table.isVisible() and view.record_button.isEnabled()
    assert view.badge.text() != "Choose two runs"


def test_judges_run_picker_follows_the_current_run(window, qtbot):
    """Was: it started on v1 while every other page showed v2, so 'Run all active judges' judged the wrong run."""
    window.select_nav("judges")
    assert window.page("judges").run_box.currentData() == "v2"   # the latest run by default
    assert window.rows_label.text() == ""                      # was "72 rows" on pages that show no rows
    window.current_run = "v1"
    window.select_nav("jobs")
    window.select_nav("judges")
    assert window.page("judges").run_box.currentData() == "v1"


def test_charts_fit_their_pane_and_a_click_opens_the_failures(window, qtbot):
    from PySide6.QtCore import QPoint

    window.resize(1280, 720)
    open_view(window, qtbot, "dashboard")
    view = window.page("dashboard")
    plot = view.plot
    pixmap = plot.pixmap()
    assert abs(pixmap.width() - plot.width()) <= 2 and abs(pixmap.height() - plot.height()) <= 2   # axes in view
    assert view.baseline is not None and view.baseline["run"] == "v1"     # the baseline run is overlaid
    assert "v1 (grey) beside v2" in view.note.text()
    assert pixmap.toImage().pixelColor(2, 2).alpha() == 0                 # transparent: no white block in dark
    bar = next(r for r in plot.regions if r.slice == "keyword-heavy" and r.metric == "correctness")
    with qtbot.waitSignal(window.read_finished, timeout=30_000) as done:
        qtbot.mouseClick(plot, Qt.MouseButton.LeftButton, pos=QPoint(int((bar.x0 + bar.x1) / 2),
                                                                     int((bar.y0 + bar.y1) / 2)))
    assert done.args == ["failures"]
    failures = window.page("failures")
    assert window.pages.currentWidget() is failures
    assert window.rows.slice_box.currentData() == "keyword-heavy"
    assert failures.metric_box.currentData() == "correctness" and failures.run_box.currentData() == "v2"
    assert failures.model.rowCount() > 0
    assert {failures.model.record(r)["slice"] for r in range(failures.model.rowCount())} == {"keyword-heavy"}
    assert all("correctness" in failures.model.record(r)["judges__tip"].split(", ")
               for r in range(failures.model.rowCount()))
    assert all("minilm-similarity" in failures.model.record(r)["judges"].split(", ")
               for r in range(failures.model.rowCount()))                     # the judges are named, not metrics
    assert "correctness under 4 of 5 (minilm-similarity)" in failures.note.text()   # what a failure is
    # the note counts the chosen slice, not the whole run (issue 48: it mixed the slice's rows with the run's)
    assert "12 rows in this slice of the run" in failures.note.text() and "72 rows" not in failures.note.text()


def test_a_retrieval_bar_opens_exactly_its_metrics_failures(window, qtbot):
    """Was: a hit@5 bar opened the failures of any class, 3 of 11 of them hits at 5 (issue 31)."""
    from PySide6.QtCore import QPoint

    window.resize(1280, 720)
    open_view(window, qtbot, "dashboard")
    plot = window.page("dashboard").plot
    bar = next(r for r in plot.regions if r.slice == "easy" and r.metric == "hit@5")
    with qtbot.waitSignal(window.read_finished, timeout=30_000):
        qtbot.mouseClick(plot, Qt.MouseButton.LeftButton, pos=QPoint(int((bar.x0 + bar.x1) / 2),
                                                                     int((bar.y0 + bar.y1) / 2)))
    failures = window.page("failures")
    assert failures.metric_box.currentData() == "hit@5"
    ranks = [failures.model.record(r)["first_gold_rank"] for r in range(failures.model.rowCount())]
    assert ranks and all(rank is None or rank > 5 for rank in ranks)          # every row listed misses at 5
    from rageval_desktop.core.metrics.dashboard import dashboard

    easy = dashboard(window.project, "v2")["slices"]["easy"]
    assert len(ranks) == round(easy["n_with_gold"] * (1 - easy["hit@5"] / 100))   # and every miss is listed
    assert f"{len(ranks)} of {len(ranks)} rows failing hit@5 in slice easy shown" in failures.note.text()


@pytest.mark.slow
def test_the_forest_plot_keeps_its_axes_in_view_and_redraws_on_resize(window, qtbot):
    window.resize(1280, 720)
    open_view(window, qtbot, "compare")
    plot = window.page("compare").plot
    assert plot.pixmap().height() <= plot.height() + 2          # was ~900 px tall: the axis below the fold
    assert {r.metric for r in plot.regions} >= {"hit@5", "mrr"} and len(plot.regions) >= 7 * 4
    before = plot.pixmap().size()
    window.resize(1500, 900)
    qtbot.waitUntil(lambda: plot.pixmap().size() != before, timeout=10_000)
    assert abs(plot.pixmap().width() - plot.width()) <= 2


def test_every_summary_table_sorts_by_a_header_click_and_all_stays_first(window, qtbot):
    """'all' first: at 720 px it was below the fold (issue 31)."""
    open_view(window, qtbot, "dashboard")
    view = window.page("dashboard")
    model = view.model
    order = [model.record(r)["slice"] for r in range(model.rowCount())]
    assert order[0] == "all" and order[1] == "easy"           # the model's order until a header is clicked
    col = [k for k, _ in model.columns].index("hit@5")
    view.table.horizontalHeader().setSortIndicator(col, Qt.SortOrder.DescendingOrder)
    values = [model.record(r)["hit@5"] for r in range(1, model.rowCount())]
    assert values == sorted(values, reverse=True) and model.record(0)["slice"] == "all"
    # a deltas table's colours keep their contrast in the dark theme
    from PySide6.QtWidgets import QApplication

    from rageval_desktop.gui.appearance import verdict_colours

    app = QApplication.instance()
    app.setProperty("dark", True)
    try:
        assert verdict_colours() == ("#f28b82", "#81c995")
    finally:
        app.setProperty("dark", False)


def test_compare_plans_the_gate_and_decides_under_the_saved_plan(window, qtbot, tmp_path):
    """Issue 44: the Compare page plans as `rageval gate plan` does (the same cells and tolerances), and once the
    plan is saved the page's verdict is the configured gate's, as the CLI decides it."""
    from rageval_desktop.core.metrics import gate_config
    from rageval_desktop.core.metrics.gate_plan import plan
    from rageval_desktop.gui.views.gate_plan_dialog import GatePlanDialog

    open_view(window, qtbot, "compare")
    view = window.page("compare")
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == "gate-plan"):
        dialog = GatePlanDialog(window.state, "v1", ["v1", "v2"], "v2", view)
        # issue 77: the wait is said where the plan will appear (it was "Planning…" under an empty table for 6-9 s)
        assert not dialog.waiting.isHidden() and dialog.table.isHidden()
        assert "Planning the gate" in dialog.waiting.text()
    assert dialog.waiting.isHidden() and not dialog.table.isHidden()
    records = [dialog.model.record(r) for r in range(dialog.model.rowCount())]
    cli = plan(window.project, "v1", like="v2")
    assert len(records) == len(cli["cells"]) and dialog.save_button.isEnabled()
    gated = {(r["slice"], r["metric"]): r["tolerance"] for r in records if r["gated"] == "yes"}
    assert gated == {k: r.tolerance for k, r in cli["config"].cells.items()} and ("all", "hit@5") in gated
    assert "Assumed: pull requests change answers as much as 'v2' did" in dialog.summary.text()
    for width, height in ((1024, 600), (900, 520)):
        dialog.resize(width, height)
        save_shots(qtbot, dialog, f"gate-plan-{width}")
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == "compare"):
        dialog.save()
    saved = gate_config.saved(window.project)
    assert saved is not None and {k: r.tolerance for k, r in saved.cells.items()} == gated
    assert "configuration: the project's gate configuration" in view.note.toolTip()
    assert not view.drop.isEnabled()


def test_a_new_drop_limit_shows_no_verdict_until_its_own_arrives(window, qtbot):
    """The verdict at a new limit is computed in the helper process: meanwhile the badge shows none (it showed the
    last limit's, and a PASS there is none at the new one)."""
    open_view(window, qtbot, "compare")
    view = window.page("compare")
    assert view.badge.property("outcome") == "not_decision_grade"
    with qtbot.waitSignal(window.read_finished, timeout=30_000, check_params_cb=lambda page: page == "compare-verdict"):
        view.drop.setValue(100)
        assert view.badge.property("outcome") == "pending" and "at 100 points" in view.badge.text()
        assert "Not decision-grade" not in view.note.text() and "at 100 points" in view.note.text()
    assert view.badge.property("outcome") == "not_decision_grade"


def test_a_plan_that_lands_after_its_dialog_was_deleted_is_dropped(window, qtbot):
    """The gate plan is read on the read lane: a dialog deleted meanwhile (its page rebuilt, the window closing) had
    its table filled after it was gone, a RuntimeError in Qt's event loop (pytest-qt fails the test on it)."""
    import shiboken6

    from rageval_desktop.gui import workers
    from rageval_desktop.gui.views.gate_plan_dialog import GatePlanDialog

    open_view(window, qtbot, "compare")
    dialog = GatePlanDialog(window.state, "v1", ["v1", "v2"], "v2", window.page("compare"))    # planning ...
    shiboken6.delete(dialog)                                                                  # ... when it goes
    workers.pool().waitForDone()
    qtbot.wait(300)
    assert not shiboken6.isValid(dialog)


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
def test_a_pass_beside_ungated_drops_is_amber_and_says_what_it_covered(window, qtbot, size):
    """Issue 73: the demo's planned gate passed green ("PASS · 2 of 2 shown safe") above two slices drawn in red at
    -33.3 points, naming neither the tolerances nor the slices left ungated."""
    from rageval_desktop.core.metrics import gate_config
    from rageval_desktop.core.metrics.gate_plan import plan

    window.resize(*size)
    gate_config.save(window.project, plan(window.project, "v1", like="v2", metrics=["hit@5", "mrr"],
                                          max_tolerance=60)["config"])
    open_view(window, qtbot, "compare")
    view = window.page("compare")
    qtbot.waitUntil(lambda: view.badge.property("outcome") not in ("pending", ""), timeout=30_000)
    assert view.badge.property("outcome") == "pass_with_drops"
    assert view.badge.text() == ("PASS  ·  3 of 3 shown safe · within 37–56.5 points · 6 slice(s) not gated · 2 of "
                                 "them shown to drop")
    assert view.badge.width() >= view.badge.sizeHint().width()       # the whole banner, not cut at the right
    note = view.note.text()
    assert "not gated, shown to drop: time-sensitive hit@5 -33.3 [-64.6, -2.0]" in note
    assert "not gated: 6 slice(s) — 'easy', 'edge', 'adversarial', 'time-sensitive', 'multi-hop'" in note
    assert "Covered: gated within tolerances (points): 'all' hit@5 56.5, mrr 52.5, coverage 37" in note
    assert "metrics not gated: correctness" in note
    assert not view.drop.isEnabled()
    save_shots(qtbot, window, f"compare-amber-pass-{size[0]}")


def test_a_declared_retrieval_metric_reaches_the_pages(qtbot, demo_file, tmp_path, monkeypatch):
    """docs/architecture.md's metric recipe, in the app: R-precision declared once (tests/test_recipes.py) is a
    dashboard column with its label and definition, a chart bar, and a failing-rows choice. (The pages' numbers are
    read here: the helper process imports the registry as the app ships it.)"""
    from rageval_desktop.core.metrics import retrieval
    from rageval_desktop.gui import chart_process
    from tests.test_recipes import R_PRECISION

    monkeypatch.setattr(retrieval, "REGISTRY", dict(retrieval.REGISTRY))
    retrieval.register(R_PRECISION)
    monkeypatch.setattr(chart_process, "_POOL", None)      # no helper: the pages' numbers are worked out here
    monkeypatch.setattr(chart_process, "_BROKEN", True)
    copy = tmp_path / "demo.rageval"
    shutil.copy(demo_file, copy)
    window = open_window(qtbot, copy)
    try:
        open_view(window, qtbot, "dashboard")
        view = window.page("dashboard")
        headers = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())]
        col = headers.index("R-precision")
        assert "top R passages" in view.model.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert view.model.record(0)["rprec"] == view.summary["slices"]["all"]["rprec"]
        open_view(window, qtbot, "failures")
        box = window.page("failures").metric_box
        assert box.itemText(box.findData("hit@10")) == "failing hit@10 (no gold chunk in the top 10)"
        assert box.itemText(box.findData("mrr")) == "failing mrr (no gold chunk retrieved)"
        assert box.itemText(box.findData("rprec")) == "failing rprec (no gold chunk in the top R)"
    finally:
        close_window(qtbot, window)
