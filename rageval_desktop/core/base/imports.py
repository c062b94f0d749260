"""Importing a large library (pandas, openai) without paying Python's cycle collector for it.

An import of pandas makes ~300k objects that live as long as the process. While they are made, the collector's full
passes walk all of them again and again (each time the old generation grew by a quarter), and at exit a last pass
walks them once more: 25 ms and 50 ms of a 0.38 s `python -c "import pandas"` on this project's machine, 30-40 ms of
openai's 0.45 s. `import_frozen` pauses the collector for the import; in a process that asked for it (`freeze_after`:
the command line's), it then moves every object the process holds into the collector's permanent generation
(`gc.freeze`), which no pass walks, at exit either. `python -c "import pandas"` took 0.36-0.45 s as it is, 0.33-0.38
s with the collector paused, and 0.28-0.31 s paused and frozen (docs/scale.md).

What freezing costs: a reference cycle that is garbage at that moment is never freed, nor is an object frozen then
that later becomes part of a garbage cycle. In a command (`rageval ...`), what exists at the first large import is
modules, classes and the project it opened, which live until it exits: Python's documentation proposes `gc.freeze`
for such objects.

The app freezes too (`gui.app.make_app`), for its stalls: a full pass over what pandas and openai leave walks
~300k objects with the interpreter held, 95-130 ms on whichever thread it falls (a worker's, during a judge job),
and the window cannot run meanwhile — the longest stall of a 2,000-row job with the dashboard open was such a pass
(bench/bench_gui.py --only stall). Frozen, the pass walks what the app made since. What a freeze holds back of a
project closed later (its window pages and modules live on) is handed back by `thaw` when the project closes: the
next full pass frees what of it is garbage. A large import happens once a session, so the app freezes at most
twice between two closes.
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
_freeze = False        # freeze what exists after such an import (`freeze_after`)


def freeze_after(yes: bool = True) -> None:
    """Whether `import_frozen` freezes what the process holds after an import (a short-lived process: a command)."""
    global _freeze
    _freeze = yes


def thaw() -> None:
    """Hand every frozen object back to the cycle collector (`gc.unfreeze`): what was frozen with something that has
    since been let go (a closed project) is freed by the collector's next full pass, not held for the session."""
    gc.unfreeze()


def import_frozen(name: str) -> ModuleType:
    """`import name`, with the cycle collector paused for the import, and the objects the process holds frozen after
    it where the process asked for that (`freeze_after`). A module imported already (and initialised) is returned as
    it is, with nothing paused or frozen."""
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
                if _freeze:
                    gc.freeze()
                if _was_enabled:
                    gc.enable()
    return module
