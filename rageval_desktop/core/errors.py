"""Errors a user can act on. Their message is shown as-is: the first line says what went wrong."""

from __future__ import annotations


class RagevalError(Exception):
    """Base for failures that are the user's input or environment, not a bug."""


class ProjectRefused(RagevalError):
    """The file is not a project we may open; it was left untouched."""


class ProjectExists(RagevalError):
    pass


class ImportFailed(RagevalError):
    """An import was rejected as a whole; the project is unchanged."""

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None) -> None:
        self.file, self.row, self.column, self.detail = file, row, column, message
        where = []
        if file:
            where.append(file)
        if row is not None:
            where.append(f"row {row}")
        if column:
            where.append(f"column '{column}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class NotFound(RagevalError):
    pass
