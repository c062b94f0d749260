"""Adaptive concurrency for LLM calls: additive increase on success, decrease on overload (AIMD).

On a 429 the limit drops to what the server admitted when it refused (requests in flight minus one), and by
at least 10%, so a concurrency cap is found in one step and a rate cap is approached multiplicatively. A
timeout halves the limit, at most once a second. Each success adds 1/limit, about one slot per round trip.
An optional requests-per-minute cap spaces out the starts.
"""

from __future__ import annotations

import asyncio
import time


class AdaptiveLimiter:
    def __init__(self, max_in_flight: int, rpm: float | None = None) -> None:
        self.max = max(1, int(max_in_flight))
        self.limit = float(self.max)
        self.in_flight = 0
        self.decreases = 0
        self._cond = asyncio.Condition()
        self._interval = 60.0 / rpm if rpm else 0.0
        self._next_start = 0.0
        self._last_halving = 0.0

    @property
    def slots(self) -> int:
        return max(1, int(self.limit))

    async def acquire(self) -> None:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.slots)
            self.in_flight += 1
            wait = 0.0
            if self._interval:
                now = time.monotonic()
                start = max(now, self._next_start)
                self._next_start = start + self._interval
                wait = start - now
        if wait > 0:
            await asyncio.sleep(wait)

    async def release(self, outcome: str) -> None:
        """outcome: 'ok', 'overload' (429), 'timeout', or 'other' (no change)."""
        async with self._cond:
            if outcome == "ok":
                self.limit = min(float(self.max), self.limit + 1.0 / self.limit)
            elif outcome == "overload":
                self.limit = max(1.0, min(self.in_flight - 1.0, self.limit * 0.9))
                self.decreases += 1
            elif outcome == "timeout":
                now = time.monotonic()
                if now - self._last_halving > 1.0:
                    self.limit = max(1.0, self.limit / 2)
                    self._last_halving = now
                    self.decreases += 1
            self.in_flight -= 1
            self._cond.notify_all()
