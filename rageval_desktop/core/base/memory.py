"""Memory given back to the system: glibc keeps what a process frees (in its arenas) until asked to return it."""

from __future__ import annotations

import sys
from collections.abc import Callable


def glibc(name: str) -> Callable[..., object] | bool:
    """A function of glibc's, or False elsewhere (macOS, Windows, musl)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            found: Callable[..., object] = getattr(ctypes.CDLL("libc.so.6"), name)
            return found
        except (OSError, AttributeError):     # not glibc (musl has no malloc_trim)
            pass
    return False


def give_back() -> None:
    """What the process has freed, returned to the system where glibc allows it (`malloc_trim`); elsewhere nothing."""
    trim = glibc("malloc_trim")
    if callable(trim):
        trim(0)
