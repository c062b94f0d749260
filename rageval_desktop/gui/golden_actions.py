"""The golden-set actions of the main window: add, edit, approve, retire, versions, diff, duplicates, generation,
the retrieval lab, and adding a run row to the golden set. Core does the work in a worker; this only asks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.window_host import WindowHost

# (the store's listings and the golden dialogs are imported where they are used: this module is imported with the main
# window, before its first paint)


class GoldenActions:
    """The golden set's actions, an object the window holds (`window.golden`); what it reads of the window is
    `WindowHost` (gui/window_host.py): the project, the rows page, the lanes."""

    def __init__(self, window: WindowHost) -> None:
        self.w = window

    def selected_golden_id(self) -> str | None:
        model: Any = self.w.rows.table.model()
        index = self.w.rows.table.currentIndex()
        if model is None or not index.isValid() or not model.source.key.startswith("golden"):
            return None
        return str(model.row_id(index.row()))       # (a golden row's id)

    def edit_golden(self, golden_id: str | None) -> None:
        from rageval_desktop.core.golden.edits import row
        from rageval_desktop.core.store import browse
        from rageval_desktop.gui.views.golden_tools import GoldenRowDialog

        if self.w.project is None:
            return
        existing = row(self.w.project, golden_id) if golden_id else None
        dialog = GoldenRowDialog(self.w.project, browse.slice_choices(self.w.project), existing, self.w.frame)
        if dialog.exec() == GoldenRowDialog.DialogCode.Accepted:   # an operation of core: Ctrl+Z takes it back
            self.w.state.run_op("Saving the golden row", dialog.operation(),
                                on_done=lambda r: self.w.statusBar().showMessage(f"Saved: {r.label}", 8000))

    def retire_golden(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.ops import SetGoldenStatus

        gid = self.selected_golden_id()
        if gid is None or self.w.project is None:
            return
        reason, ok = QInputDialog.getText(self.w.frame, "Retire golden row", f"Why retire {gid}? (kept in its history)")
        if ok and reason.strip():
            self.w.state.run_op("Retiring the row", SetGoldenStatus(gid, "retired", reason))

    def save_golden_version(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.versions import create_version

        name, ok = QInputDialog.getText(self.w.frame, "Save a version",
                                        "Name of this snapshot of the golden set (e.g. v3):")
        project = self.w.project
        if ok and name.strip() and project is not None:
            self.w.run_task("Saving the version", lambda ctx: create_version(project, name.strip()),
                            on_done=lambda v: self.w.statusBar().showMessage(
                              f"Version '{v['name']}' saved ({v['rows']} rows)", 8000))

    def diff_golden(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.versions import diff, list_versions
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import diff_text

        if self.w.project is None:
            return
        names = [v["name"] for v in list_versions(self.w.project)]
        if not names:
            self.w.show_error("Save a version first: a diff compares a version with another or with now.")
            return
        old, ok = QInputDialog.getItem(self.w.frame, "Diff", "Compare this version…", names, len(names) - 1, False)
        if not ok:
            return
        new, ok = QInputDialog.getItem(self.w.frame, "Diff", "…with:", ["current", *names], 0, False)
        if ok:
            project, frame = self.w.project, self.w.frame
            self.w.run_task("Diffing", lambda ctx: diff(project, old, new),
                            on_done=lambda d: TextDialog(f"Golden set: {old} → {new}", diff_text(d), frame).open())

    def find_duplicates(self) -> None:
        from rageval_desktop.core.golden.dedupe import golden_duplicates
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import duplicates_text

        if self.w.project is None:
            return
        from rageval_desktop.core.store.queries import golden_questions

        def find(ctx: object, project: Project = self.w.project) -> tuple[list, dict]:
            return golden_duplicates(project, 0.9), golden_questions(project)

        self.w.run_task("Embedding questions and searching for near-duplicates", find,
                        on_done=lambda found: TextDialog("Near-duplicate questions (cosine ≥ 0.9)",
                                                       duplicates_text(*found), self.w.frame).open())

    def approve_golden(self) -> None:
        from rageval_desktop.core.ops import SetGoldenStatus

        gid = self.selected_golden_id()
        if gid is not None and self.w.project is not None:
            self.w.state.run_op("Approving the row",
                                SetGoldenStatus(gid, "approved", f"approved by {self.w.project.actor}"))

    def generate_golden(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.synth import SynthSpec, run_synth
        from rageval_desktop.core.judges.registry import list_judges
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import synth_text

        if self.w.project is None:
            return
        judges = [j.name for j in list_judges(self.w.project) if j.calls_llm]
        if not judges:
            self.w.show_error("Generating questions needs an LLM judge (its endpoint and model write and critique): "
                              "add one in the Judges view.")
            return
        judge, ok = QInputDialog.getItem(self.w.frame, "Generate questions", "LLM to write and critique with:", judges,
                                         0, False)
        if not ok:
            return
        n, ok = QInputDialog.getInt(self.w.frame, "Generate questions", "Corpus chunks to sample:", 20, 1, 5000)
        if ok:
            spec = SynthSpec(n=n, judge=judge, seed=n)
            self.w.run_task("Generating and critiquing questions",
                            lambda ctx, project=self.w.project: run_synth(project, spec, ctx),
                            on_done=lambda st: TextDialog("Generated questions", synth_text(st), self.w.frame).open())

    def retrieval_lab(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.golden.lab import run_lab
        from rageval_desktop.gui.views.common import TextDialog
        from rageval_desktop.gui.views.golden_tools import lab_text

        if self.w.project is None:
            return
        text, ok = QInputDialog.getText(self.w.frame, "Retrieval lab", "Chunk sizes to try (tokens, comma-separated):",
                                        text="200,500")
        if not ok:
            return
        try:
            sizes = [int(x) for x in text.split(",") if x.strip()]
        except ValueError:
            self.w.show_error("Chunk sizes are whole numbers separated by commas, e.g. 200,500.")
            return
        project = self.w.project
        if project is None:
            return

        def lab(ctx: Any) -> tuple[dict, bytes]:       # (the worker gets the project, not the window)
            from rageval_desktop.core.reports.plots import lab_chart

            data = run_lab(project, sizes, ctx=ctx)
            return data, lab_chart(data)

        self.w.run_task("Retrieval lab: chunking, embedding, searching", lab,
                        on_done=lambda result: TextDialog("Retrieval lab", lab_text(result[0]), self.w.frame,
                                                        png=result[1]).open())

    def promote_current_row(self) -> None:
        model: Any = self.w.rows.table.model()
        index = self.w.rows.table.currentIndex()
        if self.w.project is None or model is None or not index.isValid() or model.source.key.startswith("golden"):
            return
        self.promote_row(model.row_id(index.row()))

    def promote_row(self, row_id: int) -> None:
        from PySide6.QtWidgets import QInputDialog

        from rageval_desktop.core.ops import PromoteFailure
        from rageval_desktop.core.store import browse

        if self.w.project is None:
            return
        tag, ok = QInputDialog.getItem(self.w.frame, "Add to the golden set", "Slice of the new golden row:",
                                       browse.slice_choices(self.w.project), 0, False)
        if ok:       # an operation of core's: Ctrl+Z retires the draft it made
            self.w.state.run_op("Adding to the golden set", PromoteFailure(row_id, tag),
                                on_done=lambda r: self.w.statusBar().showMessage(
                                    f"{r.label}: a draft golden row (production failure); approve it after review — "
                                    "Ctrl+Z takes it back", 10_000))

