"""A judge kind registered for one test and taken away after it, as an installed plug-in would be."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rageval_desktop.core.judges import kinds


@contextmanager
def registered(kind: Any, source: str = "acme-judges", version: str = "0.1") -> Iterator[Any]:
    kinds._discover()
    kinds.register(kind, source=source, version=version)
    try:
        yield kind
    finally:
        for table in (kinds._KINDS, kinds._SOURCES, kinds._VERSIONS):
            table.pop(kind.name, None)
