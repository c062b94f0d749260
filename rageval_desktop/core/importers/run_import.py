"""Import the outputs of one RAG run: rows and their retrieved passages, linked to golden rows, in one
transaction. Rows and passages go through `executemany` with ids assigned up front: this is the hot path
(100k rows x 5 passages), and the single-writer lock makes `max(id) + 1` safe.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.base.text import lookalike, name_problem
from rageval_desktop.core.importers.common import ImportReport, keep_run_values
from rageval_desktop.core.importers.reader_process import ReaderProcess
from rageval_desktop.core.importers.readers import file_format
from rageval_desktop.core.importers.run_reader import PASSAGE_WIDTH, ROW_WIDTH, InProcess
from rageval_desktop.core.judges.kinds.peer import number
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Checkpoint, Project, inserted_id

PARALLEL_BYTES = 32 * 1024 * 1024   # a file this large is read and converted by a second process (reader_process)
COMPRESSED = 4                      # a Parquet or .gz file's bytes hold about this many times as much (a 30k-row
                                    # Parquet file of 24 MB, read in one process: 2.4 s; with a reader: 2.0)


def parallel(path: str | Path, size: int) -> bool:
    """Whether a file of `size` bytes is worth a reader process (what it holds, not its bytes, is the work)."""
    try:
        fmt, gz = file_format(Path(path))
    except ImportFailed:          # reading it says why, naming the file
        return size >= PARALLEL_BYTES
    return size * (COMPRESSED if gz or fmt == "parquet" else 1) >= PARALLEL_BYTES


RANK_BY = ("position", "score")


def import_run(project: Project, path: str | Path, run_name: str, *, fmt: str | None = None,
               mapping: dict[str, str] | None = None, replace: bool = False, notes: str | None = None,
               config: dict | None = None, rank_by: str = "position", ctx: TaskContext | None = None) -> ImportReport:
    """Rank is the passage's position in the file (first = 1); `rank_by="score"` orders each row's passages by
    score, highest first, instead. Passages given as text only are matched to corpus chunks by their text.

    The file is read, converted and written a chunk at a time inside one transaction: memory stays the same however
    long the file, and a bad row anywhere leaves the project as it was."""
    ctx = ctx or TaskContext()
    if rank_by not in RANK_BY:
        raise ImportFailed(f"rank_by is one of {', '.join(RANK_BY)}, not {rank_by!r}")
    run_name = run_name.strip()
    if not run_name:
        raise ImportFailed("the run needs a name", cli_hint="give it with --run NAME")
    problem = name_problem(run_name)
    if problem:
        raise ImportFailed(f"the run name {problem}; choose another")
    try:
        size = max(1, Path(path).stat().st_size)
    except OSError:      # reading says why, naming the file
        size = 1
    source: ReaderProcess | InProcess | None = None
    # (a frozen app, or an embedded Python, has no interpreter to start the reader with: it reads in one process)
    if parallel(path, size) and sys.executable and not getattr(sys, "frozen", False):
        try:
            source = ReaderProcess.start(path, fmt, mapping, rank_by, project.path)
        except OSError:
            source = None
    try:
        source = source or InProcess(path, fmt, mapping, rank_by)
        return _import(project, run_name, replace, notes, config, ctx, size, source)
    finally:
        if source is not None:
            source.close()


def _import(project: Project, run_name: str, replace: bool, notes: str | None, config: dict | None,
            ctx: TaskContext, size: int, source: ReaderProcess | InProcess) -> ImportReport:
    layout_name, file = source.layout(ctx)
    report = ImportReport(kind="run", file=file, layout=layout_name, rows_read=0, run=run_name)

    existing = project.reader().execute("SELECT id FROM runs WHERE name = ?", (run_name,)).fetchone()
    if existing and not replace:
        raise ImportFailed(f"a run named '{run_name}' already exists; choose another name or replace it",
                           file=file)
    if existing:
        project.backup(f"before-replacing-run-{run_name}")
    twin = lookalike(run_name, [n for (n,) in project.reader().execute("SELECT name FROM runs")])
    if twin:
        report.warnings.append(f"the run name '{run_name}' reads like the existing run '{twin}' (they differ only in "
                               "case or width): the two are easy to confuse in a gate or a report")

    ctx.report(0, size, "reading and writing run rows", force=True)
    # the commit leaves the log's copy into the file to a helper thread, while the run's values are read and kept
    with project.checkpoint_behind() as checkpoint:
        _write(project, run_name, notes, config, ctx, size, source, report, existing, checkpoint)
        ctx.report(size, size, "writing the project file", force=True)
    ctx.report(size, size, "done", force=True)
    report.warnings.extend(scores_kept(project, run_name))
    return report


SCORES_READ = 200      # rows of a run whose kept columns are looked at for another tool's scores


def scores_kept(project: Project, run_name: str) -> list[str]:
    """Columns another tool scored the run's rows in (a ragas result's faithfulness, a DeepEval test run's metrics),
    kept with the rows: a note saying how to audit them as a judge (core.judges.kinds.peer) — they were kept as text
    no reviewer could audit, and nothing said so."""
    import json

    counts: dict[str, int] = {}
    seen = 0
    for (text,) in project.reader().execute(
            "SELECT rr.metadata FROM run_rows rr JOIN runs r ON r.id = rr.run_id WHERE r.name = ? LIMIT ?",
            (run_name, SCORES_READ)):
        found = json.loads(text) if text else {}
        if not isinstance(found, dict):
            continue
        seen += 1
        for key, value in found.items():
            if isinstance(value, list) and key == "metricsData":
                for m in value:
                    if isinstance(m, dict) and number(m.get("score")) is not None:
                        name = f"metricsData/{m.get('name')}"
                        counts[name] = counts.get(name, 0) + 1
            elif number(value) is not None:
                counts[str(key)] = counts.get(str(key), 0) + 1
    columns = [k for k, n in counts.items() if n >= max(1, seen // 2) and k not in ("query_run",)]
    if not columns:
        return []
    first = columns[0]
    return [f"another tool's scores are kept with the rows in {', '.join(columns[:8])}"
            + (" …" if len(columns) > 8 else "") + f": audit them as a judge with rageval judges add PROJECT "
            f"--name peer-{first.split('/')[-1].lower().replace(' ', '-')} --kind peer --metric METRIC "
            f"--param column={first}, then rageval judge PROJECT --run {run_name} --judge that name"]


def _write(project: Project, run_name: str, notes: str | None, config: dict | None, ctx: TaskContext, size: int,
           source: ReaderProcess | InProcess, report: ImportReport, existing: tuple | None,
           checkpoint: Checkpoint) -> None:
    file, layout_name = report.file, report.layout
    # a new run's rows and passages refer only to rows that exist by construction (the run made here, golden rows
    # read under this write, the row ids given to each chunk: `_flush` checks its passages), so SQLite need not look
    # each reference up; replacing a run deletes the old one, whose rows must cascade
    with project.write("import run", changed=(Area.RUNS,), checked_references=bool(existing)) as conn:
        if existing:
            conn.execute("DELETE FROM runs WHERE id = ?", (existing[0],))
            report.warnings.append(f"replaced the previous run '{run_name}'")
        cur = conn.execute(
            "INSERT INTO runs (name, source_file, format, config, notes, golden_fingerprint, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_name, file, layout_name, json.dumps(config or {}), notes, project.golden_fingerprint(conn),
             utcnow()))
        run_id = inserted_id(cur)
        next_id = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM run_rows").fetchone()[0]
        position = 0
        for rows, passages, ids, read in source.chunks(run_id, next_id, ctx, conn):
            _flush(conn, rows, passages, run_id, ids, file)
            position += len(rows) // ROW_WIDTH
            ctx.check()
            ctx.report(min(read, size), size, f"{position:,} run rows written")
        summary = source.summary
        report.rows_read = report.added = position
        report.linked, report.unlinked = summary["linked"], summary["unlinked"]
        report.unlinked_examples = summary["unlinked_examples"]
        ctx.check()
        project.audit(conn, "import", "run", run_name, file=file, layout=layout_name, rows=position,
                      linked=report.linked, unlinked=report.unlinked)
    checkpoint.start()
    report.warnings[:0] = source.cell_warnings     # what the cells said first, however the file was read
    report.warnings += summary["warnings"]
    if report.unlinked:
        report.warnings.append(f"{report.unlinked} row(s) match no golden row (by id or question); "
                               "they get no retrieval metrics")
    if summary["unresolved"]:
        has_corpus = project.reader().execute("SELECT EXISTS (SELECT 1 FROM corpus_chunks)").fetchone()[0]
        report.warnings.append(
            f"{summary['unresolved']} linked row(s) list their retrieved passages as text without chunk ids"
            + (", and none of it matches a corpus chunk (exact text, whitespace aside)" if has_corpus else
               ", and the project has no corpus to match the text to")
            + ": retrieval metrics cannot be computed for them"
            + ("" if has_corpus else "; import the corpus first (rageval import corpus), then re-import this run "
               "with --replace"))
    ctx.report(size, size, "keeping the run's values for quick reads", force=True)
    report.warnings += keep_run_values(project, run_id)


ROW_INSERT = ("INSERT INTO run_rows (id, run_id, position, external_id, golden_id, question, answer, latency_ms, "
              "cost_usd, prompt_tokens, completion_tokens, metadata) VALUES ")
PASSAGE_INSERT = "INSERT INTO retrieved_passages (run_row_id, rank, chunk_id, text, score, in_prompt) VALUES "
PER_STATEMENT = 80   # rows a statement inserts (80 x 12 values: under the 999 an older SQLite allows); a statement
                     # of many rows steps SQLite's program once for all of them (150,000 passages: 0.60 -> 0.47 s)


def _insert(conn: sqlite3.Connection, insert: str, values: list, width: int) -> None:
    """Insert the rows laid end to end in `values` (`width` values each), `PER_STATEMENT` to a statement."""
    step = width * PER_STATEMENT
    whole = len(values) - len(values) % step
    if whole:
        many = insert + ", ".join(["(" + ", ".join("?" * width) + ")"] * PER_STATEMENT)
        for start in range(0, whole, step):
            conn.execute(many, values[start:start + step])
    if whole < len(values):
        rest = iter(values[whole:])
        conn.executemany(insert + "(" + ", ".join("?" * width) + ")", zip(*[rest] * width, strict=True))


def _flush(conn: sqlite3.Connection, rows: list, passages: list, run_id: int, ids: list[tuple[str, int]],
           file: str) -> None:
    import sqlite3

    if len(rows) % ROW_WIDTH or len(passages) % PASSAGE_WIDTH:
        raise RuntimeError("a chunk's rows or passages are cut short")
    try:
        _insert(conn, ROW_INSERT, rows, ROW_WIDTH)
    except sqlite3.IntegrityError:   # UNIQUE (run_id, external_id): name the row and the one it repeats
        _duplicate(conn, run_id, ids, rows[2], file)
        raise
    row_ids = passages[::PASSAGE_WIDTH]
    if row_ids and not rows[0] <= min(row_ids) <= max(row_ids) <= rows[-ROW_WIDTH]:
        raise RuntimeError("a passage refers to a row outside its chunk")   # (the chunk's rows' ids are one range)
    _insert(conn, PASSAGE_INSERT, passages, PASSAGE_WIDTH)


def _duplicate(conn: sqlite3.Connection, run_id: int, ids: list[tuple[str, int]], first_position: int,
               file: str) -> None:
    """Raise the repeated row id's error: the first record of this chunk (its external id and file row) whose id the
    run already has (from an earlier chunk, or earlier in this one)."""
    seen: dict[str, int] = {}
    for k, (external_id, file_row) in enumerate(ids):
        first = seen.get(external_id)
        if first is None:
            found = conn.execute("SELECT position FROM run_rows WHERE run_id = ? AND external_id = ? AND position < ?",
                                 (run_id, external_id, first_position)).fetchone()
            first = found[0] if found else None
        if first is not None:
            raise ImportFailed(f"duplicate row id '{external_id[:80]}' (first seen on row {first})",
                               file=file, row=file_row, column="id")
        seen[external_id] = first_position + k
