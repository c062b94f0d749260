"""Imported by the app's start before the window's modules (gui/app.py). Once PySide6 is imported, every module
imported after it is passed to PySide6's `__feature__` hook, which reads the module's whole source file to see
whether it names PySide6 (shibokensupport.feature: `inspect.getsource`). The window's start imports about thirty of
ours that way, 3-4 ms of a 140 ms start (bench/bench_startup.py). Ours are answered without reading them: as using
PySide6 (the hook's default for such a module, features off; core's modules never touch a Qt object). If PySide6's
hook is not where this looks, nothing changes."""

from __future__ import annotations

import sys
from collections.abc import Callable

import PySide6.QtCore  # noqa: F401  (the hook is installed when PySide6 is imported)

PACKAGE = "rageval_desktop"


def ours_unread() -> bool:
    """Answer PySide6's probe for the package's modules without reading their sources (True once done)."""
    feature = sys.modules.get("shibokensupport.feature")
    probe: Callable[[object], bool] | None = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or probe is None:
        return False
    if getattr(probe, "answers_ours", False):
        return True
    asked = probe

    def uses_pyside(module: object) -> bool:
        name = str(getattr(module, "__name__", ""))
        return True if name == PACKAGE or name.startswith(PACKAGE + ".") else bool(asked(module))

    setattr(uses_pyside, "answers_ours", True)  # noqa: B010 (a mark on a function)
    setattr(feature, "_mod_uses_pyside", uses_pyside)  # noqa: B010
    return True


ours_unread()
