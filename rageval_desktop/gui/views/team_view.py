"""The Team page: per reviewer — targets rated, median seconds, agreement with the others' consensus and with each
judge (95% CIs); the inter-annotator matrix (pairwise weighted κ, Krippendorff's α over everyone); and the
adjudication queue, where a lead sets the consensus score of a disagreement with a reason. Numbers come from
core.review.team, computed in a worker; the lead's decision is written by a worker too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui.models.records_model import Records, RecordsModel
from rageval_desktop.gui.state import Page
from rageval_desktop.gui.views.common import page_frame, records_table

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.review.guidelines import ScalePoint
    from rageval_desktop.core.review.quality import QualityReport, ReviewerQuality
    from rageval_desktop.core.review.team import TeamReport
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.state import AppState


def _team(project: Project, metric: str, sample: int | None, ctx: TaskContext) -> tuple[TeamReport, QualityReport]:
    """A worker: the team's report and the reviewers' checks: `page_numbers.team`, in the helper process."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.read(page_numbers.team, project, ctx, metric, sample)


def _samples(project: Project, ctx: TaskContext) -> Records:
    from rageval_desktop.core.review.sampling import list_samples

    return list_samples(project)


def _settle(project: Project, row: int, metric: str, score: float, reason: str, lead: str, item: int,
            key: str | None, ctx: TaskContext) -> int:
    from rageval_desktop.core.review.team import adjudicate

    return adjudicate(project, row, metric, score, reason, lead, item=item, item_key=key)


def _value(e: dict) -> str:
    if e["value"] is None:
        return "—"
    low, high = e["ci"]
    return f"{e['value']:.2f}" + (f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else "")


class SettleDialog(QDialog):
    """The consensus score for one target, and why."""

    def __init__(self, item: dict, points: list[ScalePoint], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Set the consensus score")
        layout = QVBoxLayout(self)
        said = ", ".join(f"{who} {score:g}" for who, score in item["ratings"].items())
        what = QLabel(f"{item['run']} · {item['external_id']} ({item['what']}): {said}")
        what.setTextFormat(Qt.TextFormat.PlainText)
        what.setWordWrap(True)
        layout.addWidget(what)
        form = QFormLayout()
        self.score = QComboBox()
        for p in points:
            self.score.addItem(f"{p.label}  ({p.score:g})" if p.label != f"{p.score:g}" else p.label, p.score)
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("why this score (recorded with your name)")
        form.addRow("&Score:", self.score)
        form.addRow("&Reason:", self.reason)
        layout.addLayout(form)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(lambda: self.accept() if self.reason.text().strip() else
                                      self.reason.setFocus())
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)


class TeamView(Page):
    shows = frozenset({Area.JUDGMENTS, Area.JOBS, Area.RATINGS, Area.REVIEW})
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        layout, top = page_frame(self, "Team")
        self.metric_box = QComboBox()
        for m in METRICS:
            self.metric_box.addItem(m, m)
        self.metric_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.metric_box.setMinimumContentsLength(14)
        self.sample_box = QComboBox()
        self.sample_box.setMinimumWidth(200)
        self.settle_button = QPushButton("&Set consensus…")
        self.settle_button.setToolTip("Settle the selected disagreement: the score the judges are audited against")
        self.aside_button = QPushButton("Set &aside…")
        self.aside_button.setToolTip("Set the selected reviewer's ratings of this metric aside (they stop counting in "
                                     "every audit until brought back; undoable), or bring them back")
        self.aside_button.setEnabled(False)
        for w in (QLabel("Metric:"), self.metric_box, QLabel("Ratings:"), self.sample_box, self.settle_button,
                  self.aside_button):
            top.addWidget(w)
        self.summary = QLabel()
        self.summary.setObjectName("hint")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.summary)
        self.people = RecordsModel([], self)
        self.people_view = records_table(self.people, "teamReviewers")
        # each column as wide as what it holds (a stretched last column was cut to the room left: "with <judge>")
        self.people_view.horizontalHeader().setStretchLastSection(False)
        self.pairs = RecordsModel([("a", "reviewer"), ("b", "reviewer"), ("n", "n shared"), ("value", "κ [95% CI]")],
                                  self)
        self.pairs_view = records_table(self.pairs, "teamPairs")
        self.queue = RecordsModel([("where", "row"), ("what", "target"), ("said", "ratings"),
                                   ("comments", "comments"), ("question", "question")], self)
        self.queue_view = records_table(self.queue, "teamQueue")
        self.queue_title = QLabel("To adjudicate")
        self.queue_title.setObjectName("sectionTitle")
        lower = self.split = QSplitter()
        left, right = QWidget(), QWidget()
        l1, l2 = QVBoxLayout(left), QVBoxLayout(right)
        l1.setContentsMargins(0, 0, 0, 0)
        l2.setContentsMargins(0, 0, 0, 0)
        self.alpha_label = QLabel("Between reviewers")
        self.alpha_label.setObjectName("sectionTitle")
        self.alpha_label.setWordWrap(True)
        l1.addWidget(self.alpha_label)
        l1.addWidget(self.pairs_view)
        l2.addWidget(self.queue_title)
        l2.addWidget(self.queue_view)
        lower.addWidget(left)
        lower.addWidget(right)
        lower.setSizes([380, 700])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.people_view)
        split.addWidget(lower)
        split.setSizes([260, 360])
        layout.addWidget(split, 1)
        self.report: TeamReport | None = None
        self.quality: QualityReport | None = None
        self.people_view.selectionModel().selectionChanged.connect(lambda *_: self._aside_state())
        self.aside_button.clicked.connect(self.set_aside)
        self.metric_box.currentIndexChanged.connect(lambda _i: self.load())
        self.sample_box.currentIndexChanged.connect(lambda _i: self.load())
        self.settle_button.clicked.connect(self.settle)

    def refresh(self, runs: list[str] | None = None) -> None:
        project = self.state.project
        if project is not None:
            self.state.run_read("team.samples", _samples, project, on_done=self.show_samples)   # off the GUI thread

    def show_samples(self, samples: Records) -> None:
        keep = self.sample_box.currentData()
        self.sample_box.blockSignals(True)
        self.sample_box.clear()
        self.sample_box.addItem("all of the metric's", None)
        for s in samples:
            self.sample_box.addItem(f"sample #{s['id']} · {s['run']} · {s['metric']}", s["id"])
        if keep is not None and self.sample_box.findData(keep) >= 0:
            self.sample_box.setCurrentIndex(self.sample_box.findData(keep))
        self.sample_box.blockSignals(False)
        self.load()

    def load(self) -> None:
        project = self.state.project
        if project is None:
            return
        metric, sample = self.metric_box.currentData(), self.sample_box.currentData()
        self.state.run_read("team", _team, project, metric, sample, on_done=self.show_found)

    def show_found(self, found: tuple[TeamReport, QualityReport]) -> None:
        report, quality = found
        self.report, self.quality = report, quality
        self._show_people(report, quality)
        self._show_pairs(report)
        self._show_queue(report)
        self._show_summary(report, quality)

    def _show_people(self, report: TeamReport, quality: QualityReport) -> None:
        """The reviewers' table: status, ratings, time, gold checks, agreement with the others and each judge."""
        from rageval_desktop.core.review.quality import describe

        checked = {q.reviewer: q for q in quality.reviewers}
        judges = sorted({j for r in report.reviewers for j in r.with_judges})
        self.people.columns = [("reviewer", "reviewer"), ("status", "status"), ("rated", "rated"),
                               ("seconds", "median s"), ("gold", "gold checks [anytime CI]"),
                               ("others", "with the others [95% CI]"),
                               *[(f"judge:{j}", f"with {j}") for j in judges]]
        floor = quality.settings["floor"]

        def status(who: str) -> str:
            q = checked.get(who)
            if q is None:
                return ""
            if q.held:
                return "set aside"
            return {"fails": "fails gold", "passes": "passes gold"}.get(q.verdict, "")

        def gold(who: str) -> str:
            q = checked.get(who)
            if q is None or q.gold.n == 0:
                return "—"
            return f"{q.gold.agreed}/{q.gold.n} = {q.gold.value:.0%} [{q.gold.ci[0]:.0%}, {q.gold.ci[1]:.0%}]"

        people = [r.reviewer for r in report.reviewers]
        people += [q.reviewer for q in quality.reviewers if q.reviewer not in people]   # set aside: no ratings count
        stats = {r.reviewer: r for r in report.reviewers}
        self.people.set_records([{
            "reviewer": who, "status": status(who),
            "rated": stats[who].rated if who in stats else checked[who].rated,
            "seconds": "—" if who not in stats or stats[who].median_seconds is None else
            f"{stats[who].median_seconds:.1f}",
            "gold": gold(who), "gold__tip": describe(checked[who], floor) if who in checked else "",
            "others": f"{_value(vars(stats[who].with_consensus))} (n={stats[who].with_consensus.n})"
            if who in stats else "—",
            **({f"judge:{j}": f"{_value(vars(e))} (n={e.n})" for j, e in stats[who].with_judges.items()}
               if who in stats else {})}
            for who in people])
        self._aside_state()
        self.people_view.resizeColumnsToContents()

    def _show_pairs(self, report: TeamReport) -> None:
        """Agreement between each pair of reviewers, and Krippendorff's α over all."""
        self.pairs.set_records([{**p, "value": _value(p)} for p in report.pairwise])
        self.pairs_view.resizeColumnsToContents()
        # the pairs pane as wide as its columns (was: κ cut at 1280 px), the queue takes the rest
        need = self.pairs_view.horizontalHeader().length() + self.pairs_view.verticalScrollBar().sizeHint().width() + 8
        total = sum(self.split.sizes())
        if total > 0:
            self.split.setSizes([min(need, total // 2), total - min(need, total // 2)])
        alpha = "—" if report.alpha is None else f"{report.alpha:.3f}"
        self.alpha_label.setText(f"Between reviewers · Krippendorff's α (all): {alpha}")

    def _show_queue(self, report: TeamReport) -> None:
        """The disagreements waiting for a lead."""
        self.queue.set_records([{
            "where": f"{q['run']} · {q['external_id']}", "what": q["what"] if not q.get("item_key") else
            f"{q['what']}: {q['item_key']}", "said": ", ".join(f"{w} {s:g}" for w, s in q["ratings"].items()),
            "comments": " · ".join(f"{w}: {c}" for w, c in q["comments"].items()), "question": q["question"],
            "question__tip": q["question"],        # the whole question where the column elides it
            "queued": q} for q in report.queue])
        self.queue_view.resizeColumnsToContents()
        self.queue_title.setText(f"To adjudicate: {len(report.queue)} (settled: {report.settled})")
        self.settle_button.setEnabled(bool(report.queue))

    def _show_summary(self, report: TeamReport, quality: QualityReport) -> None:
        """The page's summary: who counts, how agreement is read, what the checks are and who fails them."""
        conf = quality.settings
        floor = conf["floor"]
        checks = (f" Checks: one target in {round(1 / conf['gold_rate'])} is a hidden gold item "
                  f"({quality.gold_items} settled)" if conf["gold_rate"] else " Checks: no gold items")
        checks += (f", one in {round(1 / conf['retest_rate'])} a retest" if conf["retest_rate"] else "") + (
            f"; a reviewer fails below {floor:.0%} on gold (error rate {conf['alpha']:g} across reviewers).")
        failing = [q.reviewer for q in quality.reviewers if q.verdict == "fails" and not q.held]
        if failing:
            checks += f" {', '.join(failing)} fail{'s' if len(failing) == 1 else ''} the gold checks: Set aside…"
        if not report.reviewers and not quality.reviewers:
            self.summary.setText(f"No ratings of {report.metric} yet. Rate in Review, or send review packs "
                                 "(File → Export Review Packs…) and import them back.")
        else:
            self.summary.setText(
                f"{report.metric}: {len(report.reviewers)} reviewer(s) counted; {report.shared_targets} target(s) "
                f"rated by two or more. Agreement is {report.statistic} with its bootstrap 95% CI. A disagreement "
                "of more than one point (any, on a scale of three points or fewer) waits for a lead below." + checks)

    def _selected_reviewer(self) -> ReviewerQuality | None:
        rows = self.people_view.selectionModel().selectedRows()
        if not rows or self.quality is None:
            return None
        who = self.people.record(rows[0].row())["reviewer"]
        return next((q for q in self.quality.reviewers if q.reviewer == who), None)

    def _aside_state(self) -> None:
        q = self._selected_reviewer()
        self.aside_button.setEnabled(q is not None)
        self.aside_button.setText("Bring b&ack" if q is not None and q.held else "Set &aside…")

    def set_aside(self) -> None:
        """Set the selected reviewer's ratings of the metric aside, with a reason (or bring them back): an undoable
        operation (Ctrl+Z, `rageval undo`)."""
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.ops import BringReviewerBack, SetReviewerAside

        q = self._selected_reviewer()
        if q is None or self.quality is None:
            return
        metric = self.quality.metric
        if q.held:
            self.state.run_op("Bringing a reviewer back", BringReviewerBack(q.reviewer, metric))  # (follows RATINGS)
            return
        lead = self.state.reviewer(ask=True)
        if not lead:
            return
        reason, ok = QInputDialog.getText(self, "Set a reviewer aside",
                                          f"Why set {q.reviewer}'s ratings of {metric} aside? (recorded)")
        if not ok or not reason.strip():
            return
        self.state.run_op("Setting a reviewer aside", SetReviewerAside(q.reviewer, metric, reason.strip(), lead))

    def settle(self) -> None:
        from rageval_desktop.core.review.guidelines import human_rubric

        rows = self.queue_view.selectionModel().selectedRows()
        if self.report is None or not self.report.queue:
            return
        item = self.queue.record(rows[0].row() if rows else 0)["queued"]   # the table may be sorted
        dialog = SettleDialog(item, list(human_rubric(self.report.metric).points), self)
        self.settle_dialog = dialog
        project, metric = self.state.project, self.report.metric

        def go() -> None:
            lead = self.state.reviewer(ask=True)
            if not lead:
                return
            self.state.run_task("Recording the consensus", _settle, project, item["row_id"], metric,
                                  dialog.score.currentData(), dialog.reason.text(), lead, item["item"],
                                  item.get("item_key"), on_done=lambda _id: self.load())

        dialog.accepted.connect(go)
        dialog.open()
