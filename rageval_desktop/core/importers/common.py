"""What every import shares: reading + mapping + layout choice, and the report it returns."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.errors import ImportFailed, RagevalError
from rageval_desktop.core.base.text import normalise_passage
from rageval_desktop.core.importers.cells import Cells
from rageval_desktop.core.importers.layouts import NATIVE_RUN, Layout, choose_layout, column_run_records
from rageval_desktop.core.importers.readers import Apart, ArrowChunk, skipped, stream_parts
from rageval_desktop.core.metrics import values as run_values

if TYPE_CHECKING:   # (the reader process imports this module and never opens a project: 16 ms of its start)
    from rageval_desktop.core.store.project import Project


@dataclass
class ImportReport:
    kind: str
    file: str
    layout: str
    rows_read: int
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    run: str | None = None
    linked: int = 0
    unlinked: int = 0
    unlinked_examples: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)   # golden fields the file leaves out: kept as stored on updates
    fresh_ids: list[str] = field(default_factory=list)   # golden rows with a new question: not yet checked for
                                                         # near-duplicates (the count is reported, not the ids)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        ids = out.pop("fresh_ids")
        if self.kind == "golden set":
            out["new_questions"] = len(ids)
        return out

    def summary(self) -> str:
        if self.kind == "run":
            rows = "1 row" if self.added == 1 else f"{self.added} rows"
            text = (f"imported run '{self.run}': {rows} from {self.file} ({self.layout} format); "
                    f"{self.linked} linked to golden rows, {self.unlinked} unlinked")
        else:
            text = (f"imported {self.kind} from {self.file} ({self.layout} format): {self.added} added, "
                    f"{self.updated} updated, {self.unchanged} unchanged")
            if self.kept and self.updated + self.unchanged:
                names = {"gold_answer": "gold answer", "gold_chunk_ids": "gold chunk ids", "slice_tag": "slice"}
                text += ("; not in the file, kept as stored: "
                         + ", ".join(names.get(f, f) for f in self.kept))
        return text


def load(path: str | Path, kind: str, fmt: str | None, mapping: dict[str, str] | None,
         warnings: list[str] | None = None) -> tuple[Layout, list, str]:
    """Read the file, rename mapped columns, pick the layout and convert: (layout, records, file name). Warnings
    about cells (text a spreadsheet probably cut) are appended to `warnings`."""
    layout, chunks, name = stream_load(path, kind, fmt, mapping, warnings)
    return layout, [record for chunk in chunks for record in chunk], name


def stream_load(path: str | Path, kind: str, fmt: str | None, mapping: dict[str, str] | None,
                warnings: list[str] | None = None, size: int | None = None,
                progress: dict[str, int] | None = None,
                columns_apart: bool = False) -> tuple[Layout, Iterator[list], str]:
    """`load` a chunk at a time: the layout is chosen from the first chunk's columns, then each chunk is converted as
    it is read (record rows and messages name the file's rows). A layout whose records span rows (open-rag-eval:
    one row per passage) is converted whole. `progress["read"]`: the bytes of the file read so far.
    `columns_apart`: a native run read from Parquet is checked a column at a time where every cell is plain
    (`layouts.column_run_records`): such a chunk comes as a `RunChunk`, its records' `retrieved` empty and its
    passages apart."""
    import itertools

    path = Path(path)

    def native_from_the_start(names: list[str]) -> bool:
        """Whether the first chunk's names make a native run (any other layout, or a refusal, is chosen below as
        for every file)."""
        try:
            return choose_layout(kind, names, fmt, path.name) is NATIVE_RUN
        except ImportFailed:
            return False

    apart = Apart(native_from_the_start if columns_apart and not mapping else None)
    progress = progress if progress is not None else {}
    chunks = stream_parts(path, size, progress, apart)
    first = next(chunks)
    columns = list(dict.fromkeys(first.names if isinstance(first, ArrowChunk) else
                                 [key for row in first for key in row]))
    if mapping:
        absent = [src for src in mapping if src not in columns]
        if absent:
            raise ImportFailed(f"the column mapping names column(s) the file does not have: {', '.join(absent)} "
                               f"(found: {', '.join(columns)})", file=path.name)
        columns = [mapping.get(col, col) for col in columns]
    layout = choose_layout(kind, columns, fmt, path.name)
    cells = Cells(path.name)
    if warnings is not None:
        cells.warnings = warnings

    def renamed(chunk: list[dict] | ArrowChunk) -> list[dict]:
        rows = chunk.rows() if isinstance(chunk, ArrowChunk) else chunk
        return [{mapping.get(k, k): v for k, v in row.items()} for row in rows] if mapping else rows

    def converted() -> Iterator[list]:
        yield from parts()
        cells.warnings.extend(skipped(progress))

    def parts() -> Iterator[list]:
        if layout.name == "open-rag-eval":
            yield layout.convert([row for chunk in itertools.chain([first], chunks) for row in renamed(chunk)], cells)
            return
        offset = 0
        for chunk in itertools.chain([first], chunks):
            cells.offset = offset
            records: list | None = column_run_records(chunk) if isinstance(chunk, ArrowChunk) else None
            if records is None:      # any chunk not read as columns is read one row at a time
                records = layout.convert(renamed(chunk), cells)
            for rec in records:
                rec.row += offset
            offset += len(chunk)
            yield records

    return layout, converted(), path.name


def check_unique(values: list[tuple[int, str | None]], file: str, column: str, what: str) -> None:
    """Fail on the first repeated value, naming both rows."""
    seen: dict[str, int] = {}
    for row, value in values:
        if value is None:
            continue
        if value in seen:
            raise ImportFailed(f"duplicate {what} '{value[:80]}' (first seen on row {seen[value]})",
                               file=file, row=row, column=column)
        seen[value] = row


class CorpusText:
    """Corpus chunk ids by their text, whitespace aside (core.text.normalise_passage): the corpus is read once, when
    first asked, and kept as 16-byte digests (a large corpus's text is not held). The first chunk of a repeated text
    wins."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.index: dict[bytes, str] | None = None

    def chunk_id(self, text: str) -> str | None:

        if self.index is None:
            self.index = {}
            for chunk_id, chunk in self.conn.execute("SELECT chunk_id, text FROM corpus_chunks ORDER BY doc_id, "
                                                     "position"):
                self.index.setdefault(_digest(normalise_passage(chunk)), chunk_id)
        return self.index.get(_digest(normalise_passage(text))) if self.index else None


def _digest(text: str) -> bytes:
    import hashlib

    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def chunks_by_text(conn: sqlite3.Connection, wanted: set[str]) -> dict[str, str]:
    """Corpus chunk ids of (normalised) passage texts given without ids."""
    if not wanted:
        return {}
    corpus = CorpusText(conn)
    return {text: cid for text in wanted if (cid := corpus.chunk_id(text))}


def keep_run_values(project: Project, run_id: int | None = None) -> list[str]:
    """A large run's values kept for `metrics` and `compare` (core.metrics.values) — or, with no run, those of every
    large run that a change to the golden set took away: a cache, so a write that fails here loses nothing the
    import wrote — the reads then join the tables, as before — and says so."""
    where, args = ("", ()) if run_id is None else (" AND run_id = ?", (run_id,))
    if not project.reader().execute(f"SELECT EXISTS (SELECT 1 FROM run_counts WHERE rows >= ?{where})",
                                    (run_values.KEEP_FROM, *args)).fetchone()[0]:
        return []     # no run large enough to keep: what keeps them is not even imported (30 ms)
    from rageval_desktop.core.metrics.rowdata import keep_missing_values, keep_values  # heavy: not the reader

    try:
        if run_id is None:
            keep_missing_values(project)
        else:
            keep_values(project, run_id)
    except (RagevalError, sqlite3.Error) as exc:
        whose = "runs'" if run_id is None else "run's"
        return [f"the {whose} values were not kept for quick reads ({exc}); metrics read their rows instead"]
    return []
