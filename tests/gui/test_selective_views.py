"""Issue 47 in the app: the judge the audit would retire keeps a selective licence, the Judges page says what it
gates, the dashboard what share of each slice it decides, and Compare's "selective judge + desk" reads each run's
pass rate from the judge and the desk, saying where every number came from — as `rageval gate --estimator selective`
does."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt

from rageval_desktop.core.judges.registry import get_judge
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
    judges = w.judges_view
    qtbot.waitUntil(lambda: all(r["licence"] != "…" for r in judges.model.records), timeout=20_000)
    shown = {r["name"]: r["licence__tip"] for r in judges.model.records}
    assert shown["minilm-similarity"].startswith("selective: gates only the rows it decides")
    save_shots(qtbot, w, f"selective-judges-{size[0]}")
    w.select(run="v2")
    with qtbot.waitSignal(w.read_finished, timeout=30_000,
                          check_params_cb=lambda page: page == "dashboard"):
        w.select_nav("dashboard")
    dash = w.dashboard_view
    assert w.pages.currentWidget() is dash
    qtbot.waitUntil(lambda: dash.summary is not None and dash.summary["run"] == "v2", timeout=30_000)
    assert "correctness from minilm-similarity (selective licence): it decides 60% of this run's rows" in \
        dash.note.text()
    records = [dash.model.record(r) for r in range(dash.model.rowCount())]
    easy = next(i for i, r in enumerate(records) if r["slice"] == "easy")
    column = [k for k, _ in dash.model.columns].index("correctness")
    tip = dash.model.index(easy, column).data(Qt.ItemDataRole.ToolTipRole)
    assert "minilm-similarity decides 33% of this slice's rows" in tip
    save_shots(qtbot, w, f"selective-dashboard-{size[0]}")
    with qtbot.waitSignal(w.read_finished, timeout=30_000, check_params_cb=lambda page: page == "compare"):
        w.select_nav("compare")
    view = w.compare_view
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    with qtbot.waitSignal(w.read_finished, timeout=30_000):
        view.estimator.setCurrentIndex(view.estimator.findData("selective"))
    qtbot.waitUntil(lambda: view.result is not None and view.result["estimator"] == "selective",
                    timeout=30_000)
    cli = gate(w.project, "v1", "v2", estimator="selective")
    whole = view.result["slices"]["all"]["correctness"]
    assert whole["delta"] == cli.comparison["slices"]["all"]["correctness"]["delta"]
    records = [view.model.record(r) for r in range(view.model.rowCount())]
    row = next(i for i, r in enumerate(records) if r["slice"] == "all")
    column = [k for k, _ in view.model.columns].index("correctness")
    tip = view.model.index(row, column).data(Qt.ItemDataRole.ToolTipRole)
    assert "pass rates: minilm-similarity decides 68% / 60% of the rows" in tip
    assert "--estimator selective" in view.note.text()
    unlicensed = [u["metric"] for u in view.result["licensing"]["unlicensed"]]
    assert "correctness" not in unlicensed and "correctness_binary" in unlicensed   # the latter: no audit
    save_shots(qtbot, w, f"selective-compare-{size[0]}")
    view.estimator.setCurrentIndex(view.estimator.findData("mean"))
    qtbot.waitUntil(lambda: view.result is not None and view.result["estimator"] == "mean", timeout=30_000)


@pytest.mark.slow      # three pages read and drawn, light and dark (about 6 s)
def test_the_app_walks_from_a_judge_that_cannot_gate_to_one_that_gates_the_rows_it_decides(qtbot, walked):
    w = open_window(qtbot, walked)
    try:
        for size in ((1280, 720), (1024, 768)):
            walk(qtbot, w, size)
    finally:
        close_window(qtbot, w)
