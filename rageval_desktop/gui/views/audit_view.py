"""The audit: every judge's agreement with the humans, with CIs, the confusion matrix, agreement across runs and
over recorded audits, and retire / reinstate with a reason. Numbers come from core, computed in a worker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.core.review.agreement_stats import label as st_label
from rageval_desktop.core.review.evidence import bias_text
from rageval_desktop.core.store.changes import Area
from rageval_desktop.gui.models.records_model import RecordsModel
from rageval_desktop.gui.state import Page
from rageval_desktop.gui.views.common import page_frame, records_table

if TYPE_CHECKING:
    from PySide6.QtCore import QModelIndex

    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.review.agreement import Agreement
    from rageval_desktop.core.review.align import AlignReport
    from rageval_desktop.core.review.licence import DrawnCheck
    from rageval_desktop.core.review.settings import RetirementPolicy
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.page_numbers import AuditRead, TransportLine
    from rageval_desktop.gui.state import AppState

# what decides first (verdict, the value and its interval, the licence, n, bias), so that at 1024 px they show
# without scrolling; the rest after
COLUMNS = [("judge", "judge"), ("verdict", "verdict"), ("value_text", "value [95% CI]"), ("licence", "licence"),
           ("n", "n rated"), ("bias_text", "bias"), ("judge_status", "status"), ("metric", "metric"),
           ("stability", "flip rate"), ("probe", "probe"), ("run_order", "run order τ"), ("statistic", "statistic"),
           ("needed_text", "to settle (80% power)"), ("ceiling", "human ceiling (α)"),
           ("compared_with", "compared with")]
WIDEST = 200     # px: a longer cell (a licence, a verdict) is elided, whole in its tooltip


def _audit(project: Project, ctx: TaskContext) -> AuditRead:
    """Every judge's agreement, its licence read from it (core.review.licence: one rule for every screen), its
    pass/fail against the reviewers (core.review.accepts), its run order (core.review.system), and its newest
    stability and probe checks: `page_numbers.audit`, in the helper process."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.read(page_numbers.audit, project, ctx)


def _check(project: Project, kind: str, judge: str, run: str, ctx: TaskContext) -> dict[str, Any]:
    """Stability, a probe or the bias battery of a judge on a run, as `rageval stability|probe [--battery]` with
    their defaults, recorded."""
    from rageval_desktop.core.jobs import checks

    check = (checks.plan_stability(project, judge, run) if kind == "stability" else
             checks.plan_probe(project, judge, run, battery=kind == "bias"))
    stats = checks.run_check(project, check, ctx)
    summary = (checks.stability_summary if kind == "stability" else checks.probe_summary)(project, check)
    if stats.stopped is None:
        summary["id"] = checks.record_summary(project, check, summary)
    summary["stopped"] = stats.stopped
    summary["message"] = stats.message
    return summary


def _transport(project: Project, judge: str, run: str, ctx: TaskContext) -> TransportLine:
    """A worker: `page_numbers.transport_text`, in the helper process."""
    from rageval_desktop.gui import chart_process, page_numbers

    return chart_process.read(page_numbers.transport_text, project, ctx, judge, run)


def _draw_check(project: Project, judge: str, run: str, size: int, ctx: TaskContext) -> list[DrawnCheck]:
    """A worker: a transport check of `judge` on `run` put on the desk (core.review.licence.draw_transport)."""
    from rageval_desktop.core.judges.registry import get_judge
    from rageval_desktop.core.review.licence import draw_transport

    return draw_transport(project, [get_judge(project, judge)], run, size)


class AuditView(Page):
    shows = frozenset({Area.JUDGES, Area.JUDGMENTS, Area.JOBS, Area.RATINGS, Area.AUDIT})
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        layout, top = page_frame(self, "Judge audit")
        for b in self._buttons():
            top.addWidget(b)
        self.policy = QLabel()
        self.policy.setObjectName("hint")
        self.policy.setWordWrap(True)
        layout.addWidget(self.policy)
        self.model = RecordsModel(COLUMNS, self)
        self.model.header_tips = {
            "bias_text": "judge − human, mean in points of the 0–100 scale (hover a cell for its 95% CI and the "
                         "limits of agreement); ⚑: shown beyond the bias margin, so the means it feeds are off",
            "needed_text": "more ratings that would settle the verdict with 80% power if the estimate holds",
            "value_text": "the 95% CI is for reading; the verdict uses the anytime-valid interval, which stays right "
                          "however often you look — or, once every target of a planned sample is rated, its final "
                          "look's fixed-size interval"}
        self.table = records_table(self.model, "audit", sortable=False)   # (a row is its place in `results`)
        self.accepts: dict[str, Any] = {}
        self.checks: dict[str, Any] = {}
        self.results: list[Agreement] = []
        self.history_of: dict[str, list[dict[str, Any]]] = {}
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self._upper())
        split.addWidget(self._lower())
        split.setSizes([300, 360])
        layout.addWidget(split, 1)
        self.table.selectionModel().selectionChanged.connect(self._on_row)

    def _buttons(self) -> list[QPushButton]:
        """The page's actions, each wired to its handler."""
        self.apply_button = QPushButton("&Record audit and apply")
        self.apply_button.setToolTip("Retire judges under the threshold (with enough ratings), reinstate retired "
                                     "judges that now pass; every audit is kept")
        self.retire_button = QPushButton("Re&tire…")
        self.reinstate_button = QPushButton("Rei&nstate…")
        self.rerun_button = QPushButton("Run on rated &rows")
        self.rerun_button.setToolTip("Judge the rows humans already rated (e.g. with a rewritten rubric) and see "
                                     "its agreement at once, with no new ratings")
        self.align_button = QPushButton("A&lign on ratings…")
        self.align_button.setToolTip("Few-shot examples from the rows this LLM judge got wrong, checked by 5-fold "
                                     "cross-validation on the ratings (one call per rated row); creates a new "
                                     "judge only if you choose to")
        self.check_button = QPushButton("Check &judge…")
        self.check_button.setToolTip("Ask the selected judge again on 50 of the rows it judged in the current run, "
                                     "5 times each (stability: flip rate), or judge perturbed copies of them (probe: "
                                     "does it notice a dropped fact, a negation, padding, an injected instruction? "
                                     "bias battery: is it moved by the passages' order, a fake citation, length, "
                                     "its own family named as the author?)")
        self.apply_button.clicked.connect(self.apply)
        self.retire_button.clicked.connect(lambda: self.set_status("retired"))
        self.reinstate_button.clicked.connect(lambda: self.set_status("active"))
        self.rerun_button.clicked.connect(self.run_on_rated)
        self.align_button.clicked.connect(self.align)
        self.check_button.clicked.connect(self.check_judge)
        return [self.apply_button, self.rerun_button, self.align_button, self.check_button, self.retire_button,
                self.reinstate_button]

    def _upper(self) -> QWidget:
        """The judges' table, the advice on the selected one, and whether its audit travels to the run chosen."""
        self.advice = QLabel()
        self.advice.setObjectName("advice")
        self.advice.setWordWrap(True)
        # does the judge's audit travel to the run chosen? (rageval transport: the check, its licence there, what a
        # check of the run can see, and a button that puts one on the desk)
        self.transport = QLabel()
        self.transport.setObjectName("hint")
        self.transport.setWordWrap(True)
        self.transport.setTextFormat(Qt.TextFormat.PlainText)
        self.transport_button = QPushButton("&Put rows of the run on the desk")
        self.transport_button.setVisible(False)
        self.transport_button.clicked.connect(self.draw_transport)
        self.transport_size = 0
        travel = QHBoxLayout()
        travel.setContentsMargins(0, 0, 0, 0)
        travel.addWidget(self.transport, 1)
        travel.addWidget(self.transport_button, 0, Qt.AlignmentFlag.AlignTop)
        upper = QWidget()
        lu = QVBoxLayout(upper)
        lu.setContentsMargins(0, 0, 0, 0)
        lu.addWidget(self.table, 1)
        lu.addWidget(self.advice)
        lu.addLayout(travel)
        return upper

    def _lower(self) -> QSplitter:
        """The selected judge's false accepts, confusion matrix, and agreement per run and recorded audits."""
        self.confusion = RecordsModel([], self, heat=True)
        self.confusion_view = QTableView()
        self.confusion_view.setModel(self.confusion)
        self.confusion_view.verticalHeader().setVisible(False)
        self.history = RecordsModel([("run", "run / audit"), ("n", "n"), ("value", "value"), ("verdict", "verdict")],
                                    self)
        self.history_view = records_table(self.history)
        self.false_accepts = RecordsModel([("run", "run"), ("judge_score", "judge"), ("human_score", "human"),
                                           ("slice", "slice"), ("run_row_id", "row")], self)
        self.false_accepts_view = records_table(self.false_accepts)
        self.false_accepts_label = QLabel("False accepts")
        self.false_accepts_label.setWordWrap(True)
        self.false_accepts_label.setToolTip("Rows the judge passes and the reviewers fail: what a gate on this judge "
                                            "would ship. The rate is the share of what the reviewers failed, with "
                                            "its 95% interval (weighted when the sample was). Double-click or Enter "
                                            "on a row opens it on the review card.")
        self.false_accepts_view.activated.connect(self.open_false_accept)
        lower = QSplitter()
        for title, view in ((self.false_accepts_label, self.false_accepts_view),
                            (QLabel("Confusion (rows: humans, columns: judge)"), self.confusion_view),
                            (QLabel("Agreement per run and recorded audits"), self.history_view)):
            box = QWidget()
            column = QVBoxLayout(box)
            column.addWidget(title)
            column.addWidget(view)
            lower.addWidget(box)
        return lower

    def refresh(self, runs: list[str] | None = None) -> None:
        # on the read lane: never refused while a job or a write runs, a newer read making an older one stale
        self.state.run_read("audit", _audit, self.state.opened(), on_done=self.show_found)

    def _show_policy(self, p: RetirementPolicy) -> None:
        statistic = ("quadratic-weighted κ for ordinal scales, Cohen κ for binary" if p.statistic == "auto"
                     else p.statistic)
        if p.rule == "interval":
            # in a reviewer's words; the statistics one hover away (issue 77)
            rule = (f"A judge is kept when its agreement with the reviewers is shown to be at least {p.threshold:g}, "
                    f"retired when shown to be below, and otherwise needs more ratings (still counted, flagged) — "
                    f"after at least {p.min_n} ratings. Hover for how it is decided.")
            tip = (f"Agreement: {statistic}. Kept when the anytime-valid interval of the agreement is at or above "
                   f"{p.threshold:g} — it stays right however often you look while rating; retired when it is below; "
                   f"otherwise 'needs more ratings', with the ratings that would settle it with 80% power. At least "
                   f"{p.min_n} ratings (effective n, when the sample was weighted) either way. The table shows the "
                   "95% CI for reading.")
        else:
            rule = (f"Point-estimate rule (the old one): retire when the estimate ({statistic}) is under "
                    f"{p.threshold:g} with at least {p.min_n} ratings, whatever its CI.")
            tip = ""
        self.policy.setText(rule)
        self.policy.setToolTip(tip)

    def show_found(self, found: AuditRead) -> None:
        results, licences, self.accepts, checks = found.results, found.licences, found.accepts, found.checks
        self.checks, self.results, self.history_of = checks, results, found.history
        self._show_policy(found.policy)
        records = []
        for r in results:
            value = "—" if r.value is None else (f"{r.value:.3f} [{r.ci[0]:.3f}, {r.ci[1]:.3f}]"
                                                 if r.ci[0] is not None else f"{r.value:.3f}")
            b = r.bias
            bias = "—" if b.get("mean") is None else f"{b['mean']:+.1f}" + (" ⚑" if b["flagged"] else "")
            tip = f"judge − human: {bias_text(b)}" if bias_text(b) else ""
            status = r.judge_status
            if r.judge_status == "active" and r.verdict == "retire":      # the audit says retire; not applied yet
                status = "active ⚑"
            cell, said = licences.get(r.judge, ("", ""))
            records.append({**r.as_dict(), "licence": cell, "licence__tip": said, "value_text": value,
                            "judge_status": status, "statistic": st_label(r.statistic),
                            "judge_status__tip": "the audit says retire: Record audit and apply retires it"
                            if status.endswith("⚑") else "",
                            "bias_text": bias, "bias_text__tip": tip,
                            "needed_text": f"≈ {r.needed} more" if r.needed else "—",
                            "ceiling": "—" if r.human_ceiling is None else f"{r.human_ceiling:.2f}",
                            **checks.get(r.judge, {})})
        self.model.set_records(records)
        self.table.resizeColumnsToContents()
        for column in range(self.model.columnCount()):
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), WIDEST))
        if records:
            self.table.selectRow(0)
            self._on_row()  # selecting the row that was already current emits no signal

    def _show_false_accepts(self, found: dict[str, Any] | None) -> None:
        """False accepts first: the rows the judge passes and the reviewers fail, and their rate."""
        if found is None:
            self.false_accepts_label.setText("False accepts: this metric has no pass mark")
            self.false_accepts.set_records([])
            return
        whole = found["slices"].get("all", {})
        far = whole.get("false_accept_rate", {})
        rate = ("" if far.get("value") is None else f" — {far['value'] * 100:.1f}% of what the reviewers failed "
                f"[{far['ci'][0] * 100:.1f}, {far['ci'][1] * 100:.1f}]")
        self.false_accepts_label.setText(f"False accepts: {whole.get('false_accepts', 0)} (judge passes, reviewers "
                                         f"fail){rate}")
        self.false_accepts.set_records([{**a, "judge_score": f"{a['judge_score']:.2f}",
                                         "human_score": f"{a['human_score']:g}"} for a in found["false_accepts"]])
        self.false_accepts_view.resizeColumnsToContents()

    def open_false_accept(self, index: QModelIndex) -> None:
        r = self.selected()
        if r is None:
            return
        row = self.false_accepts.record(index.row())
        # a row in no sample (imported ratings) comes to the card in a sample of the run's false accepts
        same_run = [a["run_row_id"] for a in self.false_accepts.records if a["run"] == row["run"]]
        self.state.navigate("review", row=row["run_row_id"], metric=r.metric, run=row["run"],
                            or_sample=same_run, reason=f"false accepts of {r.judge} on {row['run']}")

    def selected(self) -> Agreement | None:
        rows = self.table.selectionModel().selectedRows()
        return self.results[rows[0].row()] if rows else None

    def _on_row(self, *_: object) -> None:
        r = self.selected()
        if r is None:
            return
        labels = [f"{v:g}" for v in r.confusion["labels"]]
        self.confusion.columns = [("human", "human"), *[(lab, f"judge {lab}") for lab in labels]]
        self.confusion.scored = set()
        self.confusion.set_records([{"human": lab, **{c: row[i] for i, c in enumerate(labels)}}
                                    for lab, row in zip(labels, r.confusion["matrix"] or [[0] * len(labels)] *
                                                        len(labels), strict=True)])
        self.confusion_view.resizeColumnsToContents()
        self._show_false_accepts(self.accepts.get(r.judge))
        self.advice.setText(self._advice(r))
        self._read_transport(r.judge)
        self._show_history(r)

    def _advice(self, r: Agreement) -> str:
        """What the audit says of the selected judge: when to stop rating, its weighting, bias, an expired licence,
        its checks, a planned sample's final look, where it may decide alone."""
        advice = f"{r.judge}: {r.stopping[0].upper()}{r.stopping[1:]}." if r.stopping else ""
        if r.weighting:
            advice += f" {r.weighting[0].upper()}{r.weighting[1:]}."
        if r.bias.get("flagged"):
            advice += (f" Judge − human: {bias_text(r.bias)}; compare runs with Corrected by ratings on the Compare "
                       "page.")
        checks = self.checks.get(r.judge, {})
        licence = next((rec["licence__tip"] for rec in self.model.records if rec["judge"] == r.judge), "")
        if "changed since audit" in licence:
            advice += (" Its licence expired when it changed: Run on rated rows judges the rated rows again with the "
                       "judge as it is now, then Record audit grants it anew from the same ratings.")
        for key, name in (("stability", "Asked again"), ("probe", "Probe")):
            if checks.get(key, "—") != "—":
                advice += f" {name}: {checks[key]} — {checks[f'{key}__tip']}."
        if r.look != "anytime":
            from rageval_desktop.core.review.agreement import planned_text

            said = planned_text(r.as_dict())
            advice += f" {said[0].upper()}{said[1:]}."
        if checks.get("selective"):
            advice += f" {checks['selective']}"
        return advice

    def _show_history(self, r: Agreement) -> None:
        """The selected judge's agreement per run and its recorded audits; Retire/Reinstate as its status allows."""

        def value(v: float | None, ci: list | None = None) -> str:  # agreement has 3 places; ratings 1 would hide it
            if v is None:
                return "—"
            return f"{v:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and ci[0] is not None else "")

        rows = [{"run": f"run {name}", "n": v["n"], "value": value(v["value"], v.get("ci")), "verdict": ""}
                for name, v in r.per_run.items()]
        rows += [{"run": f"audit {h['at']}", "n": h["n"], "value": value(h["value"]), "verdict": h["verdict"]}
                 for h in self.history_of.get(r.judge, [])]
        self.history.set_records(rows)
        self.history_view.resizeColumnsToContents()   # "0.545 [0.372, 0.711]" whole, not cut
        self.retire_button.setEnabled(r.judge_status == "active")
        self.reinstate_button.setEnabled(r.judge_status == "retired")

    def _read_transport(self, judge: str) -> None:
        run, project = self.state.current_run, self.state.project
        self.transport_button.setVisible(False)
        if not run or project is None:
            self.transport.setText("")
            return
        self.transport.setText(f"Does {judge}'s audit hold on {run}? Checking…")   # (a screenshot waits for it)
        self.state.run_read("audit-transport", _transport, project, judge, run, on_done=self._show_transport)

    def _show_transport(self, found: TransportLine) -> None:
        """The transport line: the check in words, the licence on the run, what a check there can see; and a button
        that puts a check of the size that sees a 5-point rise (40 when no size does) on the desk."""
        from rageval_desktop.core.review.transport import CHECK_SIZE

        r = self.selected()
        if r is None or r.judge != found.judge or found.run != self.state.current_run:
            return
        self.transport.setText(found.short)
        self.transport.setToolTip(found.tip)
        planned = found.ratings
        self.transport_size = int(planned) if planned and planned <= 400 else CHECK_SIZE
        self.transport_button.setText(f"&Put {self.transport_size} rows of {found.run} on the desk")
        self.transport_button.setToolTip(
            "A transport check: a representative sample of the run for this judge's metric, rated blind on the "
            "desk. Its ratings show whether the judge errs there as it did where it was audited; a rise suspends "
            "its licence on that run (rageval transport --draw).")
        self.transport_button.setVisible(found.status != "audited here")

    def draw_transport(self) -> None:
        r, run, project = self.selected(), self.state.current_run, self.state.project
        if r is None or not run or project is None:
            return

        def drawn(made: list[DrawnCheck]) -> None:
            if made:
                self.state.status(f"Transport check of {r.judge} on {run}: {made[0].targets} rows on the desk.")
                self.state.navigate("review", sample=made[0].sample_id)

        self.state.run_task(f"Drawing a transport check of {r.judge} on {run}", _draw_check, project, r.judge, run,
                            self.transport_size, on_done=drawn)

    def check_judge(self) -> None:
        r = self.selected()
        run = self.state.current_run
        if r is None or not run:
            return
        kinds = ["Stability: ask again 5 times (flip rate; a confidence for each row asked)",
                 "Probe: perturbed copies (does it notice?)",
                 "Bias battery: passages reversed, a fake citation, longer, its own family as author"]
        choice, ok = QInputDialog.getItem(self, "Check judge", f"Check {r.judge} on 50 rows of {run}:", kinds, 0,
                                          False)
        if not ok:
            return
        kind = ("stability", "probe", "bias")[kinds.index(choice)]
        project, judge = self.state.project, r.judge

        def done(summary: dict[str, Any]) -> None:
            if kind == "stability":
                rate = summary.get("flip_rate")
                said = "no pass mark" if rate is None else f"flip rate {rate * 100:.0f}%"
            else:
                said = {True: "passed", False: "failed", None: "needs more data"}[summary.get("passed")]
            stopped = f" (stopped: {summary['stopped']}; run it again to finish)" if summary.get("stopped") else ""
            what = "bias battery" if kind == "bias" else kind
            self.state.status(f"{what} of {judge} on {run}: {said}{stopped}")
            self.refresh()

        title = "Bias battery" if kind == "bias" else kind.capitalize()
        self.state.run_task(f"{title} of {judge}", _check, project, kind, judge, run, on_done=done)

    def run_on_rated(self) -> None:
        from rageval_desktop.core.jobs.spec import JobSpec
        from rageval_desktop.core.jobs.work import runs_with_ratings

        r = self.selected()
        if r is None:
            return
        runs = runs_with_ratings(self.state.opened(), r.metric)
        if not runs:
            self.state.show_error(f"No one has rated {r.metric} yet: rate a sample in the Review view first.")
            return
        specs = [JobSpec(run=run, judges=[r.judge], rated_only=True) for run in runs]

        def next_job(*_: object) -> None:
            if specs:
                self.state.actions.start_judging(None, None, specs.pop(0))
            else:
                self.state.job_finished.disconnect(next_job)
                self.state.navigate("audit")

        self.state.job_finished.connect(next_job)
        next_job()

    def align(self) -> None:
        from rageval_desktop.core.review.align import align

        r = self.selected()
        if r is None:
            return
        asked = QMessageBox.question(
            self, f"Align {r.judge}",
            f"Align '{r.judge}' on the team's ratings?\n\nEach of the {r.n} rated rows is scored once more by the "
            "judge's endpoint, with examples from the other folds' disagreements (5-fold cross-validation). "
            "Nothing changes until you create the aligned judge.")
        if asked != QMessageBox.StandardButton.Yes:
            return
        project, judge = self.state.opened(), r.judge
        self.state.run_task(f"Aligning {judge} on the ratings", lambda ctx: align(project, judge, ctx=ctx),
                              on_done=self._aligned)

    def _aligned(self, report: AlignReport) -> None:
        from rageval_desktop.core.review.align import create_aligned, describe

        box = QMessageBox(self)
        box.setWindowTitle(f"Align {report.judge}: {report.verdict}")
        box.setText(f"Cross-validated agreement: {report.verdict}.")
        box.setInformativeText(describe(report))
        box.setStyleSheet("QLabel { min-width: 560px; }")   # the report's lines whole, not wrapped mid-interval
        create = box.addButton("Create aligned judge", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Close)
        create.setToolTip("A new rubric version with examples from every rated disagreement, as a new judge: run "
                          "it from the Judges view to score runs")
        box.exec()
        if box.clickedButton() is create:
            project, judge = self.state.opened(), report.judge
            self.state.run_task("Creating the aligned judge",
                                  lambda ctx: create_aligned(project, judge, checked=report),
                                  on_done=lambda made: self._created(made))

    def _created(self, made: tuple[str, list[dict[str, Any]]]) -> None:
        self.state.status(f"Created judge {made[0]} with {len(made[1])} examples: run it from the Judges view", 15_000)

    def apply(self) -> None:
        from rageval_desktop.core import ops

        results, project = list(self.results), self.state.opened()
        def recorded(done: list[ops.OpResult]) -> None:     # the page refreshes once, as the write's areas announce
            self.state.status("Audit recorded: " + ", ".join(f"{r.judge} {d.outcome}" for r, d in zip(
                results, done, strict=True)) + " — Ctrl+Z takes it back", 15_000)

        # an operation of core's each: the app's undo (and `rageval undo`) takes an audit back
        self.state.run_task("Recording the audit", lambda ctx: [
            ops.run(project, ops.RecordAudit(r.judge), initiator="gui") for r in results],
            on_done=recorded)

    def set_status(self, status: str) -> None:
        from rageval_desktop.core.ops import SetJudgeStatus

        r = self.selected()
        if r is None:
            return
        verb = "retire" if status == "retired" else "reinstate"
        reason, ok = QInputDialog.getText(self, f"{verb.title()} {r.judge}", f"Why {verb} '{r.judge}'?")
        if ok and reason.strip():   # an operation of core: Ctrl+Z (or `rageval undo`) takes it back
            self.state.run_op(f"{verb.title()} {r.judge}", SetJudgeStatus(r.judge, status, reason),
                              on_done=lambda _r: self.refresh(), by=self)   # (refreshed once: here)
