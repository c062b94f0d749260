"""The golden-set actions of the main window: add, edit, approve, retire, versions, diff, duplicates, generation,
the retrieval lab, and adding a run row to the golden set. Core does the work in a worker; this only asks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rageval_desktop.gui.window_host import WindowHost

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project

# (the store's listings and the golden dialogs are imported where they are used: this module is a base of the main
# window, imported before its first paint)


class GoldenActions(WindowHost):
    """Mixed into MainWindow (needs what gui/window_host.py declares: the project, the rows page, the lanes)."""

    def selected_golden_id(self) -> str | None:
        model: Any = self.rows.table.model()
        index = self.rows.table.currentIndex()
        if model is None or not index.isValid() or not model.source.key.startswith("golden"):
            return None
        return model.row_id(index.row())

    def edit_golden(self, golden_id: str | None) -> None:
        from rageval_desktop.core.golden.edits import row
        from rageval_desktop.core.store import browse
        from rageval_desktop.gui.views.golden_tools import GoldenRowDialog

        if self.project is None:
            return
        existing = row(self.project, golden_id) if golden_id else None
        dialog = GoldenRowDialog(self.project, browse.slice_choices(self.project), existing, self)
        if dialog.exec() == GoldenRowDialog.DialogCode.Accepted:   # an operation of core: Ctrl+Z takes it back
            self.state.run_op("Saving the golden row", *dialog.operation(),
                              on_done=lambda r: self.statusBar().showMessage(f"Saved: {r.label}", 8000))

    def retire_golden(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        gid = self.selected_golden_id()
        if gid is None or self.project is None:
            return
        reason, ok = QInputDialog.getText(self, "Retire golden row", f"Why retire {gid}? (kept in its history)")
        if ok and reason.strip():
            self.state.run_op("Retiring the row", "set golden status", {"id": gid, "status": "retired",
                                                                        "reason": reason})

    def save_golden_version(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.versions import create_version

        name, ok = QInputDialog.getText(self, "Save a version", "Name of this snapshot of the golden set (e.g. v3):")
        if ok and name.strip() and self.project is not None:
            self.run_task("Saving the version", lambda ctx, project=self.project: create_version(project, name.strip()),
                          on_done=lambda v: self.statusBar().showMessage(
                              f"Version '{v['name']}' saved ({v['rows']} rows)", 8000))

    def diff_golden(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.versions import diff, list_versions
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import diff_text

        if self.project is None:
            return
        names = [v["name"] for v in list_versions(self.project)]
        if not names:
            self.show_error("Save a version first: a diff compares a version with another or with now.")
            return
        old, ok = QInputDialog.getItem(self, "Diff", "Compare this version…", names, len(names) - 1, False)
        if not ok:
            return
        new, ok = QInputDialog.getItem(self, "Diff", "…with:", ["current", *names], 0, False)
        if ok:
            self.run_task("Diffing", lambda ctx, project=self.project: diff(project, old, new),
                          on_done=lambda d: TextDialog(f"Golden set: {old} → {new}", diff_text(d), self).open())

    def find_duplicates(self) -> None:
        from rageval_desktop.core.golden.dedupe import golden_duplicates
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import duplicates_text

        if self.project is None:
            return
        from rageval_desktop.core.store.queries import golden_questions

        def find(ctx: object, project: Project = self.project) -> tuple[list, dict]:
            return golden_duplicates(project, 0.9), golden_questions(project)

        self.run_task("Embedding questions and searching for near-duplicates", find,
                      on_done=lambda found: TextDialog("Near-duplicate questions (cosine ≥ 0.9)",
                                                       duplicates_text(*found), self).open())

    def approve_golden(self) -> None:
        gid = self.selected_golden_id()
        if gid is not None and self.project is not None:
            self.state.run_op("Approving the row", "set golden status",
                              {"id": gid, "status": "approved", "reason": f"approved by {self.project.actor}"})

    def generate_golden(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.synth import SynthSpec, run_synth
        from rageval_desktop.core.judges.registry import list_judges
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import synth_text

        if self.project is None:
            return
        judges = [j.name for j in list_judges(self.project) if j.calls_llm]
        if not judges:
            self.show_error("Generating questions needs an LLM judge (its endpoint and model write and critique): "
                            "add one in the Judges view.")
            return
        judge, ok = QInputDialog.getItem(self, "Generate questions", "LLM to write and critique with:", judges, 0,
                                         False)
        if not ok:
            return
        n, ok = QInputDialog.getInt(self, "Generate questions", "Corpus chunks to sample:", 20, 1, 5000)
        if ok:
            spec = SynthSpec(n=n, judge=judge, seed=n)
            self.run_task("Generating and critiquing questions",
                lambda ctx, project=self.project: run_synth(project, spec, ctx),
                          on_done=lambda st: TextDialog("Generated questions", synth_text(st), self).open())

    def retrieval_lab(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.lab import run_lab
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import lab_text

        if self.project is None:
            return
        text, ok = QInputDialog.getText(self, "Retrieval lab", "Chunk sizes to try (tokens, comma-separated):",
                                        text="200,500")
        if not ok:
            return
        try:
            sizes = [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            self.show_error("Chunk sizes are whole numbers separated by commas, e.g. 200,500.")
            return
        project = self.project
        if project is None:
            return

        def lab(ctx: Any) -> tuple[dict, bytes]:       # (the worker gets the project, not the window)
            from rageval_desktop.core.reports.plots import lab_chart

            data = run_lab(project, sizes, ctx=ctx)
            return data, lab_chart(data)

        self.run_task("Retrieval lab: chunking, embedding, searching", lab,
                      on_done=lambda result: TextDialog("Retrieval lab", lab_text(result[0]), self,
                                                        png=result[1]).open())

    def promote_current_row(self) -> None:
        model: Any = self.rows.table.model()
        index = self.rows.table.currentIndex()
        if self.project is None or model is None or not index.isValid() or model.source.key.startswith("golden"):
            return
        self.promote_row(model.row_id(index.row()))

    def promote_row(self, row_id: int) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.edits import promote_failure
        from rageval_desktop.core.store import browse

        if self.project is None:
            return
        tag, ok = QInputDialog.getItem(self, "Add to the golden set", "Slice of the new golden row:",
                                       browse.slice_choices(self.project), 0, False)
        if ok:
            self.run_task("Adding to the golden set",
                lambda ctx, project=self.project: promote_failure(project, row_id, tag),
                          on_done=lambda r: self.statusBar().showMessage(
                              f"Added draft golden row {r['id']} (production failure); approve it after review",
                              10_000))

