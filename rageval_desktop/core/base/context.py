"""The Qt-free progress and cancel object that every long operation receives."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


class Cancelled(Exception):
    """Raised inside an operation when the user cancelled; the operation's transaction rolls back."""


ProgressCallback = Callable[[int, int, str], None]


@dataclass
class TaskContext:
    on_progress: ProgressCallback | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event)
    on_stats: Callable[[dict], None] | None = None  # structured progress (rate, ETA, errors, cost) for panels
    min_interval_s: float = 0.05  # progress is throttled so a fast loop does not flood the GUI
    _last: float = 0.0
    detached: bool = False

    def report(self, done: int, total: int, message: str = "", *, force: bool = False) -> None:
        if self.on_progress is None:
            return
        now = time.monotonic()
        if force or done >= total or now - self._last >= self.min_interval_s:
            self._last = now
            self.on_progress(done, total, message)

    def cancel(self, detach: bool = False) -> None:
        """Stop. `detach`: the caller goes away (the app closes) but does not call the work off — a batch job leaves
        its remote batches running, to be collected later."""
        self.detached = self.detached or detach    # once the caller has gone away, a later plain cancel keeps it so
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def check(self) -> None:
        if self.cancel_event.is_set():
            raise Cancelled("cancelled by the user; nothing was changed")
