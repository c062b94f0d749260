"""The review-only window a reviewer gets for a review pack (`rageval-desktop NAME.ragevalpack`): the project's
review card, keys and undo, rating the pack's rows into the pack itself — or, for a pairwise pack, the Pairwise
page's card and keys, rating its pairs. Nothing else of a project is here — a pack has no judges, runs or
dashboards — and sending the ratings back is sending the file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow

from rageval_desktop.gui import workers
from rageval_desktop.gui.state import AppState

if TYPE_CHECKING:
    from rageval_desktop.core.base.context import TaskContext
    from rageval_desktop.core.ops.sources import PackSource, PairPackSource
    from rageval_desktop.gui.views.pairwise_view import PairwiseView
    from rageval_desktop.gui.views.review_view import ReviewView


T = TypeVar("T")


class PackWindow(QMainWindow):
    def __init__(self, path: str | Path) -> None:
        super().__init__()
        from rageval_desktop.core.ops.sources import PackSource, PairPackSource
        from rageval_desktop.core.review.packs import Pack
        from rageval_desktop.core.review.pair_packs import PairPack, is_pair_pack

        # PackRefused (a RagevalError) says why a file cannot be opened
        self.pairwise = is_pair_pack(path)
        if self.pairwise:
            pairs = PairPack(path)
            self.pack: PairPack | Pack = pairs
            self.source_: PairPackSource | PackSource = PairPackSource(pairs)
            what = f"{len(pairs.pairs)} pairs"
        else:
            scores = Pack(path)
            self.pack, self.source_, what = scores, PackSource(scores), scores.sample().metric
        self.project = None
        self.state = AppState(self, self)     # the page sees the pack through the same state as a project
        self.undo_stack = self.state.undo_stack
        self.last_error = ""
        self.writes = workers.WriteQueue()       # ratings, undo, redo: in order
        self.setWindowTitle(f"{'Pairwise pack' if self.pairwise else 'Review pack'} · {self.pack.reviewer} · {what}"
                            f" · {Path(path).name}")
        self.resize(1280, 720)
        self.status = QLabel()
        self.status.setObjectName("packStatus")
        self.statusBar().addWidget(self.status, 1)
        self.status.setText(f"Ratings are saved in {Path(path).name} as you make them; when you are done, send the "
                            "file back to whoever sent it.")
        self._build_menus()
        self.shortcut_sheet: Any = None
        if self.pairwise:
            from rageval_desktop.gui.views.pairwise_view import PairwiseView

            self.review_view: PairwiseView | ReviewView = PairwiseView(self.state)
        else:
            from rageval_desktop.gui.views.review_view import ReviewView

            self.review_view = ReviewView(self.state)
        self.setCentralWidget(self.review_view)
        self.review_view.refresh([])

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        close = QAction("&Close", self)
        close.setShortcut(QKeySequence.StandardKey.Close)
        close.triggered.connect(self.close)
        file_menu.addAction(close)
        edit = self.menuBar().addMenu("&Edit")
        for step, standard in ((self.undo_stack.createUndoAction(self, "&Undo rating"), QKeySequence.StandardKey.Undo),
                               (self.undo_stack.createRedoAction(self, "&Redo rating"), QKeySequence.StandardKey.Redo)):
            step.setShortcut(standard)
            edit.addAction(step)
        help_menu = self.menuBar().addMenu("&Help")
        keys = QAction("&Keyboard Shortcuts", self)
        keys.setShortcut(QKeySequence("F1"))
        keys.triggered.connect(self.show_shortcuts)
        help_menu.addAction(keys)

    def show_shortcuts(self) -> None:
        from rageval_desktop.gui.file_actions import PAIR_SHORTCUTS, REVIEW_SHORTCUTS, shortcut_sheet

        self.shortcut_sheet = shortcut_sheet(self, PAIR_SHORTCUTS if self.pairwise else REVIEW_SHORTCUTS)

    # --- what the review view asks of its window (the state's Host) -----------------------------------------
    def review_source(self) -> PairPackSource | PackSource:
        return self.source_

    def reviewer(self, ask: bool = False, force: bool = False) -> str:
        return self.pack.reviewer          # the pack was made for one reviewer

    def run_names(self) -> list[str]:
        return []

    def run_task(self, label: str, fn: Callable[..., T], *args: object,
                 on_done: Callable[[T], object] | None = None) -> object:
        self.status.setText(label + "…")
        return workers.start(fn, *args, on_done=on_done, on_error=self.show_error)

    def run_write(self, label: str, fn: Callable[[TaskContext], T], *, on_done: Callable[[T], object] | None = None,
                  on_error: Callable[[str, str], object] | None = None) -> None:
        self.writes.put(fn, on_done=on_done, on_error=on_error or self.show_error)

    def run_read(self, page: str, fn: Callable[..., T], *args: object, on_done: Callable[[T], object],
                 announce: bool = True) -> None:
        workers.start(fn, *args, on_done=on_done, on_error=self.show_error)

    def show_status(self, message: str, ms: int = 6000) -> None:
        self.status.setText(message)

    def navigate(self, page: str, **where: Any) -> None:
        pass                               # a pack window has one page

    def show_error(self, message: str, details: str = "") -> None:
        from rageval_desktop.gui.views.common import warn

        warn(self, message, details)
        self.last_error = message
