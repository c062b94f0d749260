"""Issue 47 in the app: the judge the audit would retire keeps a selective licence, the Judges page says what it
gates, the dashboard what share of each slice it decides, and Compare's "selective judge + desk" reads each run's
pass rate from the judge and the desk, saying where every number came from — as `rageval gate --estimator selective`
does."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt

from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.reports.plots import forest_height
from rageval_desktop.core.review import agreement, selective
from rageval_desktop.core.review.licence import record_audit
from rageval_desktop.core.store.project import Project
from tests.gui.conftest import close_window, open_window, save_shots


@pytest.fixture
def walked(demo_file, tmp_path):
    """The README's walk-through: the audit recorded, each run's abstentions drawn for the desk (the demo's reviewer
    rated every row already)."""
    path = tmp_path / "alone.rageval"
    shutil.copy(demo_file, path)
    with Project.open(path) as p:
        judge = get_judge(p, "minilm-similarity")
        assert record_audit(p, agreement.agreement(p, judge)) == "kept selective"
        for run in ("v1", "v2"):
            selective.abstained_sample(p, judge, run)
    return path


def walk(qtbot, w, size: tuple[int, int]) -> None:
    """One size of the walk-through: the Judges page, the dashboard of v2, Compare with the selective estimator."""
    from rageval_desktop.core.metrics.gate import gate

    w.resize(*size)
    with qtbot.waitSignal(w.read_finished, timeout=30_000):
        w.select_nav("judges")
    judges = w.page("judges")
    qtbot.waitUntil(lambda: all(r["licence"] != "licence: reading…" for r in judges.model.records), timeout=20_000)
    shown = {r["name"]: r["licence__tip"] for r in judges.model.records}
    assert shown["minilm-similarity"].startswith("selective: gates only the rows it decides")
    save_shots(qtbot, w, f"selective-judges-{size[0]}")
    w.select(run="v2")
    with qtbot.waitSignal(w.read_finished, timeout=30_000, check_params_cb=lambda page: page == "dashboard"):
        w.select_nav("dashboard")
    dash = w.page("dashboard")
    assert w.pages.currentWidget() is dash
    qtbot.waitUntil(lambda: dash.summary is not None and dash.summary["run"] == "v2", timeout=30_000)
    assert (
        "correctness from minilm-similarity (selective licence): it decides 40% of this run's rows" in dash.note.text()
    )
    records = [dash.model.record(r) for r in range(dash.model.rowCount())]
    easy = next(i for i, r in enumerate(records) if r["slice"] == "easy")
    column = [k for k, _ in dash.model.columns].index("correctness")
    tip = dash.model.index(easy, column).data(Qt.ItemDataRole.ToolTipRole)
    assert "minilm-similarity decides 8% of this slice's rows" in tip
    save_shots(qtbot, w, f"selective-dashboard-{size[0]}")
    with qtbot.waitSignal(w.read_finished, timeout=30_000, check_params_cb=lambda page: page == "compare"):
        w.select_nav("compare")
    view = w.page("compare")
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    with qtbot.waitSignal(w.read_finished, timeout=30_000):
        view.estimator.setCurrentIndex(view.estimator.findData("selective"))
    qtbot.waitUntil(lambda: view.result is not None and view.result["estimator"] == "selective", timeout=30_000)
    cli = gate(w.project, "v1", "v2", estimator="selective")
    whole = view.result["slices"]["all"]["correctness"]
    assert whole["delta"] == cli.comparison["slices"]["all"]["correctness"]["delta"]
    records = [view.model.record(r) for r in range(view.model.rowCount())]
    row = next(i for i, r in enumerate(records) if r["slice"] == "all")
    column = [k for k, _ in view.model.columns].index("correctness")
    tip = view.model.index(row, column).data(Qt.ItemDataRole.ToolTipRole)
    assert "pass rates: minilm-similarity decides 50% / 40% of the rows" in tip
    assert "--estimator selective" in view.note.toolTip()
    unlicensed = [u["metric"] for u in view.result["licensing"]["unlicensed"]]
    assert "correctness" not in unlicensed and "correctness_binary" in unlicensed  # the latter: no audit
    save_shots(qtbot, w, f"selective-compare-{size[0]}")
    view.estimator.setCurrentIndex(view.estimator.findData("mean"))
    qtbot.waitUntil(lambda: view.result is not None and view.result["estimator"] == "mean", timeout=30_000)


@pytest.mark.slow  # three pages read and drawn, light and dark (about 6 s)
def test_the_app_walks_from_a_judge_that_cannot_gate_to_one_that_gates_the_rows_it_decides(qtbot, walked):
    w = open_window(qtbot, walked)
    try:
        for size in ((1280, 720), (1024, 768)):
            walk(qtbot, w, size)
    finally:
        close_window(qtbot, w)


def test_the_detail_pane_says_whether_the_selective_judge_decides_a_row_or_leaves_it_to_people(qtbot, walked):
    with Project.open(walked, read_only=True) as p:
        judge = get_judge(p, "minilm-similarity")
        routed = selective.route(p, [judge], [selective.select_for(p, judge).level], "v2")
    decided = next(r for r, by in routed.items() if by == "minilm-similarity")
    left = next(r for r, by in routed.items() if by is None)
    w = open_window(qtbot, walked)
    try:
        qtbot.waitUntil(lambda: "minilm-similarity" in w.rows.selective, timeout=20_000)
        w.resize(1024, 768)
        for row, said in (
            (decided, "decides this row alone: confidence"),
            (left, "leaves this row to people: confidence"),
        ):
            with qtbot.waitSignal(w.rows.row_shown, timeout=30_000, check_params_cb=lambda i, row=row: i == row):
                w.show_run_row("v2", row)
            text = w.rows.detail.toPlainText()
            line = next(x for x in text.splitlines() if x.startswith("minilm-similarity · correctness:"))
            assert text.splitlines()[text.splitlines().index(line) + 1].startswith(said)
            assert "answer-recall" not in w.rows.detail.calls  # not selectively licensed: nothing said of it
        save_shots(qtbot, w, "selective-row-left-1024")
    finally:
        close_window(qtbot, w)


def test_showing_raw_outputs_redraws_the_row(qtbot):
    """The Raw toggle redrew nothing: the pane skipped a redraw of the same row."""
    from rageval_desktop.core.store.queries import JudgmentView, RowDetail
    from rageval_desktop.gui.views.detail_pane import DetailPane

    said = JudgmentView(
        "gpt-judge",
        "correctness",
        "active",
        0,
        "ok",
        4.0,
        None,
        "close to the reference",
        '{"score": 4, "why": "RAW-REPLY"}',
        None,
        None,
        None,
    )
    pane = DetailPane()
    qtbot.addWidget(pane)
    pane.show_detail(
        RowDetail("q1", "What?", "An answer", "The answer", [], None, [], {}, judgments=(said,)),
        calls={"gpt-judge": "decides this row alone: confidence 0.90 ≥ 0.27 (selective licence)"},
    )
    assert "RAW-REPLY" not in pane.toPlainText() and "decides this row alone" in pane.toPlainText()
    pane.set_show_raw(True)
    assert "RAW-REPLY" in pane.toPlainText() and "decides this row alone" in pane.toPlainText()
    pane.set_show_raw(False)
    assert "RAW-REPLY" not in pane.toPlainText()


@pytest.fixture
def sure(demo_file, tmp_path):
    """The README's "Where may a judge decide alone?": minilm-similarity, whose audit would retire it (κ 0.49), kept
    with a selective licence; each run's abstentions drawn for the desk."""
    path = tmp_path / "sure.rageval"
    shutil.copy(demo_file, path)
    with Project.open(path) as p:
        judge = get_judge(p, "minilm-similarity")
        record_audit(p, agreement.agreement(p, judge))
        for run in ("v1", "v2"):
            selective.abstained_sample(p, get_judge(p, "minilm-similarity"), run)
    return path


@pytest.mark.slow  # the Judges page, a row's detail and Compare, at two sizes, light and dark (about 8 s)
def test_the_app_shows_a_judge_deciding_the_rows_it_is_sure_of(qtbot, sure):
    with Project.open(sure, read_only=True) as p:
        judge = get_judge(p, "minilm-similarity")
        routed = selective.route(p, [judge], [selective.select_for(p, judge).level], "v2")
    decided = next(r for r, by in routed.items() if by == "minilm-similarity")
    w = open_window(qtbot, sure)
    try:
        for size in ((1280, 720), (1024, 768)):
            w.resize(*size)
            with qtbot.waitSignal(w.read_finished, timeout=30_000):
                w.select_nav("judges")
            qtbot.waitUntil(
                lambda: all(r["licence"] != "licence: reading…" for r in w.page("judges").model.records), timeout=20_000
            )
            shown = {r["name"]: r for r in w.page("judges").model.records}
            assert shown["minilm-similarity"]["licence"] == "selective · decides 45% of rated rows (confidence ≥ 0.42)"
            assert "agreeing with people on ≥ 90% of them" in shown["minilm-similarity"]["licence__tip"]
            save_shots(qtbot, w, f"sure-judges-{size[0]}")
            qtbot.waitUntil(lambda: "minilm-similarity" in w.rows.selective, timeout=20_000)
            with qtbot.waitSignal(w.rows.row_shown, timeout=30_000, check_params_cb=lambda i: i == decided):
                w.show_run_row("v2", decided)
            assert w.rows.detail.calls["minilm-similarity"].startswith("decides this row alone")
            save_shots(qtbot, w, f"sure-row-{size[0]}")
            with qtbot.waitSignal(w.read_finished, timeout=30_000, check_params_cb=lambda page: page == "compare"):
                w.select_nav("compare")
            view = w.page("compare")
            qtbot.waitUntil(lambda: w.page("compare").result is not None, timeout=30_000)
            if view.result["estimator"] != "selective":
                with qtbot.waitSignal(w.read_finished, timeout=30_000):
                    view.estimator.setCurrentIndex(view.estimator.findData("selective"))
            qtbot.waitUntil(
                lambda: w.page("compare").result is not None and w.page("compare").result["estimator"] == "selective",
                timeout=30_000,
            )
            records = [view.model.record(r) for r in range(view.model.rowCount())]
            row = next(i for i, r in enumerate(records) if r["slice"] == "all")
            column = [k for k, _ in view.model.columns].index("correctness")
            tip = view.model.index(row, column).data(Qt.ItemDataRole.ToolTipRole)
            assert "pass rates: minilm-similarity decides 50% / 40% of the rows" in tip
            # issue 77: six forest plots in ~180 px stacked their slice labels; they get a line per slice and scroll
            slices = len(view.result["slices"])
            assert view.plot.minimumHeight() == forest_height(len(view.result["shown_metrics"]), slices)
            assert view.plot.height() >= 16 * slices * 2 and view.plot_area.verticalScrollBar().maximum() > 0
            save_shots(qtbot, w, f"sure-compare-{size[0]}")
    finally:
        close_window(qtbot, w)


def test_under_another_estimator_the_judge_metrics_come_first():
    """Issue 77: with "selective judge + desk" the correctness column — the only one it changes — was past the table's
    right edge at 1280, behind every retrieval metric."""
    from rageval_desktop.gui.page_numbers import judged_first

    shown = ["hit@5", "hit@10", "mrr", "ndcg@10", "correctness", "correctness_binary"]
    assert judged_first(shown, "mean") == shown
    assert judged_first(shown, "selective") == [
        "correctness",
        "correctness_binary",
        "hit@5",
        "hit@10",
        "mrr",
        "ndcg@10",
    ]
