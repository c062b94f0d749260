"""Errors a user can act on. Their message is shown as-is: the first line says what went wrong."""

from __future__ import annotations


class RagevalError(Exception):
    """Base for failures that are the user's input or environment, not a bug.

    `cli_hint` / `gui_hint`: what to do next, phrased for the command line (flags) or for the app (dialogs), so a
    dialog never advises `--map`."""

    cli_hint: str | None = None
    gui_hint: str | None = None

    def __init__(self, *args: object, cli_hint: str | None = None, gui_hint: str | None = None) -> None:
        super().__init__(*args)
        if cli_hint is not None:
            self.cli_hint = cli_hint
        if gui_hint is not None:
            self.gui_hint = gui_hint

    def __reduce__(self) -> tuple[object, ...]:
        # rebuilt as it is, without its __init__ (several take keyword-only arguments that pickle cannot pass): an
        # error raised by a page's read in the app's helper process reaches the window whole
        return _rebuilt, (type(self), self.args, dict(self.__dict__))

    def for_cli(self) -> str:
        return f"{self}. {self.cli_hint}" if self.cli_hint else str(self)

    def for_gui(self) -> str:
        return f"{self}. {self.gui_hint}" if self.gui_hint else str(self)


def _rebuilt(kind: type[RagevalError], args: tuple[object, ...], fields: dict[str, object]) -> RagevalError:
    error = kind.__new__(kind)
    error.args = args
    error.__dict__.update(fields)
    return error


class ProjectRefused(RagevalError):
    """The file is not a project we may open; it was left untouched."""


class NeedsMigration(ProjectRefused):
    """The file is from an older schema and was opened read-only: it can be read after a migration only."""

    def __init__(self, message: str, *, version: int) -> None:
        super().__init__(message)
        self.version = version


class ProjectExists(RagevalError):
    pass


class ImportFailed(RagevalError):
    """An import was rejected as a whole; the project is unchanged."""

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None, cli_hint: str | None = None, gui_hint: str | None = None) -> None:
        self.file, self.row, self.column, self.detail = file, row, column, message
        self.cli_hint, self.gui_hint = cli_hint, gui_hint
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


class WriteFailed(RagevalError):
    """A write to the project did not happen (the transaction was rolled back).

    kind: "busy" (another process held the write lock past the busy timeout: worth retrying), "full" (disk or
    file size limit), "readonly", "io", "constraint" (the data broke a rule of the schema), "other".
    """

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def retryable(self) -> bool:
        return self.kind == "busy"


class JudgeConfigError(RagevalError):
    """A judge's settings cannot work (unknown metric or kind, a key where a name belongs, no model...)."""


class UnknownChoice(NotFound, JudgeConfigError):
    """A setting names something that is not there (a judge kind not installed, a measure or mode a kind does not
    have): a request that cannot be made, like a name that does not exist."""


def crash_log(exc: BaseException) -> str:
    """A bug's traceback, kept in a file of its own (never on a terminal, never in a dialog's first line): its path,
    to report it with."""
    import tempfile
    import traceback

    try:
        with tempfile.NamedTemporaryFile("w", prefix="rageval-crash-", suffix=".txt", delete=False) as fh:
            traceback.print_exception(exc, file=fh)
            return fh.name
    except OSError:
        return "the command line you ran"
