"""The review screen's sample bar: what to draw (run, metric, size, mode — or the rows a selective judge leaves to
people), what the plan says that size can decide before anything is drawn, New sample and Extend +10. It owns its
boxes (the review view places them in its top row) and tells the view which sample to open (`drawn`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QSpinBox, QWidget

from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.review.sampling import MODES
from rageval_desktop.core.review.targets import unit
from rageval_desktop.gui.page_numbers import ABSTAINED

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.review.sampling import Sample
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.state import AppState

READING = "reading:abstainers"     # the mode box's placeholder while the selective judges' rows are read
UNIT_HINT = {"row": "", "passage": " (per passage)", "nugget": " (per nugget)", "citation": " (per citation)"}


class SampleBar(QObject):
    drawn = Signal(int)       # a sample was drawn or extended: its id, for the view to open

    def __init__(self, state: AppState, current: Callable[[], int | None], parent: QWidget) -> None:
        super().__init__(parent)
        self.state, self.current = state, current
        self.sample_box = QComboBox()
        self.sample_box.setMinimumWidth(236)     # "#12 · v2 · correctness · 40 rows" whole (issue 77)
        self.sample_label = QLabel("Sam&ple:")
        self.sample_label.setBuddy(self.sample_box)
        self.run_box = QComboBox()
        self.metric_box = QComboBox()
        for m in METRICS:   # rows, and per item: passages, nuggets, citations (core.review.targets)
            self.metric_box.addItem(m + UNIT_HINT[unit(m)], m)
        self.metric_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.metric_box.setMinimumContentsLength(14)   # the list opens as wide as its longest entry
        self.size_box = QSpinBox()
        self.size_box.setRange(5, 2000)
        self.size_box.setValue(40)
        self.size_chosen = False     # the box follows the plan's proposal until a reviewer sets a size
        self._abstain_for: tuple[str, str] | None = None   # the (run, metric) the mode box's "left by" items are for
        self.size_box.setSuffix(" to rate")
        self.size_box.setToolTip("How many targets to draw: rows, or passages, nuggets or citations for the "
                                 "metrics judged per item")
        self.mode_box = QComboBox()
        for mode, what in MODES.items():
            self.mode_box.addItem(mode, mode)
            self.mode_box.setItemData(self.mode_box.count() - 1, what, Qt.ItemDataRole.ToolTipRole)
        self.mode_box.setToolTip("How to draw: stratified (representative), or disagreement / uncertain first — "
                                 "drawn with unequal probabilities that the audit and corrected estimates weight back")
        self.mode_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode_box.setMinimumContentsLength(22)     # "left by <judge> (n)" readable; the list opens wider
        self.new_button = QPushButton("&New sample")
        self.plan_text = ""          # what the planner says of the sample the boxes describe (its tooltip too)
        self.plan: dict[str, Any] = {}
        self.plan_for: tuple[str, str, str, int] | None = None    # the (run, metric, mode, size) it is for
        self._plan_timer = QTimer(self)
        self._plan_timer.setSingleShot(True)
        self._plan_timer.setInterval(400)
        self._plan_timer.timeout.connect(self.refresh_plan)
        self.state.track_timer(self._plan_timer)     # stopped when the project or the window closes
        for box in (self.run_box, self.metric_box, self.mode_box):
            box.currentIndexChanged.connect(self._describe_changed)
        self.size_box.valueChanged.connect(self._size_set)
        self.extend_button = QPushButton("E&xtend +10")
        self.new_button.clicked.connect(self.new_sample)
        self.extend_button.clicked.connect(self.extend_sample)

    @property
    def widgets(self) -> tuple[QWidget, ...]:
        return (self.run_box, self.metric_box, self.size_box, self.mode_box, self.new_button, self.extend_button)

    def set_runs(self, runs: list[str]) -> None:
        self.run_box.clear()
        for r in runs:
            self.run_box.addItem(r, r)
        self.run_box.setCurrentIndex(max(self.run_box.count() - 1, 0))

    def set_samples(self, samples: list[dict[str, Any]]) -> None:
        """The sample box lists the samples (the one chosen stays chosen; else the newest), without a signal."""
        box, keep = self.sample_box, self.sample_box.currentData()
        box.blockSignals(True)
        box.clear()
        for s in samples:
            what = "rows" if s["unit"] == "row" else f"{s['unit']}s"
            mode = "" if s.get("mode", "stratified") == "stratified" else f" · {s['mode']}"
            box.addItem(f"#{s['id']} · {s['run']} · {s['metric']} · {s['rows']} {what}{mode}", s["id"])
        index = box.findData(keep)
        box.setCurrentIndex(index if index >= 0 else box.count() - 1)
        box.blockSignals(False)

    def follow(self, sample: Sample) -> None:
        """A sample opened: "New sample" draws the same kind of sample unless changed."""
        for box, value in ((self.run_box, sample.run), (self.metric_box, sample.metric)):
            if box.findData(value) >= 0:
                box.setCurrentIndex(box.findData(value))

    def new_sample(self) -> None:
        run, metric = self.run_box.currentData(), self.metric_box.currentData()
        project, size, seed = self.state.project, self.size_box.value(), int(time.time()) % 100_000
        mode = self.mode_box.currentData()
        if run and metric and project is not None and mode.startswith(ABSTAINED):
            judge = mode[len(ABSTAINED):]
            self.state.run_task(f"Drawing the rows {judge} leaves to people", _draw_abstained, project, judge, run,
                                size, on_done=lambda sample: self._drawn(sample, None))
            return
        if run and metric and project is not None:  # values read here, on the GUI thread; the worker gets copies
            from rageval_desktop.core.review.sampling import create_sample

            said = self.plan if self.plan_for == (run, metric, mode, size) else {}
            self.state.run_task("Drawing a review sample", lambda ctx: create_sample(project, run, metric, size,
                                                                                       seed=seed, mode=mode),
                                on_done=lambda sample: self._drawn(sample, said.get("warning")))


    def refresh_plan(self) -> None:
        """Before anything is drawn: how many ratings the sample the boxes describe needs, and what its size can
        decide (core.review.audit_plan, read off the GUI thread), shown on New sample's tooltip."""
        run, metric = self.run_box.currentData(), self.metric_box.currentData()
        project, size, mode = self.state.project, self.size_box.value(), self.mode_box.currentData()
        if not (run and metric and project is not None):
            return
        key = (run, metric, mode, size)
        self.state.run_read("review-plan", _plan, project, run, metric, mode, size,
                            on_done=lambda plan: self._planned(key, plan))
        if (run, metric) != self._abstain_for:
            self._reading_abstainers()
            self.state.run_read("review-abstain", _abstainers, project, run, metric,
                                on_done=lambda found: self._abstainers_found((run, metric), found))

    def _reading_abstainers(self) -> None:
        """While the selective judges' rows are read (8-16 s on the demo), the mode box says they are coming: a
        greyed "left by a judge that decides alone: reading…" item (issue 77: they appeared with no word)."""
        box = self.mode_box
        if box.findData(READING) >= 0:
            return
        box.blockSignals(True)
        box.addItem("left by a judge that decides alone: reading…", READING)
        item = cast(QStandardItemModel, box.model()).item(box.count() - 1)
        item.setEnabled(False)
        item.setToolTip("The rows each judge that may decide alone leaves to people are being read; they are "
                        "offered here when the read lands.")
        box.blockSignals(False)


    def _abstainers_found(self, key: tuple[str, str], found: list[dict[str, Any]]) -> None:
        """The mode box offers, after the sampling modes, the rows each selective judge of the metric leaves to
        people on the run (core.review.selective)."""
        self._abstain_for = key
        keep = self.mode_box.currentData()
        self.mode_box.blockSignals(True)
        for i in reversed(range(self.mode_box.count())):
            if str(self.mode_box.itemData(i)).startswith(ABSTAINED) or self.mode_box.itemData(i) == READING:
                self.mode_box.removeItem(i)
        for f in found:
            self.mode_box.addItem(f"left by {f['judge']} ({f['left']})", ABSTAINED + f["judge"])
            self.mode_box.setItemData(
                self.mode_box.count() - 1,
                f"The {f['left']} of {f['rows']} rows of the run that {f['judge']} leaves to people: it decides the "
                f"rest alone (confidence ≥ {f['level']:.2f}, agreement with people ≥ 90%, probability 90%). Rated, "
                "they give the run's pass rate with the judge (rageval selective --run). They are not a sample of "
                "the run: the audit leaves them out.", Qt.ItemDataRole.ToolTipRole)
        index = self.mode_box.findData(keep)
        self.mode_box.setCurrentIndex(index if index >= 0 else 0)
        self.mode_box.blockSignals(False)


    def _describe_changed(self, _index: int) -> None:
        """Another run, metric or mode: the size box follows the plan for it again."""
        self.size_chosen = False
        self._plan_timer.start()


    def _size_set(self, _value: int) -> None:
        self.size_chosen = True
        self._plan_timer.start()


    def _planned(self, key: tuple[str, str, str, int], plan: dict[str, Any]) -> None:
        from rageval_desktop.core.review.audit_plan import describe

        proposed = plan.get("ratings") if plan else None
        self.plan_for, self.plan = key, plan
        self.plan_text = describe(plan) if plan else ""
        self.new_button.setToolTip(f"Draw a new sample.\n\n{self.plan_text}" if plan else "Draw a new sample.")
        if self.size_chosen:
            return
        if proposed and key[3] != proposed:            # propose the plan's size in the box
            self.size_box.blockSignals(True)
            self.size_box.setValue(min(int(proposed), self.size_box.maximum()))
            self.size_box.blockSignals(False)
            self._plan_timer.start()                   # what the proposed size decides, for the tooltip
        self.size_box.setToolTip(
            f"{self.size_box.value()} to rate, as the plan proposes. Set another size to see what it can decide."
            if proposed else "How many targets to draw: rows, or passages, nuggets or citations for the metrics "
            "judged per item. The plan proposes no size for this run (see New sample's tooltip).")


    def _drawn(self, sample: Sample, warning: str | None) -> None:
        """The sample, and what its size can decide, as planned before it was drawn (said when it most likely
        cannot: issue 46)."""
        self.drawn.emit(sample.id)
        if warning:
            self.state.status(f"Sample #{sample.id} drawn. {warning[0].upper()}{warning[1:]}.", 15_000)


    def extend_sample(self) -> None:
        from rageval_desktop.core.review.sampling import extend_sample

        project = self.state.project
        sid = self.current()
        if sid is not None and project is not None:
            self.state.run_task("Extending the sample", lambda ctx: extend_sample(project, sid, 10),
                                  on_done=lambda s: self.drawn.emit(s.id))


def _abstainers(project: Project, run: str, metric: str, ctx: TaskContext) -> list[dict[str, object]]:
    """A worker: `page_numbers.abstainers`, in the helper process."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.read(page_numbers.abstainers, project, ctx, run, metric)


def _draw_abstained(project: Project, judge: str, run: str, size: int, ctx: TaskContext) -> Sample:
    """A worker: the sample of the rows `judge` leaves to people on `run` (all of them when `size` covers them)."""
    from rageval_desktop.core.judges.registry import get_judge
    from rageval_desktop.core.review import selective

    return selective.abstained_sample(project, get_judge(project, judge), run, size=size)


def _plan(project: Project, run: str, metric: str, mode: str, size: int, ctx: TaskContext) -> dict[str, object]:
    """A worker: `page_numbers.review_plan`, in the helper process."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.read(page_numbers.review_plan, project, ctx, run, metric, mode, size)
