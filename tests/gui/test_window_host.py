"""The window's action groups are type-checked against gui/window_host.py's declaration of the window: every name it
declares must be one MainWindow really has, or the checker would vouch for calls that fail at run time."""

from __future__ import annotations

import ast

from rageval_desktop.gui import window_host
from rageval_desktop.gui.main_window import MainWindow


def declared() -> set[str]:
    with open(window_host.__file__, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    host = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "WindowHost")
    names = {n.target.id for n in host.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return names | {n.name for n in host.body if isinstance(n, ast.FunctionDef)}


def test_every_name_the_host_declares_is_one_the_window_has(window):
    names = declared()
    assert {"project", "state", "run_task", "page", "task_finished"} <= names
    missing = sorted(n for n in names if not hasattr(window, n))
    assert not missing, f"window_host.WindowHost declares what MainWindow lacks: {missing}"
    assert not hasattr(MainWindow, "__getattr__")        # pages by key: window.page("review"), no invented names


def test_every_page_is_a_page_and_is_found_typed_by_its_class(window):
    """Issue 78: a `Page` contract (a widget with `shows` and `refresh(runs)`), and pages asked for by class, typed —
    `page(key)` returned Any and its callers' calls were checked by nothing."""
    import importlib

    from rageval_desktop.gui.pages import BY_CLASS, PAGES
    from rageval_desktop.gui.state import Page

    assert len(BY_CLASS) == len(PAGES)
    for spec in PAGES:
        cls = getattr(importlib.import_module(f"rageval_desktop.gui.views.{spec.module}"), spec.cls)
        assert issubclass(cls, Page) and cls.refresh is not Page.refresh, spec.cls
        assert isinstance(cls.shows, frozenset), spec.cls
        page = window.view(cls)
        assert page is window.page(spec.key) and type(page) is cls
    assert "view" in declared()
