"""Adaptive concurrency for LLM calls: additive increase on success, decrease on overload (AIMD).

On a 429 the limit drops to what the server admitted when it refused (the live calls in flight minus one), and
by at least 10% — so a concurrency cap is found in one step and a rate cap is approached multiplicatively. But
a 429 at a concurrency the server recently served successfully is no ceiling (a provider that refuses a random
share of requests): it costs only the 10%. And only one decrease per round trip: a 429 from a call that started
before the last decrease says nothing new (TCP's rule), so a burst of refusals does not collapse the limit. A timeout
halves the limit, at most once a second. Each success adds 1/limit, about one slot per round trip.

A call that takes far longer than the others (a hung request) is *stalled*: it stops occupying a slot, so a few
hung calls cannot starve the job, and it is not counted as "admitted" when a 429 sets the ceiling. Stalled
calls are bounded too (at most 4 x `max` of them), so a server that hangs everything is not flooded.
An optional requests-per-minute cap spaces out the starts.

Refusals that go on — a second decrease with no success since the first, from 429s that say nothing of when to come
back (no Retry-After) — are a rate limit the client must find: every new start is held for a pause (0.5 s, doubling
while refusals go on, at most `PAUSE_MAX_S`), and the limit's drop to the calls the server admitted leaves one call
to probe when the pause ends; the refused calls' own waits are capped at the same (judges.llm.backoff_seconds).
Each refused call used to back off on its own, exponentially up to 30 s: against a limit kept in fixed windows a
job sat idle for up to half a minute into each new window (0.70 of the floor a client that knows the limit reaches;
bench/bench_rate_limit.py). A single refusal between successes (a provider refusing a random share) holds no one.
A 429 that says when (Retry-After) is left to the refused call's own wait: the server said it of that request, and
holding every start for it cut a concurrency-capped server's throughput.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque

STALL_FACTOR = 5.0      # a call running 5x the typical latency of a success is stalled ...
STALL_MIN_S = 2.0       # ... but never before 2 s
STALLED_PER_SLOT = 4    # at most 4 x max hung calls at once: a server that hangs everything is not flooded
PAUSE_MIN_S = 0.5       # the first hold after a plain 429 ...
PAUSE_MAX_S = 2.0       # ... doubling to at most this while refusals go on (a probe every 2 s at most)


class AdaptiveLimiter:
    def __init__(self, max_in_flight: int, rpm: float | None = None) -> None:
        self.max = max(1, int(max_in_flight))
        self.limit = float(self.max)
        self.in_flight = 0          # live calls: they occupy slots
        self.stalled = 0            # calls running far longer than usual: no slot, still under way
        self.decreases = 0
        self._cond = asyncio.Condition()
        self._interval = 60.0 / rpm if rpm else 0.0
        self._next_start = 0.0
        self._last_halving = 0.0
        self._last_decrease = 0.0
        self._typical_s: float | None = None   # moving average of successful call latency
        self._started: dict[int, float] = {}   # ticket -> start, for live calls
        self._stalled_tickets: set[int] = set()
        self._tickets = itertools.count(1)
        self._level: dict[int, int] = {}       # ticket -> live calls in flight when it started
        self._served: deque[tuple[float, int]] = deque()  # (when, level) of recent successes
        self._held_until = 0.0      # no start before this (a plain 429's pause)
        self._pause = 0.0           # the last pause: doubled by the next plain 429, reset by a success
        self._refusals = 0          # decreases from plain 429s since the last success

    @property
    def slots(self) -> int:
        return max(1, int(self.limit))

    def stall_after(self) -> float | None:
        return None if self._typical_s is None else max(STALL_MIN_S, STALL_FACTOR * self._typical_s)

    def _expire_stalled(self) -> None:
        cutoff = self.stall_after()
        bound = STALLED_PER_SLOT * self.max
        if cutoff is None or self.stalled >= bound:
            return
        now = time.monotonic()
        for ticket, started in list(self._started.items()):
            if now - started > cutoff and self.stalled < bound:
                del self._started[ticket]
                self._stalled_tickets.add(ticket)
                self.in_flight -= 1
                self.stalled += 1

    async def acquire(self) -> int:
        """Wait for a slot; returns the ticket to give back to `release`."""
        async with self._cond:
            while True:
                self._expire_stalled()
                held = self._held_until - time.monotonic()
                if self.in_flight < self.slots and held <= 0:
                    break
                try:
                    await asyncio.wait_for(self._cond.wait(), timeout=min(0.25, held) if held > 0 else 0.25)
                except TimeoutError:
                    pass
            self.in_flight += 1
            ticket = next(self._tickets)
            self._started[ticket] = time.monotonic()
            self._level[ticket] = self.in_flight
            wait = 0.0
            if self._interval:
                now = time.monotonic()
                start = max(now, self._next_start)
                self._next_start = start + self._interval
                wait = start - now
        if wait > 0:
            await asyncio.sleep(wait)
        return ticket

    async def release(self, outcome: str, ticket: int, said_when: bool = False) -> None:
        """outcome: 'ok', 'overload' (429), 'timeout', or 'other' (no change). `said_when`: the 429 said when to come
        back (Retry-After): the refused call waits for it; a plain one holds every start for a pause."""
        async with self._cond:
            self._release(outcome, ticket, said_when)
            self._cond.notify_all()

    def release_nowait(self, ticket: int) -> None:
        """Give a slot back from a call that was cancelled (no awaiting inside a cancelled task)."""
        if ticket in self._stalled_tickets or ticket in self._started:
            self._release("other", ticket)

    def _recent_peak(self, now: float) -> int:
        """The highest concurrency at which a call succeeded within the last few round trips."""
        window = max(1.0, 4 * (self._typical_s or 0.25))
        while self._served and now - self._served[0][0] > window:
            self._served.popleft()
        return max((level for _, level in self._served), default=0)

    def _release(self, outcome: str, ticket: int, said_when: bool = False) -> None:
        now = time.monotonic()
        if ticket in self._stalled_tickets:
            self._level.pop(ticket, None)
            self._stalled_tickets.discard(ticket)
            self.stalled -= 1
            return  # a hung call that finally ended says nothing about the server's capacity now
        if ticket not in self._started:
            return  # released already
        started = self._started.pop(ticket)
        level = self._level.pop(ticket, 0)
        self.in_flight -= 1
        if outcome == "ok":
            took = now - started
            self._typical_s = took if self._typical_s is None else 0.9 * self._typical_s + 0.1 * took
            self.limit = min(float(self.max), self.limit + 1.0 / self.limit)
            self._served.append((now, level))
            self._pause, self._refusals = 0.0, 0
        elif outcome == "overload":
            if started >= self._last_decrease:  # one decrease per round trip
                admitted = self.in_flight  # the live calls the server held when it refused this one
                ceiling = float(admitted) if self._recent_peak(now) <= admitted else self.limit
                self.limit = max(1.0, min(ceiling, self.limit * 0.9))
                self._last_decrease = now
                self.decreases += 1
                self._refusals += not said_when
                if self._refusals >= 2:     # refusals go on: a limit to find; hold every start, longer each time
                    self._pause = min(PAUSE_MAX_S, max(PAUSE_MIN_S, 2 * self._pause))
                    self._held_until = max(self._held_until, now + self._pause)
        elif outcome == "timeout" and now - self._last_halving > 1.0:
            self.limit = max(1.0, self.limit / 2)
            self._last_halving = now
            self._last_decrease = now
            self.decreases += 1
