"""The main window's menus and their keys: File, Edit, View, Go, Help (every action is also in the command palette,
Ctrl+K). The actions that need a project open are kept, to be turned on and off with it. Imported when the window
is built, after its first paint."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from PySide6.QtGui import QUndoStack
    from PySide6.QtWidgets import QMenu, QMenuBar, QWidget

    from rageval_desktop.gui.file_actions import FileActions
    from rageval_desktop.gui.lanes import Lanes
    from rageval_desktop.gui.session import Session
    from rageval_desktop.gui.views.nav_list import NavList
    from rageval_desktop.gui.views.rows_view import RowsView


class MenuHost(Protocol):
    session: Session
    files: FileActions
    lanes: Lanes
    nav: NavList
    rows: RowsView

    @property
    def frame(self) -> QWidget: ...
    @property
    def undo_stack(self) -> QUndoStack: ...
    def menuBar(self) -> QMenuBar: ...
    def addAction(self, action: QAction) -> None: ...
    def close(self) -> bool: ...
    def undo(self) -> None: ...
    def open_demo(self) -> None: ...
    def close_project(self, then: Any = None) -> None: ...
    def show_history(self) -> None: ...
    def show_preferences(self) -> None: ...
    def show_palette(self) -> None: ...
    def reviewer(self, ask: bool = False, force: bool = False) -> str: ...
    def focus_search(self) -> None: ...
    def set_theme(self, theme: str) -> None: ...
    def select_nav(self, kind: str) -> None: ...


class Menus:
    """What the window keeps of its menus: the actions a project turns on, Open Recent, undo and redo."""

    recent_menu: QMenu
    import_action: QAction
    export_action: QAction
    pack_export_action: QAction
    pack_import_action: QAction
    backup_action: QAction
    restore_action: QAction
    close_action: QAction
    undo_action: QAction
    redo_action: QAction
    check_action: QAction

    def set_project_actions(self, enabled: bool) -> None:
        for act in (self.import_action, self.export_action, self.backup_action, self.restore_action,
                    self.close_action, self.pack_export_action, self.pack_import_action, self.check_action):
            act.setEnabled(enabled)


def build_menus(w: MenuHost) -> Menus:
    m = Menus()
    file_menu = w.menuBar().addMenu("&File")

    def action(menu: Any, text: str, slot: Any, shortcut: Any = None, tip: str = "") -> QAction:
        act = QAction(text, w.frame)
        if shortcut is not None:
            # a standard key can be empty on a platform (Preferences on Linux): the listed key stays bound
            keys: list[QKeySequence] = []
            for k in shortcut if isinstance(shortcut, list) else [shortcut]:
                seq = QKeySequence(k)
                if not seq.isEmpty() and seq.toString() not in [x.toString() for x in keys]:
                    keys.append(seq)
            act.setShortcuts(keys)
        act.setStatusTip(tip)
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    action(file_menu, "&New Project…", w.session.new_project, [QKeySequence.StandardKey.New, "Ctrl+N"],
           "Create a project file")
    action(file_menu, "&Open Project…", w.session.choose_project, [QKeySequence.StandardKey.Open, "Ctrl+O"])
    m.recent_menu = file_menu.addMenu("Open &Recent")
    m.recent_menu.aboutToShow.connect(lambda: w.session.fill_recent(m.recent_menu))
    action(file_menu, "Open &Demo Project", w.open_demo, None, "The bundled Python-docs demo")
    file_menu.addSeparator()
    m.import_action = action(file_menu, "&Import File…", w.files.choose_import, "Ctrl+I",
                                "Golden set, run or corpus: CSV, JSONL, JSON, Parquet, XLSX")
    m.export_action = action(file_menu, "&Export Report…", w.files.export_report, "Ctrl+E",
                                "HTML, PDF, XLSX, CSV, JSONL, Parquet or Markdown")
    m.pack_export_action = action(file_menu, "Export Review &Packs…", w.files.export_packs, None,
                                     "A sample's rows as one file per reviewer, rated blind without the project")
    m.pack_import_action = action(file_menu, "Import Review Pac&ks…", w.files.import_packs, None,
                                     "Merge the ratings of returned review packs")
    m.backup_action = action(file_menu, "&Back Up Now", w.files.backup_now)
    m.restore_action = action(file_menu, "Res&tore from Backup…", w.session.restore_backup)
    file_menu.addSeparator()
    m.close_action = action(file_menu, "&Close Project", w.close_project,
                               [QKeySequence.StandardKey.Close, "Ctrl+W"])
    action(file_menu, "&Quit", w.close, [QKeySequence.StandardKey.Quit, "Ctrl+Q"])
    edit_menu = w.menuBar().addMenu("&Edit")
    m.undo_action = action(edit_menu, "&Undo", w.undo, QKeySequence.StandardKey.Undo,
                              "Undo the last edit (golden rows, ratings, judges, retirements)")
    m.redo_action = action(edit_menu, "&Redo", w.undo_stack.redo, QKeySequence.StandardKey.Redo)
    action(edit_menu, "&History…", w.show_history, "Ctrl+H", "Every edit of this session, undoable")
    edit_menu.addSeparator()
    action(edit_menu, "&Preferences…", w.show_preferences, [QKeySequence.StandardKey.Preferences, "Ctrl+,"],
           "Reviewer name, defaults for judges, theme, font size; this project's retirement policy and prices")
    action(edit_menu, "&Reviewer Name…", lambda: w.reviewer(ask=True, force=True), None,
           "The name your ratings carry")
    view_menu = w.menuBar().addMenu("&View")
    action(view_menu, "&Navigation", lambda: w.nav.setFocus(), "Ctrl+1")
    action(view_menu, "&Table", lambda: w.rows.table.setFocus(), "Ctrl+2")
    action(view_menu, "&Detail", lambda: w.rows.detail.setFocus(), "Ctrl+3")
    action(view_menu, "&Slice…", lambda: w.rows.choose_slice(), "Ctrl+L")
    action(view_menu, "Searc&h rows", w.focus_search, "Ctrl+F")
    action(view_menu, "Clear &filters", lambda: w.rows.triage.clear(), "Ctrl+Shift+F")
    view_menu.addSeparator()
    for theme, text in (("light", "Theme: &Light"), ("dark", "Theme: D&ark"),
                        ("system", "Theme: Follow the s&ystem")):
        action(view_menu, text, lambda _=False, t=theme: w.set_theme(t))
    go_menu = w.menuBar().addMenu("&Go")
    for kind, text in (("golden", "&Golden Set"), ("dashboard", "&Dashboard"), ("compare", "&Compare"),
                       ("failures", "&Failures"), ("judges", "&Judges"), ("jobs", "Jo&bs"),
                       ("review", "&Review"), ("audit", "&Audit"), ("team", "&Team")):
        action(go_menu, f"Go to {text}", lambda _=False, k=kind: w.select_nav(k))
    help_menu = w.menuBar().addMenu("&Help")
    action(help_menu, "&Command Palette…", w.show_palette, "Ctrl+K", "Find any command by name")
    action(help_menu, "&Keyboard Shortcuts", w.files.show_shortcuts, "F1")
    m.check_action = action(help_menu, "C&heck Project", w.files.check_project, None,
                               "Read every page of the project file for damage, in the background")
    action(help_menu, "&About", w.files.show_about)
    cancel = QAction(w.frame)
    cancel.setShortcut(QKeySequence("Esc"))
    cancel.triggered.connect(w.lanes.cancel_task)
    w.addAction(cancel)
    m.set_project_actions(False)
    return m
