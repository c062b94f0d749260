"""Dashboard, comparison and failure browser. Numbers and charts are computed by core in a worker (the charts
arrive as PNG bytes); these widgets only lay them out."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QMouseEvent, QPixmap, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
)
from shiboken6 import isValid

from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.metrics.retrieval import definition, named, parse
from rageval_desktop.core.reports.plots import forest_height
from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui import operations
from rageval_desktop.gui.appearance import is_dark
from rageval_desktop.gui.models import dashboard_table
from rageval_desktop.gui.models.dashboard_table import unsettled_text
from rageval_desktop.gui.models.records_model import RecordsModel
from rageval_desktop.gui.page_numbers import judged_first
from rageval_desktop.gui.state import Page
from rageval_desktop.gui.views.common import TopRow, records_table
from rageval_desktop.gui.views.detail_pane import DetailPane

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.metrics.gate import GateResult
    from rageval_desktop.core.metrics.gate_config import GateConfig
    from rageval_desktop.gui.operations import Chart
    from rageval_desktop.gui.state import AppState


def _run_box(label: str) -> tuple[QLabel, QComboBox]:
    box = QComboBox()
    lab = QLabel(label)
    lab.setBuddy(box)
    return lab, box


def _fill(box: QComboBox, names: list[str], prefer: str | None = None) -> None:
    """Fill a run box; the run chosen anywhere in the window (`prefer`) wins over the box's own choice."""
    keep = prefer or box.currentData()
    box.blockSignals(True)
    box.clear()
    for n in names:
        box.addItem(n, n)
    box.setCurrentIndex(max(box.findData(keep), 0) if keep else max(box.count() - 1, 0))
    box.blockSignals(False)


class ChartLabel(QLabel):
    """A chart drawn for this pane's size (redrawn, debounced, when the pane is resized): its axes stay in view.
    Clicking a bar or a point says which slice and metric it is about."""

    clicked = Signal(str, str)     # slice, metric
    resized = Signal()

    def __init__(self, hint: str) -> None:
        super().__init__()
        self.setObjectName("chart")
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.setMinimumSize(200, 160)
        self.setMouseTracking(True)
        self.hint = hint
        self.regions: list[Any] = []
        self._timer = QTimer(self)
        self._timer.setObjectName("chartResize")
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.resized)
        self._drawn_for: tuple[int, int] | None = None

    def pane_size(self) -> tuple[int, int]:
        return max(self.width(), 320), max(self.height(), 200)

    def set_chart(self, chart: operations.Chart, size: tuple[int, int]) -> None:
        if chart.image is not None and not chart.image.isNull():     # decoded in the worker that drew it
            pixmap = QPixmap.fromImage(chart.image)
        else:
            pixmap = QPixmap()
            pixmap.loadFromData(chart.png, "PNG")
        self.setPixmap(pixmap)
        self.regions = list(chart.regions)
        self._drawn_for = size
        if size != self.pane_size() and self.isVisible():
            # resized while it was drawn (the page's table filled in below a first read): drawn for a taller pane,
            # its foot — the slice names — was cut off; drawn again for the pane it has
            self._timer.start()

    def stale(self) -> bool:
        """A chart on screen drawn for another size than its pane's (its redraw is on the way)."""
        return self.isVisible() and self._drawn_for is not None and self._drawn_for != self.pane_size()

    def region_at(self, x: float, y: float) -> Any:
        return next((r for r in self.regions if r.contains(x, y)), None)

    def clear_chart(self) -> None:
        """No chart (nothing to draw): an empty pane, nothing to click."""
        self.clear()
        self.regions = []
        self._drawn_for = None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        hit = self.region_at(event.position().x(), event.position().y())
        self.setCursor(Qt.CursorShape.PointingHandCursor if hit else Qt.CursorShape.ArrowCursor)
        self.setToolTip(f"{hit.slice} · {hit.metric}: {self.hint}" if hit else "")
        super().mouseMoveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        hit = self.region_at(event.position().x(), event.position().y())
        if hit is not None and event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(hit.slice, hit.metric)
        super().mousePressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._drawn_for is not None and self._drawn_for != self.pane_size() and self.isVisible():
            self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:   # a closing window leaves no redraw pending
        self._timer.stop()
        super().hideEvent(event)

    def showEvent(self, event: QShowEvent) -> None:   # resized while hidden: redraw for the size it has now
        super().showEvent(event)
        if self._drawn_for is not None and self._drawn_for != self.pane_size():
            self._timer.start()

    def redraw(self, draw: Any, *args: Any) -> None:
        """Draw the chart again for the pane's size, in a worker; an older redraw arriving late is dropped (no
        page read is announced: the numbers did not change)."""
        from rageval_desktop.gui import workers

        size = self.pane_size()
        self._generation = getattr(self, "_generation", 0) + 1
        ticket = self._generation

        def done(chart: Any) -> None:
            if isValid(self) and ticket == self._generation:   # the window may have closed meanwhile
                self.set_chart(chart, size)

        workers.start(draw, *args, size, is_dark(), on_done=done, on_error=lambda *_: None)


class _Analysis(Page):
    shows = frozenset({Area.GOLDEN, Area.RUNS, Area.JUDGES, Area.JUDGMENTS, Area.JOBS, Area.RATINGS})
    title = ""

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(12, 10, 6, 6)
        self.top = TopRow(self.title)
        self.layout_.addLayout(self.top)
        self.note = QLabel()
        self.note.setObjectName("hint")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)   # run, slice and judge names are data
        self.layout_.addWidget(self.note)

    def chart(self, hint: str) -> ChartLabel:
        return ChartLabel(hint)


class DashboardView(_Analysis):
    title = "Dashboard"

    def __init__(self, state: AppState) -> None:
        super().__init__(state)
        lab, self.run_box = _run_box("R&un:")
        self.top.addWidget(lab)
        self.top.addWidget(self.run_box)
        self.chart_kind = QComboBox()
        self.chart_kind.addItem("Per slice, 95% CI", "slices")
        self.chart_kind.addItem("Per question (box plots)", "boxes")
        self.chart_kind.setToolTip("Box plots of the gold-free metrics (UMBRELA, nuggets, citations, HHEM) per "
                                   "run, open-rag-eval style: median line, mean diamond")
        chart_label = QLabel("C&hart:")
        chart_label.setBuddy(self.chart_kind)
        self.top.addWidget(chart_label)
        self.top.addWidget(self.chart_kind)
        self.model = RecordsModel([], self)
        self.table = records_table(self.model)
        self.table.setObjectName("dashboard")
        self.plot = self.chart("click to open these rows in the failure browser")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.plot)
        split.setSizes([300, 420])
        self.layout_.addWidget(split, 1)
        self.run_box.currentIndexChanged.connect(self.compute)
        self.chart_kind.currentIndexChanged.connect(self.redraw)
        self.plot.resized.connect(self.redraw)
        self.plot.clicked.connect(lambda s, m: self.state.open_failures(self.run_box.currentData(), s, m))
        self.summary: dict[str, Any] | None = None
        self.baseline: dict[str, Any] | None = None

    def baseline_run(self) -> str | None:
        """The run listed before the chosen one: overlaid on the chart."""
        index = self.run_box.currentIndex()
        return self.run_box.itemData(index - 1) if index > 0 else None

    def refresh(self, runs: list[str]) -> None:
        _fill(self.run_box, runs, self.state.current_run)
        self.compute()

    def compute(self, *_: object) -> None:
        run = self.run_box.currentData()
        self.state.current_run = run or self.state.current_run
        if run and self.state.project is not None:
            size = self.plot.pane_size()
            self.state.run_read("dashboard", operations.dashboard_with_plot, self.state.project, run,
                                  self.baseline_run(), self.chart_kind.currentData(), size, is_dark(),
                                  on_done=lambda result: self.show_found((*result, size)))

    def redraw(self) -> None:
        """The pane was resized: the same numbers, drawn again for the new size."""
        if self.summary is not None:
            self.plot.redraw(operations.dashboard_chart, self.summary, self.baseline, self.chart_kind.currentData())

    def show_found(self, result: tuple[dict, dict | None, Any, tuple[int, int]]) -> None:
        summary, self.baseline, chart, size = result
        self.summary = summary
        table = dashboard_table.Table(summary)
        self.model.columns = table.columns
        self.model.scored = table.scored
        self.model.header_tips = table.header_tips
        self.model.set_records(table.records())
        self.table.resizeColumnsToContents()
        self.plot.set_chart(chart, size)
        self.note.setText(table.notes(self.baseline))


class CompareView(_Analysis):
    title = "Compare"
    # the verdict also follows the judges' licences (audits) and the project's gate configuration (settings)
    shows = _Analysis.shows | {Area.AUDIT, Area.SETTINGS}

    def __init__(self, state: AppState) -> None:
        super().__init__(state)
        lab_a, self.base_box = _run_box("&Baseline:")
        lab_b, self.cand_box = _run_box("Ca&ndidate:")
        self.badge = QLabel()       # the gate's verdict, in words and colour: pass / fail / cannot decide
        self.badge.setObjectName("verdictBadge")
        self.badge.setTextFormat(Qt.TextFormat.PlainText)
        self.badge.setText("Comparing…")        # shown from the start: the chart is drawn for the room left
        self.layout_.insertWidget(self.layout_.indexOf(self.note), self.badge)
        self.preferred = QLabel()   # what reviewers said of the two runs' answers side by side (the Pairwise page)
        self.preferred.setObjectName("hint")
        self.preferred.setWordWrap(True)
        self.preferred.setTextFormat(Qt.TextFormat.PlainText)
        self.preferred.setVisible(False)
        self.layout_.insertWidget(self.layout_.indexOf(self.note) + 1, self.preferred)
        self.drop = QDoubleSpinBox()
        self.drop.setRange(0, 100)
        self.drop.setValue(2.0)
        self.drop.setSuffix(" points")
        drop_label = QLabel("Max slice &drop:")
        drop_label.setBuddy(self.drop)
        estimator_label = QLabel("&Judge metrics:")
        self.estimator = QComboBox()
        for label, key in (("judges' mean", "mean"), ("corrected by ratings", "ppi"),
                           ("selective judge + desk", "selective")):
            self.estimator.addItem(label, key)
        estimator_label.setBuddy(self.estimator)
        self.estimator.setToolTip("How judge metrics are compared (rageval gate --estimator): the judges' mean; "
                                  "corrected by ratings — each run's judge mean corrected by its human ratings (PPI++, "
                                  "the judge weighed as far as it tracks them; slices with fewer than 10 rated "
                                  "questions show —); selective judge + desk — each "
                                  "run's pass rate from the rows a selective judge decides and the reviewers' ratings "
                                  "of the rest (needs a rated sample of its abstentions on each run)")
        self.plan_button = QPushButton("&Plan gate…")
        self.plan_button.setToolTip("What each cell can detect, and a configuration that gates only what the data "
                                    "can honour (rageval gate plan)")
        self.record_button = QPushButton("Record &decision…")
        self.record_button.setToolTip("Keep the gate's decision in the project, chained to the previous one, and "
                                      "write it as JSON and Markdown to a folder (rageval gate --record DIR)")
        for w in (lab_a, self.base_box, lab_b, self.cand_box, drop_label, self.drop,
                  estimator_label, self.estimator, self.plan_button, self.record_button):
            self.top.addWidget(w)
        self.record_button.clicked.connect(self.record_decision)
        self.plan_button.clicked.connect(self.plan_gate)
        self.model = RecordsModel([], self)
        self.table = records_table(self.model)
        self.table.setObjectName("compare")
        # what a gate on each judge would have shipped: the rated rows of the candidate it passes and the reviewers
        # fail — a table, not sentences in the note (issue 48)
        self.shipped = RecordsModel([("judge", "a gate on"), ("shipped", "would have shipped"), ("rated", "rated rows"),
                                     ("share", "share"), ("where", "where (slice: rows)")], self)
        self.shipped.header_tips = {"shipped": "rated rows of the candidate the judge passes and the reviewers fail"}
        self.shipped_view = records_table(self.shipped, "wouldShip")
        self.shipped_view.setVisible(False)
        self.plot = self.chart("click to open the candidate's failures in the failure browser")
        # the forest plots get the height they need (a line per slice) and scroll when the pane is shorter: six plots
        # in 180 px stacked their slice labels on each other (issue 77)
        self.plot_area = QScrollArea()
        self.plot_area.setObjectName("forestArea")
        self.plot_area.setFrameShape(QFrame.Shape.NoFrame)
        self.plot_area.setWidgetResizable(True)
        self.plot_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plot_area.setWidget(self.plot)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.shipped_view)
        split.addWidget(self.table)
        split.addWidget(self.plot_area)
        split.setSizes([70, 200, 450])          # the would-ship table is a line or two; the chart keeps its room
        split.setStretchFactor(2, 1)
        self.layout_.addWidget(split, 1)
        for box in (self.base_box, self.cand_box):
            box.currentIndexChanged.connect(self.compute)
        self.plot.resized.connect(self.redraw)
        self.plot.clicked.connect(lambda s, m: self.state.open_failures(self.cand_box.currentData(), s, m))
        self.drop.valueChanged.connect(self._verdict)
        self.estimator.currentIndexChanged.connect(self.compute)
        self.result: dict[str, Any] | None = None

    def plan_gate(self) -> None:
        from rageval_desktop.gui.views.gate_plan_dialog import GatePlanDialog

        a, b = self.base_box.currentData(), self.cand_box.currentData()
        if not a or self.state.project is None:
            return
        runs = [self.base_box.itemData(i) for i in range(self.base_box.count())]
        GatePlanDialog(self.state, a, runs, b if b != a else None, self).exec()

    def record_decision(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        a, b = self.base_box.currentData(), self.cand_box.currentData()
        if not a or not b or a == b:
            return
        folder = QFileDialog.getExistingDirectory(self, "Write the decision record to")
        if not folder:
            return
        project, limit = self.state.project, self.drop.value()
        estimator = str(self.estimator.currentData())
        self.state.run_task("Recording the decision", operations.record_decision, project, a, b, limit,
                            estimator, folder,
                            on_done=lambda r: self.state.status(
                                f"decision {r['id']} recorded ({r['decision']}), signed by {r['signer']}: "
                                f"{r['files'][0]}" + "".join(f" — {n}" for n in r.get("notes", [])), 20000))

    def refresh(self, runs: list[str]) -> None:
        # Compare keeps its own pair: by default the latest run against the one before it. Choosing a run on
        # another page never swaps them (it once turned "v1 -> v2" into "v2 -> v1" and failed the gate).
        baseline, candidate = self.base_box.currentData(), self.cand_box.currentData()
        if candidate not in runs:
            candidate = runs[-1] if runs else None
        if baseline not in runs or baseline == candidate:
            earlier = [r for r in runs if r != candidate]
            baseline = earlier[-1] if earlier else candidate
        _fill(self.cand_box, runs, candidate)
        _fill(self.base_box, runs, baseline)
        self.compute()

    def compute(self, *_: object) -> None:
        a, b = self.base_box.currentData(), self.cand_box.currentData()
        self.record_button.setEnabled(bool(a and b and a != b))
        if a and a == b:      # through the read lane: a comparison still being read is dropped when it lands
            self.state.run_read("compare", _no_read, on_done=lambda _none: self._one_run(a))
            return
        if a and b and self.state.project is not None:
            size = self.plot.pane_size()
            estimator = str(self.estimator.currentData())
            limit = self.drop.value()
            self.state.run_read("compare", operations.compare_with_plot, self.state.project, a, b, size, is_dark(),
                                  estimator, limit, on_done=lambda result: self.show_found((*result, size)))

    def redraw(self) -> None:
        if self.result is not None:
            order = judged_first(self.result["shown_metrics"], str(self.result.get("estimator") or "mean"))
            self.plot.redraw(operations.compare_chart, {**self.result, "shown_metrics": order})

    def _one_run(self, run: str) -> None:
        """Baseline and candidate the same run (the project has one, or both boxes were set alike): nothing to compare
        — said, with what to do, instead of a table of zeros and a gate that cannot decide."""
        self.result = None
        self.preferred.setVisible(False)
        self.model.set_records([])
        self.table.setVisible(False)         # an empty table says nothing the note does not
        self.shipped_view.setVisible(False)
        self.plot.clear_chart()
        self.badge.setText("Choose two runs")
        self.badge.setToolTip("")
        self.badge.setProperty("outcome", "")
        self.badge.style().unpolish(self.badge)
        self.badge.style().polish(self.badge)
        others = self.base_box.count() > 1
        self.note.setText(f"Baseline and candidate are both {run}: choose a different run in one of the boxes."
                          if others else f"Compare needs two runs of the same golden set, and this project has one "
                          f"({run}): import another (File → Import File…, Ctrl+I; or rageval import run), then compare "
                          "them here.")

    def show_found(self, result: tuple[dict, Chart, GateResult, float, tuple[int, int]]) -> None:
        from rageval_desktop.core.metrics.selective_cells import describe_cell

        comparison, chart, verdict, limit, size = result
        self.result = comparison
        preferred = comparison.get("pairwise")
        self.preferred.setText(f"Side by side (Pairwise page): {preferred}" if preferred else "")
        self.preferred.setVisible(bool(preferred))
        self.table.setVisible(True)
        metrics = judged_first(comparison["shown_metrics"], str(comparison.get("estimator") or "mean"))
        self.plot.setMinimumHeight(forest_height(len(comparison["shown_metrics"]), len(comparison["slices"])))
        self.model.columns = [("slice", "slice"), ("n", "n"), ("n_with_gold", "with gold"),
                              *[(m, f"{m}  {comparison['baseline']} → {comparison['candidate']} (Δ)")
                                for m in metrics]]
        self.model.deltas = set(metrics)
        self.model.header_tips = {"n": "the baseline's questions (repeats averaged); one the candidate did not answer "
                                       "counts as a failure",
                                  "n_with_gold": "of those, questions with gold chunk ids: the n of retrieval "
                                                 "metrics",
                                  **{m: f"baseline → candidate, and candidate − baseline in points. ▲/▼: the "
                                        f"paired 95% CI lies above/below 0 (coloured); no mark, grey: within "
                                        f"noise. Hover a cell for the CI. {definition(m) or ''}" for m in metrics}}
        records = []
        for name, e in comparison["slices"].items():
            rec = {"slice": name, "n": e["n"], "n_with_gold": e["n_with_gold"]}
            for m in metrics:
                cell = e.get(m)
                rec[m] = cell["delta"] if cell else None
                if cell:
                    within = cell["ci"][0] <= 0 <= cell["ci"][1]
                    mark = "" if within else "▲ " if cell["delta"] > 0 else "▼ "
                    rec[f"{m}__text"] = (f"{cell['baseline']:.1f} → {cell['candidate']:.1f}  "
                                         f"({mark}{cell['delta']:+.1f})")
                    rec[f"{m}__noise"] = within
                    noise = " — within noise (the CI includes 0)" if within else ""
                    ppi = (f", corrected by {cell['n_rated'][0]} + {cell['n_rated'][1]} rated questions (PPI)"
                           if cell.get("estimator") == "ppi" else
                           f"; pass rates: {describe_cell(cell)}" if cell.get("estimator") == "selective" else "")
                    rec[f"{m}__tip"] = (f"{m}: {cell['baseline']:.1f} → {cell['candidate']:.1f}, Δ "
                                        f"{cell['delta']:+.1f}, 95% CI [{cell['ci'][0]:+.1f}, {cell['ci'][1]:+.1f}], "
                                        f"n={cell['n']}{ppi}{noise}")
            for u in comparison.get("unavailable", []):
                if u["slice"] == name:
                    rec[f"{u['metric']}__tip"] = f"{u['metric']}: no estimate here — {u['why']}"
            records.append(rec)
        self.model.set_records(records)
        self.table.resizeColumnsToContents()
        self.plot.set_chart(chart, size)
        self._verdict(read=(verdict, limit))

    def _show_shipped(self, found: list[dict[str, Any]]) -> None:
        """The would-ship table: one line per judge with rated rows of the candidate, hidden when there is none."""
        records = []
        for shipped in found:
            whole = shipped["slices"].get("all", {})
            if not whole.get("rated"):
                continue
            where = [f"{s}: {v['false_accepts']}" for s, v in shipped["slices"].items()
                     if s != "all" and v["false_accepts"]]
            records.append({"judge": shipped["judge"], "shipped": whole["false_accepts"], "rated": whole["rated"],
                            "share": f"{whole['false_accepts'] / whole['rated']:.1%}", "where": ", ".join(where) or "—",
                            "shipped__tip": f"What a gate on {shipped['judge']} would have shipped: "
                                            f"{whole['false_accepts']} of {whole['rated']} rated rows of "
                                            f"{shipped['run']} it passes and the reviewers fail"})
        self.shipped.set_records(records)
        self.shipped_view.setVisible(bool(records))
        if records:
            self.shipped_view.resizeColumnsToContents()
            rows = self.shipped_view.horizontalHeader().height() + sum(
                self.shipped_view.rowHeight(r) for r in range(len(records))) + 4
            self.shipped_view.setFixedHeight(min(rows, 160))    # every judge's line, without a scroll bar

    def _verdict(self, *_: object, read: tuple[GateResult, float] | None = None) -> None:
        """The gate's verdict at the limit set: `read` with the comparison (at the limit it was read at), or computed
        in the helper process (`page_numbers.gate_verdict`), the newest limit's winning."""
        if not self.result:
            return
        config = self.result.get("gate_config")
        self.drop.setEnabled(config is None)
        self.drop.setToolTip("The project's gate configuration sets each cell's tolerance (rageval gate plan)"
                             if config is not None else "A slice's and 'all''s tolerance: a cell passes when its "
                             "drop is shown to stay within it, fails when shown to exceed it")
        limit = self.drop.value()  # the same limit for every slice and for "all", as `rageval gate` takes them
        comparison = self.result
        if read is not None and read[1] == limit:
            self._show_verdict(comparison, read[0], limit, config)
            return
        # until it comes, no verdict shows, in the badge or the note: the last one was at another limit (a PASS there
        # is none here)
        self.badge.setText(f"The gate's verdict at {limit:g} points…")
        self.note.setText(f"{comparison['shared_questions']} shared questions. The gate's verdict at {limit:g} "
                          "points is on its way.")
        self.badge.setToolTip("")
        self.badge.setProperty("outcome", "pending")
        self.badge.style().unpolish(self.badge)
        self.badge.style().polish(self.badge)
        self.state.run_read("compare-verdict", _gate_verdict, comparison, limit, config,
                            on_done=lambda found: self._show_verdict(comparison, found, limit, config))

    def _show_verdict(self, comparison: dict, result: GateResult, limit: float, config: GateConfig | None) -> None:
        if comparison is not self.result:       # a newer comparison arrived meanwhile: its own verdict follows
            return
        from rageval_desktop.core.metrics.gate_text import badge

        said, look = badge(result)
        self.badge.setText(said)
        self.badge.setToolTip("\n".join(
            [f"Not evaluated: {u['metric'] or 'the gate'}" + (f" ({u['slice']})" if u["slice"] else "") +
             f" — {u['why']}" for u in result.not_evaluated] +
            [f"Undecided: {r['slice']} {r['metric']} — {r['why']}" for r in result.undecided[:12]] +
            ([f"… and {len(result.undecided) - 12} more undecided"] if len(result.undecided) > 12 else [])))
        self.badge.setProperty("outcome", look)
        self.badge.style().unpolish(self.badge)
        self.badge.style().polish(self.badge)
        self._show_shipped(self.result.get("would_ship", []))
        text, details = verdict_words(self.result, result, limit, config)
        self.note.setText(text)
        self.note.setToolTip(details)


def verdict_words(comparison: dict, result: GateResult, limit: float, config: GateConfig | None) -> tuple[str, str]:
    """The note under Compare's banner: what the gate decided and what would settle it, in a few plain sentences;
    and, one hover away (the note's tooltip), the statistics — the command it ran, every cell covered with its
    tolerance, the undecided ones with the drop they could detect (issue 77: it was one 12-line paragraph)."""
    from rageval_desktop.core.base.verdicts import Decision
    from rageval_desktop.core.metrics.gate_text import covers_text, headline, settle_hint

    decision = result.decision
    flag = f" --estimator {comparison['estimator']}" if comparison.get("estimator", "mean") != "mean" else ""
    command = (f"rageval gate (configuration: {config.source}){flag}" if config is not None else
               f"rageval gate --max-slice-drop {limit:g}{flag}")
    head = f"{comparison['shared_questions']} shared questions. "
    covers = covers_text(result)
    if decision is Decision.REGRESSION:
        worst = sorted(result.regressions, key=lambda r: -r["drop"])[:3]
        text = head + f"The gate fails ({headline(result)}): the candidate is worse, e.g. " + "; ".join(
            f"{r['slice']} {r['metric']} {-r['drop']:+.1f} points" for r in worst) + "."
    elif decision is Decision.NOT_DECISION_GRADE:
        text = head + (f"The gate cannot decide yet ({headline(result)}). To settle it: "
                       f"{settle_hint(result, short=True)}.")
    else:           # a pass says what it covers, where it is read (issue 73)
        text = head + f"The gate passes: {headline(result)}." + (f" Covered: {covers}." if covers else "")
    notes = []
    if result.ungated:
        notes.append(f"{len(result.ungated)} drop(s) over the limit in small slices are reported, not gated")
    short = [u for u in comparison.get("unavailable", []) if u["slice"] != "all"]
    if short:
        notes.append(f"{len(short)} slice metric(s) have no estimate (hover a cell for why)")
    text += "".join(f" {n[0].upper()}{n[1:]}." for n in notes)
    text += "".join(f" ⚠ {w}." for w in comparison.get("warnings", []))
    if comparison.get("unsettled_judges"):
        text += " ⚑ " + unsettled_text(comparison["unsettled_judges"])
    details = [f"As {command}: {headline(result)}."]
    if covers and decision is not Decision.PASS:
        details.append(f"Covered: {covers}.")
    if result.undecided:
        worst = sorted(result.undecided, key=lambda r: -r["drop"])[:6]
        details.append("Undecided, e.g. " + "; ".join(
            f"{r['slice']} {r['metric']} {-r['drop']:+.1f} (detects ≥ {r['detectable_drop']:.1f})"
            if r["detectable_drop"] is not None else f"{r['slice']} {r['metric']}" for r in worst) + ".")
    if decision is Decision.NOT_DECISION_GRADE:
        details.append(f"In full: {settle_hint(result)}.")
    return text + " (Hover for the statistics.)", "\n\n".join(textwrap.fill(d, 100) for d in details)


def _no_read(ctx: TaskContext) -> None:
    """The read of a page with nothing to read (it still supersedes the read before it)."""


def _gate_verdict(comparison: dict, limit: float, config: GateConfig | None, ctx: TaskContext) -> GateResult:
    """A worker: `page_numbers.gate_verdict`, in the helper process."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.call(page_numbers.gate_verdict, ctx, comparison, limit, config)


class FailuresView(_Analysis):
    title = "Failures"

    def __init__(self, state: AppState) -> None:
        super().__init__(state)
        lab, self.run_box = _run_box("R&un:")
        self.class_box = QComboBox()
        for text, data in (("All classes", None), ("Retrieval", "retrieval"), ("Reranker", "reranker"),
                           ("Generation", "generation")):
            self.class_box.addItem(text, data)
        self.metric_box = QComboBox()
        self.metric_box.setToolTip("List the rows failing one metric, whatever their class (a chart click chooses "
                                   "its bar's metric)")
        self.metric_box.addItem("Failing any metric", None)
        self.judges_box = QComboBox()
        self.judges_box.addItem("by licensed judges", "licensed")
        self.judges_box.addItem("by any active judge", "all")
        self.judges_box.setToolTip("Whose verdicts make a generation failure: the judges holding a licence (audited, "
                                   "not retired, unchanged since) — a judge never audited, or one the audit would "
                                   "retire, does not fill the page — or every active judge")
        self.sample_button = QPushButton("Read &10 failures")
        self.all_button = QPushButton("Show &all")
        self.promote_button = QPushButton("Add to &golden set…")
        self.promote_button.setToolTip("This failure becomes a draft golden row (source: production failure)")
        for w in (lab, self.run_box, self.class_box, self.metric_box, self.judges_box, self.sample_button,
                  self.all_button, self.promote_button):
            self.top.addWidget(w)
        self.model = RecordsModel([("external_id", "row"), ("slice", "slice"), ("failure", "class"),
                                   ("judges", "failed by"), ("first_gold_rank", "gold rank"),
                                   ("prompt_k", "in prompt"), ("question", "question")], self)
        self.table = records_table(self.model)
        self.table.setObjectName("failures")
        self.detail = DetailPane()
        split = QSplitter()
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setSizes([620, 520])
        self.layout_.addWidget(split, 1)
        for box in (self.run_box, self.class_box, self.metric_box, self.judges_box):
            box.currentIndexChanged.connect(lambda *_: self.compute())
        self.sample_button.clicked.connect(lambda: self.compute(sample=10))
        self.all_button.clicked.connect(lambda: self.compute())
        self.promote_button.clicked.connect(self._promote)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self._fill_metrics()

    def _fill_metrics(self) -> None:
        for m in named("headline"):
            if (found := parse(m)) is not None:
                self.metric_box.addItem(f"failing {m} ({found[0].zero.format(k=found[1])})", m)
        for m, spec in METRICS.items():
            if spec.pass_mark is not None:
                self.metric_box.addItem(f"failing {m} (under {spec.pass_mark:g})", m)

    def filter_to(self, metric: str | None) -> None:
        """A chart click: every failure class, failing this metric (None: any failure), before the page shows — by the
        judges whose bar it was (every active judge of a judge metric: the chart counted them all)."""

        for box in (self.metric_box, self.class_box, self.judges_box):
            box.blockSignals(True)
        if metric is not None and self.metric_box.findData(metric) < 0:     # another cut-off (recall@50 …)
            self.metric_box.addItem(f"failing {metric}", metric)
        self.metric_box.setCurrentIndex(max(self.metric_box.findData(metric), 0))
        self.class_box.setCurrentIndex(0)
        if metric in METRICS:
            self.judges_box.setCurrentIndex(self.judges_box.findData("all"))
        for box in (self.metric_box, self.class_box, self.judges_box):
            box.blockSignals(False)

    def refresh(self, runs: list[str]) -> None:
        _fill(self.run_box, runs, self.state.current_run)
        self.compute()

    def compute(self, sample: int | None = None) -> None:
        run = self.run_box.currentData()
        self.state.current_run = run or self.state.current_run
        if run and self.state.project is not None:
            project, cls, slice_tag, metric = (self.state.project, self.class_box.currentData(),
                                               self.state.current_slice, self.metric_box.currentData())
            licensed = self.judges_box.currentData() == "licensed"
            self.state.run_read("failures", lambda ctx=None: operations.failures(
                project, run, cls, slice_tag, metric, sample, ctx, licensed_only=licensed), on_done=self.show_found)

    def show_found(self, result: dict) -> None:
        counts, rows, marks = result["counts"], result["rows"], result["pass_marks"]   # (page_numbers.failures)
        self.model.set_records(rows)
        self.table.resizeColumnsToContents()
        # the chosen slice's own counts (after a chart click the note mixed the slice's rows with the run's counts)
        chosen = self.state.current_slice
        c = counts.get(chosen, {}) if chosen else counts.get("all", {})
        metric = self.metric_box.currentData()
        where = f" in slice {chosen}" if chosen else ""
        if metric:
            head = (f"{len(rows)} of {result['metric_failures']} rows failing {metric}{where} shown"
                    if result["metric_failures"] is not None else f"{len(rows)} rows failing {metric} shown")
        else:
            head = f"{len(rows)} failing rows{where} shown"
        rules = "; ".join(f"{m} under {v['pass_mark']:g} of {v['high']:g}"
                          + (f" ({', '.join(v['judges'])})" if v["judges"] else "") for m, v in marks.items())
        counted = result.get("judges_counted")
        if counted is not None and not counted:
            rules = ("no judge holds a licence yet, so generation failures are left out — audit the judges (Audit "
                     "page) or list them 'by any active judge'")
        self.note.setText(
            f"{head}. A row fails when its gold chunk was never retrieved (retrieval: {c.get('retrieval', 0)}), "
            f"was retrieved but not in the prompt (reranker: {c.get('reranker', 0)}), or reached the prompt and a "
            f"judge scores the answer under its pass mark (generation: {c.get('generation', 0)})"
            + (f": {rules}" if rules else "") + f". {c.get('n', 0)} rows in this "
            + ("slice of the run." if chosen else "run."))
        if rows:
            self.table.selectRow(0)
        else:
            self.detail.show_detail(None)

    def _promote(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.state.actions.promote_row(self.model.record(rows[0].row())["row_id"])

    def _on_row(self, current: QModelIndex, _previous: QModelIndex | None = None) -> None:
        """The selected failure's row, read on the read lane (a newer selection's read wins)."""
        if current.isValid() and self.state.project is not None:
            from rageval_desktop.core.store.queries import run_row_detail

            self.state.run_read("failure detail", lambda project, row_id, ctx=None: run_row_detail(project, row_id),
                                self.state.opened(), self.model.record(current.row())["row_id"],
                                on_done=self.detail.show_detail, announce=False)
