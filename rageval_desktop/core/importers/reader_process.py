"""A large run file is read and converted by a second process while this one writes.

Parsing and converting a row (JSON, cell checks, golden links) and inserting it (SQLite) each take about half of an
import's time, and both need the interpreter: two threads take turns, two processes work at once. The reader process
parses the file, converts each chunk and prepares its rows exactly as an import in one process would
(`run_import.InProcess`, reading the project through a read-only connection), and sends them as plain tuples; the
importing process only inserts them, inside its one transaction. Nothing is written by the reader, so everything that
makes an import all-or-nothing stays where it was.

The reader is `python -m rageval_desktop.core.importers.reader_process`: a fresh interpreter that never runs the
caller's script (as multiprocessing's spawn would) and is safe to start from a GUI's worker thread. Messages are
pickled tuples on its stdin and stdout (a full pipe holds the reader back: memory stays a few chunks deep). It is
stopped — killed if need be — when the import ends for any reason: done, failed, cancelled. Its errors come back as the
same errors, naming the file's row and column; if it dies without a word, the import fails and says so.
"""

from __future__ import annotations

import gc
import pickle
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, Protocol

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import ImportFailed, RagevalError
from rageval_desktop.core.importers import readers
from rageval_desktop.core.importers.run_reader import InProcess
from rageval_desktop.core.store.files import connect_read_only

_HEADER = struct.Struct("<Q")
READER_MODULE = "rageval_desktop.core.importers.reader_process"


class Sink(Protocol):
    """Where messages are sent: a pipe, or the reader's `_Outbox` in front of one."""

    def write(self, data: bytes, /) -> object: ...
    def flush(self) -> None: ...


def send(stream: Sink, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    """The next message, or None at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) != size:
        return None
    paused = gc.isenabled()     # a chunk is tens of thousands of tuples: the collector would walk them as they come
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        if paused:
            gc.enable()


def _error_fields(exc: BaseException) -> tuple[str, dict[str, Any]]:
    if isinstance(exc, ImportFailed):
        return "import", {"message": exc.detail, "file": exc.file, "row": exc.row, "column": exc.column,
                          "cli_hint": exc.cli_hint, "gui_hint": exc.gui_hint}
    if isinstance(exc, RagevalError):
        return "refused", {"message": str(exc), "cli_hint": exc.cli_hint, "gui_hint": exc.gui_hint}
    return "bug", {"message": "".join(traceback.format_exception(exc))}


class _Outbox:
    """The reader's stdout, written by a thread of its own: a chunk's few megabytes wait for the importer to read
    them through a 64 KB pipe, and the reader parses the next chunk meanwhile (written from the parsing thread, the
    reader parsed nothing while the importer inserted the chunk before: a 100k-row JSONL import took 6.0-6.2 s, now
    5.4-5.8 s). At most `depth` writes wait (two chunks): memory stays a few chunks deep."""

    def __init__(self, stream: BinaryIO, depth: int = 4) -> None:
        import queue
        import threading

        self.stream = stream
        self.error: OSError | None = None
        self.queue: Any = queue.Queue(maxsize=depth)
        self.thread = threading.Thread(target=self._pump, name="reader-outbox", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        while (data := self.queue.get()) is not None:
            if self.error is None:
                try:
                    self.stream.write(data)
                    self.stream.flush()
                except OSError as exc:      # the importer is gone or stopped us: the next write says so
                    self.error = exc

    def write(self, data: bytes) -> None:
        if self.error is not None:
            raise BrokenPipeError(str(self.error))
        self.queue.put(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        """Everything written is on its way (the process may end)."""
        self.queue.put(None)
        self.thread.join()


SETTINGS = ("CHUNK_ROWS", "BOMB_MIN_BYTES", "BOMB_RATIO")   # readers' limits: the reader reads as the importer would


def reader_main(path: str, fmt: str | None, mapping: dict[str, str] | None, rank_by: str, project_path: str,
                settings: dict[str, Any], out: Sink, inbox: IO[bytes]) -> None:
    """The reader process. It sends ("layout", name, file); then, once the importer says which run and row ids,
    ("chunk", rows, passages, ids, bytes read) per chunk and ("done", summary, cell warnings); or ("error", kind,
    fields) at any point."""

    for name, value in settings.items():
        setattr(readers, name, value)
    try:
        source = InProcess(path, fmt, mapping, rank_by)     # the steps of an import in one process, sent on
        send(out, ("layout", *source.layout(None)))
        start = receive(inbox)
        if start is None:      # the importer stopped before writing (the run exists, say)
            return
        run_id, next_id = start
        conn = connect_read_only(Path(project_path))
        try:
            for chunk in source.chunks(run_id, next_id, None, conn):
                send(out, ("chunk", *chunk))
            send(out, ("done", source.summary, source.cell_warnings))
        finally:
            conn.close()
    except (BrokenPipeError, KeyboardInterrupt):   # the importer is gone or stopped us
        return
    except BaseException as exc:  # every failure goes back to the importer, which raises it there
        kind, fields = _error_fields(exc)
        send(out, ("error", kind, fields))


class ReaderProcess:
    def __init__(self, process: subprocess.Popen[bytes], errors: IO[bytes]) -> None:
        self.process, self.errors = process, errors
        self.summary: dict[str, Any] = {}
        self.cell_warnings: list[str] = []
        self.started = False     # told which run and row ids: preparing chunks
        self.finished = False    # sent everything ("done")

    @classmethod
    def start(cls, path: str | Path, fmt: str | None, mapping: dict[str, str] | None, rank_by: str,
              project_path: Path) -> ReaderProcess:
        errors = tempfile.TemporaryFile()  # noqa: SIM115 - kept until close(): what a crashed reader said
        process = subprocess.Popen(
            [sys.executable, "-m", READER_MODULE], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=errors)
        assert process.stdin is not None
        settings = {name: getattr(readers, name) for name in SETTINGS}
        try:
            send(process.stdin, (str(path), fmt, mapping, rank_by, str(project_path), settings))
        except OSError:     # it died at once: its first message (none) says so
            pass
        return cls(process, errors)

    def _next(self, ctx: TaskContext) -> tuple:
        """The reader's next message (a cancelled import is noticed between chunks: one arrives every few dozen
        milliseconds)."""
        assert self.process.stdout is not None
        ctx.check()
        message = receive(self.process.stdout)
        if message is None:
            code = self.process.wait()
            self.errors.seek(0)
            said = self.errors.read()[-600:].decode("utf-8", "replace").strip()
            raise ImportFailed(f"the process reading the file stopped unexpectedly (exit code {code})"
                               + (f": {said}" if said else "") + "; nothing was imported")
        if message[0] == "error":
            raise _rebuild(message[1], message[2])
        got: tuple[Any, ...] = message
        return got

    def layout(self, ctx: TaskContext) -> tuple[str, str]:
        _, name, file = self._next(ctx)
        return name, file

    def chunks(self,
               run_id: int, next_id: int, ctx: TaskContext, conn: sqlite3.Connection | None = None) -> Iterator[tuple]:
        """(rows, passages, ids, bytes read) a chunk at a time; then `summary` and `cell_warnings` are set. (`conn`,
        the importer's, is not needed: the reader reads the project through its own.)"""
        assert self.process.stdin is not None
        send(self.process.stdin, (run_id, next_id))
        self.started = True
        while True:
            message = self._next(ctx)
            if message[0] == "done":
                self.summary, self.cell_warnings = message[1], message[2]
                self.finished = True
                return
            yield message[1:]

    def close(self) -> None:
        """Stop the reader: told to end if it never started preparing, left to exit if it finished, killed if it
        is still reading (the import failed or was cancelled mid-file: what it would send is not wanted)."""
        try:
            if not self.started and self.process.stdin is not None:
                send(self.process.stdin, None)
        except OSError:     # it is gone already
            pass
        if self.started and not self.finished:
            self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:  # unsent bytes to a reader that is gone
                pass
        self.errors.close()


def _rebuild(kind: str, fields: dict[str, Any]) -> BaseException:
    if kind == "import":
        message = fields.pop("message")
        return ImportFailed(message, **fields)
    if kind == "refused":
        exc = RagevalError(fields["message"])
        exc.cli_hint, exc.gui_hint = fields["cli_hint"], fields["gui_hint"]
        return exc
    return RuntimeError(f"the process reading the file failed:\n{fields['message']}")


def _main() -> None:
    # The reader's objects are short-lived and acyclic (a chunk's records, dropped once sent): the cyclic collector
    # only walks them over and over (a fifth of the reader's time). Memory stays a few chunks deep without it.
    gc.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl+C is the importer's: it stops this process (no traceback)
    out, inbox = _Outbox(sys.stdout.buffer), sys.stdin.buffer
    sys.stdout = sys.stderr          # the pipe carries messages only: anything printed goes to the error log
    try:
        args = receive(inbox)
        if args is not None:
            path, fmt, mapping, rank_by, project_path, settings = args
            reader_main(path, fmt, mapping, rank_by, project_path, settings, out=out, inbox=inbox)
    finally:
        out.close()


if __name__ == "__main__":
    _main()
