"""Importing a large library (pandas, openai) without paying Python's cycle collector for it.

An import of pandas makes ~300k objects that live as long as the process. While they are made, the collector's full
passes walk all of them again and again (each time the old generation grew by a quarter), and at exit a last pass
walks them once more: 25 ms and 50 ms of a 0.38 s `python -c "import pandas"` on this project's machine, 30-40 ms of
openai's 0.45 s. `import_frozen` pauses the collector for the import and then moves every object the process holds
into the collector's permanent generation (`gc.freeze`), which no pass walks: the import took 0.29 s with the exit
(`bench/bench_metrics.py`, docs/scale.md).

What freezing costs: a reference cycle that is garbage at that moment is never freed (what the process made so far is
modules, classes and caches, and this happens once per library), and an object frozen at that moment that later
becomes part of garbage cycle is not freed either. Python's own documentation proposes `gc.freeze` for objects that
live as long as the process, which is what an imported library's are.
"""

from __future__ import annotations

import gc
import importlib
import sys
import threading
from types import ModuleType

_lock = threading.Lock()
_paused = 0            # imports under way with the collector paused (two threads may import at once)
_was_enabled = True    # the collector's state before the first of them


def import_frozen(name: str) -> ModuleType:
    """`import name`, with the cycle collector paused for the import and the objects it made frozen after it. A
    module imported already (and initialised) is returned as it is, with nothing paused or frozen."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    if module is not None and not getattr(spec, "_initializing", False):
        return module
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        module = importlib.import_module(name)
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0:
                gc.freeze()
                if _was_enabled:
                    gc.enable()
    return module
