"""Reads shared for the length of one question asked of a project (issue 50): an audit of twenty judges asked the
file for the same ratings, sample designs and verdicts sixty times over (537 statements for 2,058 ratings).

Within `shared(project)` a read made through `once(project, key, read)` is made once and handed back on every later
ask; outside such a block `once` simply reads. Nothing is kept after the block, and a write to the project inside
it (Project.write, on any thread) forgets everything kept: a later read sees the write. Values handed out are
shared: a reader must not change one in place (frames are copied by the caller that changes them)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar, cast

T = TypeVar("T")


class _Store:
    """One block's reads, and how many writes have cleared them (a read begun before a write is not kept)."""

    def __init__(self) -> None:
        self.values: dict[Hashable, object] = {}
        self.generation = 0


_SCOPE: ContextVar[tuple[int, _Store] | None] = ContextVar("rageval_shared_reads", default=None)
_LIVE: dict[int, list[_Store]] = {}      # project id -> the open blocks' stores (writes clear them)
_LOCK = threading.Lock()
_MISSING = object()


@contextmanager
def shared(project: object) -> Iterator[None]:
    """Reads of `project` through `once` inside the block are made once (of another project, every time). Blocks
    nest: an inner block uses the outer one's store."""
    if _SCOPE.get() is not None:
        yield
        return
    store = _Store()
    with _LOCK:
        _LIVE.setdefault(id(project), []).append(store)
    token = _SCOPE.set((id(project), store))
    try:
        yield
    finally:
        _SCOPE.reset(token)
        with _LOCK:
            stores = [s for s in _LIVE.get(id(project), []) if s is not store]    # (by identity: stores compare equal)
            if stores:
                _LIVE[id(project)] = stores
            else:
                _LIVE.pop(id(project), None)


def _store_of(project: object) -> _Store | None:
    scope = _SCOPE.get()
    return scope[1] if scope is not None and scope[0] == id(project) else None


def active(project: object) -> bool:
    """Whether reads of `project` are shared here (a reader may then read more at once, for later asks to find)."""
    return _store_of(project) is not None


def once(project: object, key: Hashable, read: Callable[[], T]) -> T:
    """`read()` the first time `key` is asked of `project` inside `shared`; the same value after. Outside, read. A
    value read while a write landed (on another thread) is handed back but not kept."""
    store = _store_of(project)
    if store is None:
        return read()
    found = store.values.get(key, _MISSING)       # (one lookup: a write on another thread may clear it meanwhile)
    if found is not _MISSING:
        return cast(T, found)
    generation = store.generation
    value = read()
    with _LOCK:
        if store.generation == generation:
            store.values[key] = value
    return value


def forget(project: object) -> None:
    """A write to `project` committed (or was tried): whatever a block kept of it may be stale."""
    if not _LIVE:
        return
    with _LOCK:
        for store in _LIVE.get(id(project), []):
            store.values.clear()
            store.generation += 1
