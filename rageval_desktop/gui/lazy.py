"""Modules the main window's class needs by name but its first paint does not: imported on first use.

`lazy(name)` is the standard library's LazyLoader recipe (importlib.util): the module object exists at once, its code
runs when one of its names is first read — after the window is shown. The window's base classes and `main_window`
hold `operations` and `workers` this way (about 8 ms of imports before the first paint)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy(name: str) -> ModuleType:
    """The module `name`, its code run on first attribute access (at once if it is already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
