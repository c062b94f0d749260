"""One run as a table of rows: slice, retrieval metrics against gold ids, judge scores on 0–100, latency, cost.

Everything a dashboard, a comparison, the gate or the failure browser needs is computed here once, from a few
set-based queries (no per-row SQL), so 100k rows x 3 judges stays in seconds.

The unit of every mean, CI and n is the question (`per_question`): a golden question a run answered more than once
(repeats, e.g. open-rag-eval's query_run 1 and 2) counts once, with its numbers averaged over its repeats; a row
not linked to the golden set is its own question. `metrics`, `compare` and `gate` count the same way.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.imports import import_frozen
from rageval_desktop.core.base.scoring import citations, nuggets, umbrela
from rageval_desktop.core.base.vocab import METRICS, NO_SLICE, UNLINKED
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.metrics import retrieval
from rageval_desktop.core.metrics import values as run_values
from rageval_desktop.core.metrics.ppi import applies
from rageval_desktop.core.review.agreement import agreement, consensus, human_frame
from rageval_desktop.core.review.licence import last_audit
from rageval_desktop.core.review.weights import target_weights
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project
from rageval_desktop.core.store.queries import run_id as find_run

if TYPE_CHECKING:
    from numpy import ndarray
    from pandas import DataFrame, Index

DEFAULT_PROMPT_K = 5  # passages assumed to reach the prompt when a run does not say (in_prompt)


@dataclass
class RunData:
    run: str
    run_id: int
    frame: DataFrame                             # indexed by run row id
    metrics: list[str]                           # judge metrics with at least one active judge that scored
    judges: dict[str, list[str]] = field(default_factory=dict)   # metric -> active judge names used
    retired: list[dict[str, Any]] = field(default_factory=list)  # judges left out, and why
    unsettled: list[dict[str, Any]] = field(default_factory=list)  # judges counted but not (yet) kept by an audit
    ks: tuple[int, ...] = retrieval.DEFAULT_KS
    golden_changed: bool = False
    rated: dict[str, int] = field(default_factory=dict)           # metric -> rows with a human rating (PPI)
    # every judgment of the run's rows, as numbers (`_judgment_frame`: row_id, judge_id, passage_rank, status,
    # score), for what is worked out per judge (the unscored rows); None once let go
    judgments: DataFrame | None = None
    hits: retrieval.Hits | None = None   # a lean load's retrieval metrics, when they are not columns of the frame
    _positions: ndarray | None = None
    _repeated: bool | None = None

    def judgment_positions(self) -> ndarray:
        """Each judgment's row position in the frame (-1: not one of its rows), looked up once."""
        if self._positions is None:
            assert self.judgments is not None, "the run's judgments were let go before their positions were asked"
            self._positions = positions(self.frame.index, self.judgments["row_id"].to_numpy())
        return self._positions

    def column(self, name: str) -> ndarray:
        """A column of the frame, or a retrieval metric a lean load computes when asked (on 0-100, as the frame's)."""
        if name in self.frame or not self._computed(name):
            values: ndarray = self.frame[name].to_numpy()
            return values
        assert self.hits is not None
        values = self.hits.column(name)
        values *= 100.0       # (in place: the column is this call's own)
        return values

    def has(self, name: str) -> bool:
        return name in self.frame or self._computed(name)

    def repeated(self) -> bool:
        """Whether some question was answered more than once (its repeats are averaged: `per_question`)."""
        if self._repeated is None:
            self._repeated = not unique(self.frame["qkey"].to_numpy())
        return self._repeated

    def let_go_judgments(self) -> None:
        """Let go of the judgments and where their rows are, once what is worked out per judge is done (a summary
        reads the frame's columns: a million rows' two judges held 54 MB through it)."""
        self.judgments = self._positions = None

    def let_go(self) -> None:
        """Keep what is said of the run — its judges, its rows' count — and let go of its numbers (a comparison
        holds the questions it compares, not both runs' tables)."""
        self.frame = self.frame.iloc[:, :0]
        self.judgments = self.hits = self._positions = None

    def _computed(self, name: str) -> bool:
        return self.hits is not None and retrieval.is_retrieval(name)


def load_run(project: Project, run: str, ks: tuple[int, ...] = retrieval.DEFAULT_KS,
             judges: Collection[str] | None = None, *, lean: bool = False) -> RunData:
    """The run's numbers, one row per run row. No text: a million rows' questions and answers would be most of the
    memory, and only the rows a view shows need theirs (`texts`). `judges`: only these active judges' scores (None:
    every active judge's). `lean`: only what a summary reads (`RunData.column`): no raw scores, no prompt cut, and
    for a run without repeats the retrieval metrics computed when asked for, not held as columns."""
    rid = find_run(project, run)
    # a large run's values kept once (core.metrics.values) are the reads' own outputs; the parts not kept — the
    # rows, the judgments and the passages' side (gold hits, prompt cut) — are read on helper threads, each with
    # its connection (SQLite lets go of the GIL while it works: two cores), while this one imports pandas, which
    # only the frames need (0.3 s of a 0.55 s `metrics` at 10k rows; the reads used to wait for it)
    from concurrent.futures import ThreadPoolExecutor

    kept = run_values.stored(project.reader(), rid)
    with ThreadPoolExecutor(max_workers=3) as pool:
        reads = [_Ready(kept.pop(part)) if part in kept else pool.submit(read, project, rid)
                 for part, read in zip(run_values.PARTS, READS, strict=True)]
        import_frozen("pandas")   # (meanwhile; with the cycle collector paused: core.base.imports)
        return _load_run(project, run, rid, ks, reads, judges, lean)


class _Ready:
    """A value at hand where a read's future would be."""

    def __init__(self, value: run_values.Read) -> None:
        self.value = value

    def result(self) -> run_values.Read:
        return self.value


PartReader = Callable[[Project, int, list[str], bool], list[tuple[str, bytes]]]


def keep_values(project: Project, rid: int, *, minimum: int | None = None, parallel: bool = True,
                read: PartReader | None = None) -> tuple[str, ...]:
    """Read and keep the parts of a run's values that are not kept (core.metrics.values) when it has `minimum`
    rows or more (None: `values.KEEP_FROM`); returns the parts kept. Called when a run's rows land and when a job
    on them ends. The parts are first marked as being written; the reads run on helper threads (one after another
    with `parallel=False`, as the app's background upkeep reads: at 200k rows 0.6 s and +136 MB resident at once,
    1.0 s and +87 MB one by one); a part is kept only if nothing it was read from changed meanwhile (the triggers
    took its mark away). A write that fails raises (WriteFailed) and keeps nothing; the reads then join the tables,
    as before. `read`: what reads and encodes the parts instead of `read_parts` (the app's, in its helper process,
    on the file opened there: the marks, committed first, are what it reads against)."""
    conn = project.reader()
    found = conn.execute("SELECT rows FROM run_counts WHERE run_id = ?", (rid,)).fetchone()
    if found is None or found[0] < (run_values.KEEP_FROM if minimum is None else minimum):
        return ()
    missing = [part for part in run_values.PARTS if part not in run_values.stored(conn, rid)]
    if not missing:
        return ()
    with project.write("keep a run's values", changed=(Area.CACHES,)) as w:
        w.executemany("INSERT INTO run_values (run_id, part, data) VALUES (?, ?, NULL) "
                      "ON CONFLICT (run_id, part) DO UPDATE SET data = NULL", [(rid, part) for part in missing])
    blobs = (read or read_parts)(project, rid, missing, parallel)
    with project.write("keep a run's values", changed=(Area.CACHES,)) as w:
        kept = [part for part, blob in blobs
                if w.execute("UPDATE run_values SET data = ? WHERE run_id = ? AND part = ? AND data IS NULL",
                             (blob, rid, part)).rowcount]
    return tuple(kept)


def read_parts(project: Project, rid: int, parts: list[str], parallel: bool = True) -> list[tuple[str, bytes]]:
    """The run's value `parts` read and encoded for keeping: (part, blob), in `parts`' order. Reads only."""
    from concurrent.futures import ThreadPoolExecutor

    reads = dict(zip(run_values.PARTS, READS, strict=True))
    with ThreadPoolExecutor(max_workers=len(parts) if parallel else 1) as pool:
        futures = {part: pool.submit(reads[part], project, rid) for part in parts}
        return [(part, run_values.encode(part, future.result())) for part, future in futures.items()]


def keep_missing_values(project: Project, *, parallel: bool = True,
                        read: PartReader | None = None) -> dict[int, tuple[str, ...]]:
    """Keep every large run's values that are not kept (`keep_values`), as after a change to the golden set took
    them away from the runs linked to it: run id -> the parts kept. For what writes the golden set (a golden import,
    the app after an edit); a read never keeps."""
    out = {}
    for rid, _, _ in run_values.not_kept(project.reader()):
        if kept := keep_values(project, rid, parallel=parallel, read=read):
            out[rid] = kept
    return out


STATUSES = ("ok", "unparsed", "error")


def numeric_columns(conn: sqlite3.Connection, columns: list[tuple[str, type]], source: str,
                    params: tuple[object, ...] = (),
                    strings: list[str] | None = None) -> Any:
    """Number columns of a query's rows, read in one step: SQLite writes each column as one JSON array (a double
    that holds a whole number as that integer, any other with 17 significant digits, so each under 1e100 in
    magnitude comes back exactly (SQLite's printf rounds the last digit of some larger ones);
    NULL as null, read as NaN; an infinity as a string numpy reads), and orjson parses it. A million rows never
    become a million Python tuples, and SQLite does the work without holding the interpreter, so other threads run
    meanwhile. (ADBC's SQLite driver reads Arrow buffers 3x faster, but it links a second copy of SQLite into the
    process, whose POSIX locks the first copy's connections to the same file do not see — SQLite's how-to-corrupt
    page, 2.2 — and it refused reads while the app's writer held the file: not used. numpy's text parser took 0.33 s
    per 2M values, orjson and numpy's list conversion 0.07-0.14 s.)
    `columns`: (SQL expression over `source`'s columns, int or float); int columns must not be NULL. With `strings`
    (expressions too), returns (the number columns, the text columns as lists: str or None)."""
    parts = []
    for expr, kind in columns:
        if kind is int:
            parts.append(f"group_concat({expr})")
        else:
            value = f"({expr})"
            parts.append(f"group_concat(CASE WHEN {value} IS NULL THEN 'null' "
                         f"WHEN {value} = CAST({value} AS INTEGER) THEN CAST({value} AS INTEGER) "
                         f"WHEN abs({value}) <= 1.7976931348623157e308 THEN printf('%!.17g', {value}) "
                         f"WHEN {value} > 0 THEN '\"inf\"' ELSE '\"-inf\"' END)")
    parts += [f"json_group_array({expr})" for expr in strings or []]
    n, *found = conn.execute(f"SELECT COUNT(*), {', '.join(parts)} FROM ({source})", params).fetchone()
    # imported after the query: a helper thread's read need not wait for numpy's import
    import numpy as np
    import orjson

    out = []
    for (_, kind), text in zip(columns, found[:len(columns)], strict=True):
        values = np.array(orjson.loads(f"[{text}]") if text else [], dtype=np.int64 if kind is int else float)
        if len(values) != n:   # (the texts are SQLite's own: a mismatch is a bug, never a silent shift)
            raise RuntimeError(f"read {len(values)} values of {n} rows")
        out.append(values)
    if strings is None:
        return out
    lists = [orjson.loads(text) for text in found[len(columns):]]
    if any(len(values) != n for values in lists):
        raise RuntimeError(f"read {[len(v) for v in lists]} texts of {n} rows")
    return out, lists


def row_range(conn: sqlite3.Connection, rid: int) -> tuple[int, int] | None:
    """(first id, last id) when the run's rows are exactly the ids between them — as one import writes them, in one
    transaction — else None."""
    low, high, rows = conn.execute(
        "SELECT MIN(id), MAX(id), (SELECT rows FROM run_counts WHERE run_id = ?1) FROM run_rows WHERE run_id = ?1",
        (rid,)).fetchone()
    return (low, high) if low is not None and rows == high - low + 1 else None


def _judgment_read(project: Project, rid: int) -> tuple[Any, ...]:
    """Every judgment of the run's rows as number columns (`numeric_columns`): row, judge, passage rank, status
    (0 ok, 1 unparsed, 2 error), score."""
    with project.extra_reader() as conn:
        ids = row_range(conn, rid)
        # the run's rows one range of ids: one range of the verdicts' index (1.15 s at a million rows; looked up row
        # by row, 1.36 s)
        where, params = (("x.run_row_id BETWEEN ? AND ?", ids) if ids else
                         ("x.run_row_id IN (SELECT id FROM run_rows WHERE run_id = ?)", (rid,)))
        return tuple(numeric_columns(
            conn, [("run_row_id", int), ("judge_id", int), ("passage_rank", int), ("status", int), ("score", float)],
            "SELECT x.run_row_id, x.judge_id, x.passage_rank, CASE x.status WHEN 'ok' THEN 0 WHEN 'unparsed' THEN 1 "
            f"ELSE 2 END AS status, x.score FROM judgments x WHERE {where}", params))


def _judgment_frame(read: tuple[Any, ...]) -> DataFrame:
    """`_judgment_read`'s columns as a frame (row_id, judge_id, passage_rank, status as a category, score)."""
    import numpy as np
    import pandas as pd

    row_id, judge_id, rank, status, score = read
    # the read's arrays are the frame's columns (copy=False: a frame made from a dict copied them into blocks first)
    return pd.DataFrame({"row_id": row_id, "judge_id": judge_id, "passage_rank": rank,
                         "status": pd.Categorical.from_codes(status.astype(np.int8), categories=list(STATUSES)),
                         "score": score}, copy=False)


# Each (row, place in its golden row's list, passage) where a retrieved passage is that gold chunk: the row's golden
# list is read where the row is (json_each per row, the passages by index) — materialising every golden row's list
# first cost 3.0 s against 1.9 s at a million rows. Grouped by numpy, not SQL: SQLite's GROUP BY over a million rows
# took 1.45 s where the rows alone take 1.1 s.
GOLD_HITS = ("SELECT rr.id AS row_id, j.key AS k, p.rank AS rank FROM run_rows rr "
             "JOIN golden_rows g ON g.id = rr.golden_id CROSS JOIN json_each(g.gold_chunk_ids) j "
             "CROSS JOIN retrieved_passages p ON p.run_row_id = rr.id AND p.chunk_id = j.value WHERE rr.run_id = ?")


def gold_hits(rows: Any, keys: Any, ranks: Any) -> tuple[Any, Any]:
    """(row, best rank) of each distinct gold chunk a row retrieved, from GOLD_HITS' triples, ordered by row and the
    chunk's first place in the golden list. A chunk retrieved twice counts once, at its best rank; a chunk listed
    twice counts once: its places share their best rank, which two different chunks never do (a passage has one
    id)."""
    import numpy as np

    def first_of(*columns: Any) -> Any:    # the first of each run of equal values (the columns sorted)
        keep = np.ones(len(columns[0]), dtype=bool)
        if len(keep) > 1:
            keep[1:] = np.logical_or.reduce([c[1:] != c[:-1] for c in columns])
        return keep

    order = np.lexsort((ranks, keys, rows))            # each place's best rank
    rows, keys, ranks = rows[order], keys[order], ranks[order]
    keep = first_of(rows, keys)
    rows, keys, ranks = rows[keep], keys[keep], ranks[keep]
    order = np.lexsort((keys, ranks, rows))            # each chunk once, at its first place
    rows, keys, ranks = rows[order], keys[order], ranks[order]
    keep = first_of(rows, ranks)
    rows, keys, ranks = rows[keep], keys[keep], ranks[keep]
    order = np.lexsort((keys, rows))
    return rows[order], ranks[order]


def _passage_side(project: Project, rid: int) -> tuple[Any, Any, Any, Any]:
    """(rows with a gold chunk retrieved and its best rank — one per gold chunk found; rows that say which passages
    reached the prompt and how many did)."""

    with project.extra_reader() as conn:
        hit_rows, hit_ranks = gold_hits(*numeric_columns(
            conn, [("row_id", int), ("k", int), ("rank", int)], GOLD_HITS, (rid,)))
        # a run whose rows are one range of ids (one import): its passages are one range of the index
        ids = row_range(conn, rid)
        where, params = (("p.run_row_id BETWEEN ? AND ?", ids) if ids else
                         ("p.run_row_id IN (SELECT id FROM run_rows WHERE run_id = ?)", (rid,)))
        prompt_rows, prompt_k = numeric_columns(
            conn, [("row_id", int), ("k", int)],
            "SELECT p.run_row_id AS row_id, SUM(p.in_prompt) AS k FROM retrieved_passages p "
            f"WHERE {where} AND p.in_prompt IS NOT NULL GROUP BY p.run_row_id", params)
    return hit_rows, hit_ranks, prompt_rows, prompt_k


def _load_run(project: Project, run: str, rid: int, ks: tuple[int, ...], reads: list[Any],
              judges: Collection[str] | None, lean: bool) -> RunData:
    import numpy as np

    conn = project.reader()
    # each read is let go of as soon as its frame is made (a million rows' reads were held to the end: 145 MB)
    base = _rows_frame(reads.pop(0).result())
    data = RunData(run=run, run_id=rid, frame=base, metrics=[], ks=ks)
    # the judges' side first: the judgments are read sooner than the gold hits, and the work on them overlaps the rest
    # of that read (0.3 s at a million rows)
    data.judgments = _judgment_frame(reads.pop(0).result())
    _add_judge_scores(project, data, data.judgments, judges, raw=not lean)
    if lean:   # what is still worked out per judge (`dashboard.unscored`) reads judges, ranks, statuses and positions
        data.judgment_positions()
        data.judgments = data.judgments.drop(columns=["row_id", "score"])
    _add_human(project, data)
    data.unsettled = _unsettled(project, data)
    hit_rows, hit_ranks, prompt_rows, prompt_k = reads.pop(0).result()   # read on the helper thread meanwhile
    hits = retrieval.Hits(base.index.to_numpy(), base["n_gold"].to_numpy(), hit_rows, hit_ranks)
    if lean and not data.repeated():
        # what a summary of a run without repeats reads of its retrieval metrics, a column at a time (`column`):
        # fourteen columns of a million rows were 112 MB
        data.hits = hits
    else:
        for name in retrieval.names(ks):
            base["first_gold_rank" if name == "first_rank" else name] = (
                hits.column(name) if name == "first_rank" else hits.column(name) * 100.0)
        k = np.full(len(base), DEFAULT_PROMPT_K, dtype=np.int64)
        k[positions(base.index, prompt_rows)] = prompt_k     # rows that say which passages reached the prompt
        base["prompt_k"] = k
    fingerprint = conn.execute("SELECT golden_fingerprint FROM runs WHERE id = ?", (rid,)).fetchone()[0]
    data.golden_changed = bool(fingerprint) and fingerprint != project.golden_fingerprint()
    return data


def _rows_read(project: Project, rid: int) -> tuple[Any, ...]:
    """The run's rows, read in one query: numbers and texts each as one JSON array (`numeric_columns`; a million
    fetched tuples took 1.4 s, orjson reads a million ids in 0.07 s) — ids, positions, golden rowid (-1: unlinked),
    gold-id count, latency, cost, each row's slice as a code into the slices' names (sorted; "(unlinked)" for a row
    without one) — and each unlinked row's open-rag-eval query id. The rows' golden ids are not read: only the rows
    a view shows need theirs (`texts`), and a million of them were 60 MB."""
    # a row's distinct gold ids, counted by SQLite: a list with a string in it and no comma holds that one string (no
    # comma separates two elements) and needs no JSON parse (0.3 s at a million rows); a list of one or none needs no
    # json_each
    n_gold = ("CASE WHEN g.rowid IS NULL THEN 0 "
              "WHEN instr(g.gold_chunk_ids, ',') = 0 AND instr(g.gold_chunk_ids, '\"') > 0 THEN 1 "
              "WHEN json_array_length(g.gold_chunk_ids) < 2 THEN json_array_length(g.gold_chunk_ids) "
              "ELSE (SELECT COUNT(DISTINCT value) FROM json_each(g.gold_chunk_ids)) END")
    source = (f"SELECT rr.id, rr.position, COALESCE(g.rowid, -1) AS golden, {n_gold} AS n_gold, rr.latency_ms, "
              "rr.cost_usd, g.slice_tag FROM run_rows rr LEFT JOIN golden_rows g ON g.id = rr.golden_id "
              "WHERE rr.run_id = ?")
    with project.extra_reader() as conn:
        numbers, (slices,) = numeric_columns(
            conn, [("id", int), ("position", int), ("golden", int), ("n_gold", int), ("latency_ms", float),
                   ("cost_usd", float)], source, (rid,), strings=["slice_tag"])
        alone = dict(conn.execute(
            "SELECT id, json_extract(metadata, '$.query_id') FROM run_rows WHERE run_id = ? AND golden_id IS NULL",
            (rid,))) if (numbers[2] == -1).any() else {}
    return (*numbers, *slice_codes(slices), alone)


def slice_codes(slices: list[str | None]) -> tuple[ndarray, list[str]]:
    """(each row's code, the names in sorted order) of the rows' slices, a row without one "(unlinked)": what
    pandas.factorize(sort=True) gives, without pandas (the reads run while it is imported)."""
    import numpy as np

    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault("(unlinked)" if s is None else s, len(index)) for s in slices),
                        dtype=np.int64, count=len(slices))
    names = sorted(index)
    rank = np.empty(len(index), dtype=np.int64)
    rank[[index[name] for name in names]] = np.arange(len(names))
    return rank[codes], names


# each part of a run's values (core.metrics.values.PARTS) and the read it is the output of
READS = (_rows_read, _judgment_read, _passage_side)


def _no_slice(codes: ndarray, names: list[str], unlinked: ndarray) -> tuple[ndarray, list[str]]:
    """A linked row whose golden row has no slice is in NO_SLICE, not UNLINKED: the read (and values kept before
    this) name both UNLINKED (a project without slices showed "(unlinked)" for every linked row)."""
    import numpy as np

    if UNLINKED not in names:
        return codes, names
    at = names.index(UNLINKED)
    bare = (codes == at) & ~unlinked
    if not bare.any():
        return codes, names
    codes = np.where(bare, len(names), codes)
    names = [*names, NO_SLICE]
    if not (codes == at).any():                     # every row linked: no row is UNLINKED
        codes, names = np.where(codes > at, codes - 1, codes), [n for n in names if n != UNLINKED]
    return codes, names


def _rows_frame(read: tuple[Any, ...]) -> DataFrame:
    """The run's rows in order (`_rows_read`): slice, gold-id count, question key, latency, cost. The
    question key is an integer: the golden row's rowid for a linked row, a negative code for an unlinked one (its
    open-rag-eval query id, or the row itself)."""
    import numpy as np
    import pandas as pd

    row_ids, positions, golden, n, latency, cost, codes, names, alone = read
    if len(positions) > 1 and not (positions[1:] >= positions[:-1]).all():    # (as read, usually: no copies)
        order = np.argsort(positions, kind="stable")           # the run's order
        row_ids, golden, n, latency, cost = row_ids[order], golden[order], n[order], latency[order], cost[order]
        codes = codes[order]
    present = np.zeros(len(names), dtype=bool)             # (only the slices the rows have, as factorize gave)
    present[codes] = True
    renumber = np.cumsum(present) - 1
    slice_codes, slice_names = renumber[codes], [name for name, p in zip(names, present, strict=True) if p]
    unlinked = golden == -1
    slice_codes, slice_names = _no_slice(slice_codes, slice_names, unlinked)
    qkey = golden        # (the read's own array: the golden keys are not read again)
    if unlinked.any():   # unlinked rows' keys: the query a row repeats (open-rag-eval query_run), or itself
        keys = [f"q:{alone[r]}" if alone.get(r) is not None else f"row:{r}" for r in row_ids[unlinked]]
        qkey[unlinked] = -1 - pd.factorize(np.array(keys, dtype=object))[0]
    index = pd.Index(row_ids, name="row_id", copy=False)
    return pd.DataFrame({
        "latency_ms": latency,
        "cost_usd": cost,
        "slice": pd.Categorical.from_codes(slice_codes, categories=slice_names),   # a few values, 1M rows
        "n_gold": n,
        "qkey": qkey}, index=index, copy=False)     # (the read's own arrays: no copy)


def texts(project: Project, row_ids: list[int],
          answers: bool = True) -> dict[int, tuple[str, str, str | None, str | None, str | None]]:
    """(row id in the file, question, answer, gold answer, golden id) of these run rows; without `answers`, the
    answer and the gold answer are None (not read: a listing that shows neither)."""
    conn = project.reader()
    out: dict[int, tuple[str, str, str | None, str | None, str | None]] = {}
    said = ("rr.answer, g.gold_answer" if answers else "NULL, NULL")
    joined = "LEFT JOIN golden_rows g ON g.id = rr.golden_id " if answers else ""
    for start in range(0, len(row_ids), 500):
        chunk = row_ids[start:start + 500]
        for rid, external, question, answer, gold, golden in conn.execute(
                f"SELECT rr.id, rr.external_id, rr.question, {said}, rr.golden_id FROM run_rows rr {joined}"
                f"WHERE rr.id IN ({','.join('?' * len(chunk))})", chunk):
            out[rid] = (external, question, answer, gold, golden)
    return out


def _add_judge_scores(project: Project, data: RunData, rows: Any, only: Collection[str] | None = None, *,
                      raw: bool = True) -> None:
    import numpy as np
    import pandas as pd

    conn = project.reader()
    judges = pd.read_sql_query("SELECT id, name, metric, status, status_at, status_reason FROM judges", conn)
    for _, j in judges[judges["status"] == "retired"].iterrows():
        data.retired.append({"judge": j["name"], "metric": j["metric"], "since": j["status_at"],
                             "reason": j["status_reason"]})
    active = judges[judges["status"] == "active"].set_index("id")
    if only is not None:
        active = active[active["name"].isin(list(only))]
    judge_of = rows["judge_id"].to_numpy()
    rank = rows["passage_rank"].to_numpy()
    status_of = rows["status"].cat.codes.to_numpy()
    frame = data.frame
    # per metric, its active judges' judgments (masks over the judgment arrays: a column of a million metric names,
    # grouped as strings, took 0.4 s); a multi-call judge's sub-judgments (one per nugget or citation) are for audits:
    # the row's own judgment counts. Each judgment's row position is looked up once, for every metric and for the
    # unscored rows; the arrays are read where they are (a frame of a metric's judgments was a copy of all of them)
    for metric, ids in active.groupby("metric", sort=False).groups.items():
        spec = METRICS.get(str(metric))
        if spec is None:
            continue
        mask = np.isin(judge_of, np.asarray(ids)) & counts_for_row(spec, rank)
        if not mask.any():
            continue
        metric = str(metric)
        mine = judge_of[mask]
        data.judges[metric] = sorted(active.loc[pd.unique(mine), "name"])
        # passages average within a row and judge; judges of the same metric average per row (bincounts over row
        # positions: a million judgments group in a fraction of a second, with no frame of groups)
        position = data.judgment_positions()[mask]
        codes = status_of[mask]
        ok = codes == STATUSES.index("ok")
        every = bool(ok.all())
        # the ok judgments (no copies when every one is), and judges told apart only where a metric has several (a
        # million judgments' copies and codes were most of a summary's peak)
        judge_ids = pd.unique(mine)
        judge_code = pd.factorize(mine)[0] if len(judge_ids) > 1 else None
        score = rows["score"].to_numpy(dtype=float)[mask]
        if not every:
            score, position_ok = score[ok], position[ok]
            judge_code = None if judge_code is None else judge_code[ok]
        else:
            position_ok = position
        scaled = score - spec.low          # (score - low) / (high - low) * 100, the same operations in place
        scaled /= spec.high - spec.low
        scaled *= 100.0
        for column, values in ((metric, scaled), *([(f"{metric}__raw", score)] if raw else [])):
            put(frame, column, _mean_of_means(position_ok, judge_code, values, len(frame), len(judge_ids)))
        del scaled, score, position_ok
        status = pd.Categorical.from_codes(row_status(position, codes, len(frame)),
                                           categories=[*STATUSES, "missing"])
        frame[f"{metric}__status"] = status
        data.metrics.append(metric)
        if metric == umbrela.SOURCE_METRIC:
            _add_umbrela(data, rows[mask], status)
        elif metric in DERIVED:
            _add_derived(project, data, metric, rows[mask], status)


def put(frame: DataFrame, name: str, values: ndarray) -> None:
    """A column of numbers set as the array itself (a frame copies an array set as a column: a million rows' columns
    were each held twice while they were set)."""
    import pandas as pd

    frame[name] = pd.Series(values, index=frame.index, copy=False)


def unique(keys: ndarray) -> bool:
    """Whether no key repeats: counted over their span when it is not much wider than their number (a hash table of a
    million keys was 40 MB), else sorted."""
    import numpy as np

    if len(keys) < 2:
        return True
    if (keys[1:] > keys[:-1]).all():    # in order, as a run's rows usually are: no table of counts
        return True
    low, high = int(keys.min()), int(keys.max())
    if high - low < 4 * len(keys):
        return int(np.bincount(keys - low).max()) < 2
    ordered = np.sort(keys)
    return not bool((ordered[1:] == ordered[:-1]).any())


def positions(index: Index, ids: ndarray) -> ndarray:
    """Where each of `ids` is in a frame's `index` (-1: not there): by binary search when the index is in order (a
    run's rows usually are; the hash table of a million ids was 40 MB), else by the index's own lookup."""
    import numpy as np

    ids = np.asarray(ids)
    keys = index.to_numpy()
    if len(keys) and (keys[1:] > keys[:-1]).all():      # in order, each once
        # (positions in 4 bytes where they fit: two million judgments' took 16 MB as int64)
        found = np.minimum(np.searchsorted(keys, ids), len(keys) - 1).astype(
            np.int32 if len(keys) < 2 ** 31 else np.int64, copy=False)
        hit = keys[found] == ids
        return found if hit.all() else np.where(hit, found, -1)
    return np.asarray(index.get_indexer(ids))


def counts_for_row(spec: Any, rank: Any) -> Any:
    """Which judgments (by passage rank) make a row's score and status for a metric: all of them, but for a
    multi-call judge (nuggets, citations) only the row's own (rank 0) — its sub-judgments are for audits."""
    return rank == 0 if spec.items else rank >= 0


def row_status(position: Any, status: Any, n: int) -> Any:
    """Per row (0..n-1), the code of its status column from the judgments counted for it (their row positions and
    STATUSES codes): ok if one is ok, else unparsed if one is, else error if any judgment exists, else missing (3)."""
    import numpy as np

    has = []
    for code in range(len(STATUSES)):
        seen = np.zeros(n, dtype=bool)
        seen[position[status == code]] = True
        has.append(seen)
    return np.select(has, list(range(len(STATUSES))), default=len(STATUSES))


def _mean_of_means(position: Any, judge: Any, values: Any, n: int, judges: int) -> Any:
    """Per row (0..n-1): the mean over judges of each judge's mean value on the row; NaN where no judge has one."""
    import numpy as np

    if judges == 1:    # one judge: its mean on the row (the same numbers, without a table of judges: 50 MB at 1M rows)
        counts = np.bincount(position, minlength=n)
        sums = np.bincount(position, weights=values, minlength=n).astype(float, copy=False)
        return np.divide(sums, counts, out=np.full(n, np.nan), where=counts > 0)
    key = position * judges + judge
    counts = np.bincount(key, minlength=n * judges).reshape(n, judges)
    # float even when no judgment is ok (bincount of nothing is int, and the division below then failed)
    sums = np.bincount(key, weights=values, minlength=n * judges).astype(float).reshape(n, judges)
    have = counts > 0
    per_judge = np.divide(sums, counts, out=np.zeros_like(sums), where=have)
    judged = have.sum(axis=1)
    return np.divide(per_judge.sum(axis=1), judged, out=np.full(n, np.nan), where=judged > 0)


def _add_human(project: Project, data: RunData) -> None:
    """For each judge metric rated per row, on this run's rated rows: the humans' consensus minus the judges'
    score on 0-100 (`<metric>__diff`, what PPI averages) and the rating's inverse-probability weight
    (`<metric>__weight`: 1 for a representative sample). NaN elsewhere."""
    import pandas as pd

    frame = data.frame
    for metric in [m for m in data.metrics if applies(m)]:
        spec = METRICS[metric]
        latest = human_frame(project, metric)
        latest = latest[positions(frame.index, latest["run_row_id"].to_numpy()) >= 0]
        if latest.empty:
            continue
        found = consensus(project, metric, latest).set_index("run_row_id")
        human = (found["human"] - spec.low) / (spec.high - spec.low) * 100.0
        weights = target_weights(project, metric)
        put(frame, f"{metric}__diff", human.reindex(frame.index).to_numpy() - frame[metric].to_numpy())
        # each rated row's weight (1 where none was recorded), nan where the row is not rated: vectorised (a loop
        # over a million rows' ids cost a second)
        weight = pd.Series(weights, dtype=float).reindex(frame.index).fillna(1.0)
        put(frame, f"{metric}__weight", weight.where(frame.index.isin(found.index)).to_numpy())
        data.rated[metric] = int(frame[f"{metric}__diff"].notna().sum())


DERIVED = {nuggets.SOURCE_METRIC: (nuggets.NAMES, nuggets.scores_from_detail),
           citations.SOURCE_METRIC: (citations.NAMES, citations.scores_from_detail),
           "hallucination": (("hhem",), None)}


def _add_derived(project: Project, data: RunData, metric: str, group: Any, status: Any) -> None:
    """The named scores a multi-call judge's detail holds (nugget_*, citation_*), or HHEM's score as `hhem`."""
    names, from_detail = DERIVED[metric]
    per_row: dict[int, list[dict[str, float | None]]] | None = None
    if from_detail is not None:
        judge_ids = [int(j) for j in group["judge_id"].unique()]
        per_row = {}
        for row_id, detail in project.reader().execute(
                f"SELECT x.run_row_id, x.detail FROM judgments x JOIN run_rows rr ON rr.id = x.run_row_id "
                f"WHERE rr.run_id = ? AND x.passage_rank = 0 AND x.status = 'ok' AND x.detail IS NOT NULL "
                f"AND x.judge_id IN ({','.join('?' * len(judge_ids))})", (data.run_id, *judge_ids)):
            per_row.setdefault(row_id, []).append(from_detail(json.loads(detail)))
    _put_derived(data, metric, names, per_row, status)


def _add_umbrela(data: RunData, group: Any, status: Any) -> None:
    """Gold-free retrieval scores from the active UMBRELA judges' passage grades (averaged over judges per row).
    They count as judge metrics (named umbrela_*): same judges, same flags, same status as the grades."""
    per_row: dict[int, list[dict[str, float | None]]] = {}
    for (row_id, _judge), part in group.groupby(["row_id", "judge_id"], sort=False):
        ranks = dict(zip(part["passage_rank"], zip(part["status"], part["score"], strict=True), strict=True))
        top = max(r for r in ranks if r >= 1) if any(r >= 1 for r in ranks) else 0
        grades = [ranks[r][1] if r in ranks and ranks[r][0] == "ok" else None for r in range(1, top + 1)]
        per_row.setdefault(row_id, []).append(umbrela.row_scores(grades))
    _put_derived(data, umbrela.SOURCE_METRIC, umbrela.NAMES, per_row, status)


def _put_derived(data: RunData, metric: str, names: tuple[str, ...],
                 per_row: dict[int, list[dict[str, float | None]]] | None, status: Any) -> None:
    """Columns computed from `metric`'s judgments (per row, a dict of scores per judge, averaged over the judges
    that have one; `per_row` None: a copy of the metric's column). They count as judge metrics: same judges,
    same status."""
    import numpy as np

    frame = data.frame
    for name in names:
        if per_row is None:
            frame[name] = frame[metric]
        else:
            values = []
            for row_id in frame.index:
                known = [v for s in per_row.get(row_id, []) if (v := s.get(name)) is not None]
                values.append(sum(known) / len(known) if known else np.nan)
            frame[name] = values
        frame[f"{name}__status"] = status
        data.judges[name] = data.judges[metric]
        data.metrics.append(name)


DERIVED_NAMES = set(umbrela.NAMES) | {n for names, _ in DERIVED.values() for n in names}


def per_question(frame: DataFrame) -> DataFrame:
    """One row per question (index `qkey`): numbers averaged over the question's repeats (NaN ignored), its
    slice and gold-id count, and `rows`, how many run rows answered it."""
    import pandas as pd

    numeric = [c for c in frame.columns if c not in ("qkey", "n_gold", "latency_ms", "cost_usd")
               and not c.endswith("__status") and pd.api.types.is_numeric_dtype(frame[c])]
    if unique(frame["qkey"].to_numpy()):   # no repeats: each row is its question (grouping a million rows: 0.4 s)
        out = pd.concat([frame[["slice", "n_gold"]], frame[numeric].astype(float)], axis=1)
        out.index = pd.Index(frame["qkey"].to_numpy(), name="qkey")
        out["rows"] = 1
        return out
    return grouped_questions(frame, numeric)


def grouped_questions(frame: DataFrame, numeric: list[str]) -> DataFrame:
    """`per_question` by grouping (what its short way for a run without repeats must equal)."""
    grouped = frame.groupby("qkey", sort=False)
    out = grouped[numeric].mean()
    first = grouped[["slice", "n_gold"]].first()
    out = first.join(out)
    out["rows"] = grouped.size()
    return out


def _unsettled(project: Project, data: RunData) -> list[dict[str, Any]]:
    """The judges this run's numbers count whose audit has not said "keep" — no ratings yet, or needs more
    ratings — or whose mean bias against the reviewers is shown to exceed the policy's margin (a judge kept on
    kappa can still score every answer points high). They are counted (a judge is retired only on clear evidence)
    and flagged wherever they are shown; `--estimator ppi` corrects a biased judge's means where ratings exist."""

    out = []
    for metric, names in data.judges.items():
        if metric in DERIVED_NAMES:   # computed from another metric, whose judges are flagged already
            continue
        for name in names:
            judge = get_judge(project, name)
            result = agreement(project, judge, breakdowns=False)  # the verdict is enough
            biased = bool(result.bias.get("flagged"))
            recorded = last_audit(project, judge) if result.verdict == "retire" else None
            # an active judge whose recorded audit says retire was kept for the rows it decides (selective)
            kept = recorded is not None and recorded[1].get("verdict") == "retire"
            if result.verdict != "keep" or biased:
                verdict = result.verdict if result.n else "not audited"
                if biased:
                    low, high = result.bias["ci"]
                    verdict += (f"; biased {result.bias['mean']:+.1f} points [95% CI {low:+.1f}, {high:+.1f}] against "
                                f"the reviewers")
                out.append({"judge": name, "metric": metric, "verdict": verdict, "n": result.n,
                            "statistic": result.statistic, "value": result.value, "ci": result.ci,
                            "needed": result.needed, "bias": result.bias, "selective": kept})
    return out


def source_metric(name: str) -> str:
    """The judged metric a derived score comes from (`umbrela_p@5` -> passage_relevance, `hhem` ->
    hallucination); any other name is its own."""
    if name in umbrela.NAMES:
        return umbrela.SOURCE_METRIC
    return next((source for source, (names, _) in DERIVED.items() if name in names), name)
