"""The window's file actions: import (dialog, drag and drop), report export, review packs, backups, the project's
check, and the shortcut sheet. An object the window holds (`window.files`); what it reads of the window is
`WindowHost` (gui/window_host.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_desktop.gui.lazy import lazy

operations = lazy("rageval_desktop.gui.operations")   # (imported on first use: after the first paint)

if TYPE_CHECKING:   # the project module loads when one is opened, after the first window
    from PySide6.QtGui import QDropEvent

    from rageval_desktop.core.golden.dedupe import NewRowsCheck
    from rageval_desktop.core.store.integrity import CheckReport
    from rageval_desktop.gui.lanes import Lanes
    from rageval_desktop.gui.session import Session
    from rageval_desktop.gui.window_host import WindowHost

# (this module is imported with the main window, before its first paint: the dialogs it opens are imported where
# they are opened — PySide6 makes each class as it is first named)

SHORTCUTS = [
    ("Ctrl+N", "New project"), ("Ctrl+O", "Open project"), ("Ctrl+I", "Import a file"),
    ("Ctrl+E", "Export a report of what you are looking at"),
    ("Ctrl+1", "Focus the navigation list"), ("Ctrl+2", "Focus the table"), ("Ctrl+3", "Focus the detail pane"),
    ("Ctrl+L", "Choose the slice"), ("Ctrl+F", "Search the rows (question, answer)"),
    ("Ctrl+Shift+F", "Clear the table's filters"), ("Click a column header", "Sort by it (again: reverse)"),
    ("Up / Down, PgUp / PgDn", "Move through rows"),
    ("Review: 0-5", "Rate the row on the metric's scale (blind to the judge)"),
    ("Review: j / k, Down / Up", "Next / previous row"), ("Review: n", "Next row you have not rated"),
    ("Review: p", "Show or fold the passages a row rubric does not read"),
    ("Review: r", "Fix the golden row's reference answer (an undoable edit, with its reason)"),
    ("Review: s", "Skip the row (it comes back after the rows not seen yet)"),
    ("Review: c", "Comment on the next rating"), ("Review: u or Ctrl+Z", "Undo the last rating"),
    ("Pairwise: 1 / 2 / 3 or t", "The left answer is better / the right one / neither"),
    ("Pairwise: s", "Skip the pair"), ("Pairwise: j / k, Down / Up", "Next / previous pair"),
    ("Pairwise: u, Backspace or Ctrl+Z", "Undo the last rating"),
    ("Esc", "Cancel the running task"), ("Alt+O", "Show raw judge outputs in the detail pane"),
    ("F1", "This list"), ("Ctrl+K", "Command palette: any command by name"), ("Ctrl+,", "Preferences"),
    ("Ctrl+W", "Close the project"), ("Ctrl+Q", "Quit"),
]


REVIEW_SHORTCUTS = [(k.removeprefix("Review: "), what) for k, what in SHORTCUTS if k.startswith("Review: ")] + [
    ("Alt + the underlined letter", "Press a button"), ("Ctrl+Shift+Z", "Redo a rating"), ("F1", "This list"),
    ("Ctrl+W", "Close the pack (your ratings are already saved in it)")]


PAIR_SHORTCUTS = [(k.removeprefix("Pairwise: "), what) for k, what in SHORTCUTS if k.startswith("Pairwise: ")] + [
    ("Ctrl+Shift+Z", "Redo a rating"), ("F1", "This list"),
    ("Ctrl+W", "Close the pack (your ratings are already saved in it)")]


def shortcut_sheet(parent: Any, rows: list[tuple[str, str]]) -> Any:
    """A two-column table (keys, what they do) that never wraps, sized to its content (within 1000x700 and the
    window: the rest scrolls), opened over `parent`."""
    from PySide6.QtWidgets import (
        QAbstractItemView,
        QDialog,
        QDialogButtonBox,
        QHeaderView,
        QTableWidget,
        QTableWidgetItem,
        QVBoxLayout,
    )

    dialog = QDialog(parent)
    dialog.setWindowTitle("Keyboard shortcuts")
    table = QTableWidget(len(rows), 2, dialog)
    table.setObjectName("shortcuts")
    table.setHorizontalHeaderLabels(["Keys", "Does"])
    table.verticalHeader().setVisible(False)
    table.setWordWrap(False)
    table.verticalHeader().setDefaultSectionSize(24)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    for row, (keys, what) in enumerate(rows):
        table.setItem(row, 0, QTableWidgetItem(keys))
        table.setItem(row, 1, QTableWidgetItem(what))
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    table.resizeColumnsToContents()
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(table)
    layout.addWidget(buttons)
    width = table.horizontalHeader().length() + 40
    height = table.verticalHeader().length() + table.horizontalHeader().height() + 80
    from rageval_desktop.gui.views.common import fit_dialog

    fit_dialog(dialog, min(width, 900), height)
    dialog.open()
    return dialog


class FileActions:
    def __init__(self, window: WindowHost, session: Session, lanes: Lanes) -> None:
        self.w, self.session, self.lanes = window, session, lanes
        self.import_dialog: Any = None
        self.pack_dialog: Any = None
        self.shortcut_sheet: Any = None

    def choose_import(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(
            self.w.frame, "Import", str(Path.home()),
            "Tables (*.csv *.jsonl *.ndjson *.json *.parquet *.xlsx *.gz);;All files (*)")
        if path:
            self.import_file(Path(path))

    def import_file(self, path: Path, *, ask: bool = True, kind: str = "run", run_name: str | None = None,
                    fmt: str | None = None) -> None:
        if self.w.project is None:  # no project yet: make one beside the file (the user chooses where), then import
            from PySide6.QtWidgets import QFileDialog

            target, _ = QFileDialog.getSaveFileName(self.w.frame, f"A new project for {path.name}",
                                                    str(path.with_suffix(".rageval")), "RAGEval projects (*.rageval)")
            if not target:
                return
            target = target if target.endswith(".rageval") else target + ".rageval"

            self.session.create(Path(target), then=lambda _project: self.import_file(
                path, ask=ask, kind=kind, run_name=run_name, fmt=fmt))
            return
        mapping: dict[str, str] = {}
        allow_clearing = False
        if ask:
            from rageval_desktop.core.store import browse
            from rageval_desktop.gui.views.import_dialog import ImportDialog

            project = self.w.project
            dialog = ImportDialog(path, {n for _, n, _ in browse.list_runs(project)}, self.w.frame, project)
            self.import_dialog = dialog
            if dialog.exec() != ImportDialog.DialogCode.Accepted:
                return
            kind, run_name, fmt, mapping = dialog.choice()
            allow_clearing = dialog.allow_clearing
        self.w.run_task(f"Importing {path.name}", operations.import_file, self.w.project, path, kind, run_name, fmt,
                        mapping, allow_clearing, on_done=self._imported)

    def _imported(self, report: Any) -> None:
        self.w.statusBar().showMessage(report.summary(), 10_000)
        if report.fresh_ids:    # the rows are saved; the near-duplicate check follows, without holding anything
            self.check_new_golden(report.fresh_ids)

    def check_new_golden(self, ids: list[str]) -> None:
        """The new golden rows against the set, on the read lane (their cost, not the set's); what it finds comes
        back as a notice with "Review near-duplicates"."""
        if self.w.project is None:
            return
        self.w.notice_bar.dismiss("near-duplicates")
        self.w.task_label.setText(f"Checking {len(ids):,} new question(s) for near-duplicates…")
        self.w.run_read("near-duplicates", operations.check_new_golden, self.w.project, ids,
                        on_done=self._new_golden_checked)

    def _new_golden_checked(self, found: NewRowsCheck) -> None:
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import duplicates_text

        if not self.w.busy:
            self.w.task_label.clear()
        if not found.pairs:
            self.w.statusBar().showMessage(f"Checked: {found.summary()}", 10_000)
            return
        review = lambda: TextDialog("Near-duplicates among the new golden rows (cosine ≥ 0.9)",  # noqa: E731
                                    duplicates_text(found.pairs, found.questions), self.w.frame).open()
        self.w.notice_bar.show_notice(f"{found.summary()[0].upper()}{found.summary()[1:]}. Merge (retire one) or keep "
                                      "both — the rows are imported either way.",
                                      [("Review near-duplicates", review)], tone="warning", topic="near-duplicates")

    def drop(self, event: QDropEvent) -> None:
        """Files dropped on the window: a project opens, anything else is imported."""
        paths = [Path(u.toLocalFile()) for u in event.mimeData().urls()]
        event.acceptProposedAction()
        for path in paths[:1]:  # one at a time: each import asks what the file is
            if path.suffix == ".rageval":
                self.w.open_path(path)
                continue
            problem = operations.unsupported(path)
            if problem:   # said before asking what the file is
                self.w.show_error(problem)
            else:
                self.import_file(path)

    def check_project(self, *, reason: str = "asked") -> None:
        """Help → Check Project, and after an unclean shutdown: every page read on the read lane, the result in the
        notice bar (a damaged file offers the restore)."""
        project = self.w.project
        if project is None:
            return
        if reason == "unclean shutdown":
            text = ("RAGEval Desktop was not closed cleanly last time (killed or crashed): checking every page of "
                    f"{project.path.name} in the background. You can keep working.")
        else:
            text = f"Checking every page of {project.path.name} in the background…"
        self.w.notice_bar.show_notice(text, tone="info", topic="integrity")
        self.w.run_read("integrity", operations.check_project, project, reason, on_done=self._project_checked)

    def _project_checked(self, report: CheckReport) -> None:
        from rageval_desktop.core.store.backup import list_backups

        if report.ok:
            after = " after the unclean shutdown" if report.reason == "unclean shutdown" else ""
            self.w.notice_bar.show_notice(f"Checked{after}: {Path(report.path).name} is sound ({report.kind} of "
                                          f"{report.megabytes:,.1f} MB in {report.seconds:.1f} s found no damage).",
                                          tone="ok", topic="integrity")
            return
        path = Path(report.path)
        after = ", found after an unclean shutdown" if report.reason == "unclean shutdown" else ""
        found = list_backups(path)
        backups = (f"{len(found)} backup(s), the newest {found[-1].name}" if found else
                   "there is no backup of it yet")
        problems = "; ".join(report.problems[:2])
        self.w.notice_bar.show_notice(f"{path.name} is damaged ({report.kind}: {problems}){after}. Restore a backup "
                                      f"before making more changes: {backups}.",
                                      [("Restore from Backup…", lambda: self.session.restore_backup())], tone="error",
                                      topic="integrity")

    def export_target(self) -> tuple[str | None, str | None]:
        """(run, baseline) the user is looking at: the compare view's pair, the dashboard's run, or a run page."""
        from rageval_desktop.gui.views.analysis_views import CompareView, DashboardView

        page = self.w.pages.currentWidget()
        if isinstance(page, CompareView) and page.cand_box.currentData():
            return page.cand_box.currentData(), page.base_box.currentData()
        if isinstance(page, DashboardView) and page.run_box.currentData():
            return page.run_box.currentData(), None
        key = self.w.current_key()
        if key and key[0] == "run" and key[1] is not None:
            return key[1][1], None
        runs = self.w.run_names()
        return (runs[-1] if runs else None), None

    def export_report(self, path: str | None = None) -> None:
        if self.w.project is None:
            return
        run, baseline = self.export_target()
        if run is None:
            self.w.show_error("The project has no run to report on yet.")
            return
        if path is None:
            from PySide6.QtWidgets import QFileDialog

            stem = f"{run}-vs-{baseline}" if baseline and baseline != run else run
            path, _ = QFileDialog.getSaveFileName(
                self.w.frame, "Export report", str(Path.home() / f"rageval-{stem}.html"),
                "HTML report (*.html);;PDF (*.pdf);;Excel (*.xlsx);;CSV (*.csv);;JSON Lines (*.jsonl);;"
                "Parquet (*.parquet);;Markdown for a pull request (*.md)")
            if not path:
                return
        self.w.run_task(f"Writing {Path(path).name}", operations.export_report, self.w.project, run, Path(path),
                        baseline if baseline != run else None,
                        on_done=lambda out: self.w.statusBar().showMessage(f"Report written to {out}", 15_000))

    def export_packs(self) -> None:
        from rageval_desktop.core.review import quality
        from rageval_desktop.core.review.sampling import list_samples
        from rageval_desktop.gui.views.pack_dialog import PackExportDialog
        from rageval_desktop.gui.views.review_view import ReviewView

        if self.w.project is None:
            return
        review = self.w.built_page("review")       # (a page not built yet has no sample chosen)
        current = review.sample.id if isinstance(review, ReviewView) and review.sample is not None else None
        project = self.w.project
        conf = quality.settings(project)
        dialog = PackExportDialog(list_samples(project), project.path.parent / "review-packs", self.w.frame, current,
                                  rates=(conf.gold_rate, conf.retest_rate))

        def go() -> None:
            sample_id, names, folder, overlap = dialog.values()   # core names the files inside the folder

            def done(made: list) -> None:
                self.w.show_info("Review packs written:\n" + "\n".join(
                    f"{m.reviewer}: {m.targets} to rate — {m.path}" + (f" ({m.hidden()})" if m.checks else "")
                    for m in made)
                    + "\n\nSend each reviewer their file; import the returned files with File → Import Review "
                      "Packs….")

            self.w.run_task("Writing review packs", operations.export_packs, self.w.project, sample_id, names, folder,
                            overlap, on_done=done)

        dialog.accepted.connect(go)
        dialog.open()
        self.pack_dialog = dialog

    def import_packs(self, paths: list[str] | None = None) -> None:
        if self.w.project is None:
            return
        if paths is None:
            from PySide6.QtWidgets import QFileDialog

            paths, _ = QFileDialog.getOpenFileNames(self.w.frame, "Import review packs",
                                                    str(self.w.project.path.parent), "Review packs (*.ragevalpack)")
            if not paths:
                return

        def done(results: list) -> None:
            self.w.show_info("\n".join(
                f"{r['file']}: {r['added']} rating(s) added from {r['reviewer']}"
                + (f" ({r['already_imported']} were already imported)" if r["already_imported"] else "")
                + (f"; {r['checks']} hidden check(s) answered (Team page)" if r["checks"] else "")
                for r in results))
            review = self.w.built_page("review")
            if review is not None and self.w.pages.currentWidget() is review:
                review.refresh(self.w.run_names())   # the sample's counts include the new ratings

        self.w.run_task("Importing review packs", operations.import_packs, self.w.project, list(paths), on_done=done)

    def backup_now(self) -> None:
        self.lanes.run_backup("manual")

    def periodic_backup(self) -> None:
        if self.w.project is not None and self.w.project.changes_since_backup:
            self.lanes.run_backup("periodic")

    def show_shortcuts(self) -> None:
        """F1: a two-column table (keys, what they do) that never wraps, sized to its content."""
        self.shortcut_sheet = shortcut_sheet(self.w.frame, SHORTCUTS)

    def show_about(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        from rageval_desktop import __version__

        QMessageBox.about(self.w.frame, "About RAGEval Desktop",
                          f"RAGEval Desktop {__version__}\nHuman-in-the-loop evaluation of RAG systems.")

