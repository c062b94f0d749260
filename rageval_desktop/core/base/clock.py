"""The one clock format of the project file: UTC, ISO 8601, milliseconds."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
