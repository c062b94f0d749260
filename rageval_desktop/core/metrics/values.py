"""A large run's per-row values, kept once in the project (schema v22, `run_values`; rowids since v23) so that
`metrics`, `compare` and the dashboard read a million rows' numbers at once instead of joining the tables again.

Three parts per run, each what one of `core.metrics.rowdata`'s reads returns, as columns:

- `rows`: ids, positions, golden keys, gold-id counts, latency, cost, slices (codes and names), unlinked rows'
  query ids;
- `judgments`: every judgment's row, judge, passage rank, status code and score;
- `passages`: each gold chunk a row retrieved with its best rank, and the rows that say how many passages reached
  the prompt.

A part is the read's own output, so what is computed from it is the same number for number (a test holds
`metrics --json` equal with and without them). It is stored only where it is current: the schema's triggers take
it away when what it was read from changes; a part being written is NULL until its values are in, and a change
meanwhile takes the row away, so the values are then not kept. The `rows` part's question keys are golden rowids,
which SQLite's documentation says an outside `VACUUM` may renumber (this SQLite's keeps them): before it is used, the
keys of up to `CHECKED` of its rows, spread over the run, are looked up again (`keys_hold`), and a part whose golden
table moved is not used. A part that cannot be read (a damaged or foreign blob) is not used either: the tables are
read instead. Runs under `KEEP_FROM` rows keep none (their reads are quick; their imports should not pay).

Encoded as plain arrays (`_pack`: numbers only, each in the smallest dtype that holds it exactly, never objects or
pickles); texts as JSON in a byte array.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from numpy import ndarray

PARTS = ("rows", "judgments", "passages")
Read = tuple[object, ...]    # one read's output (core.metrics.rowdata.READS): arrays, and the rows' texts
KEEP_FROM = 50_000    # a run's rows from which its values are kept


def not_kept(conn: sqlite3.Connection) -> list[tuple[int, str, int]]:
    """(id, name, rows) of each run of KEEP_FROM rows or more whose values are not all kept: `metrics` and `compare`
    read its tables instead (4-5x the CPU at 1M rows), until a write keeps them (`rowdata.keep_missing_values`:
    `rageval migrate`, a golden import, the app; a read never writes). A file made before values were kept, or a
    golden edit made by a script calling core, leaves them so."""
    return [(rid, name, rows) for rid, name, rows in conn.execute(
        "SELECT r.id, r.name, c.rows FROM runs r JOIN run_counts c ON c.run_id = r.id WHERE c.rows >= ? AND "
        "(SELECT COUNT(*) FROM run_values v WHERE v.run_id = r.id AND v.data IS NOT NULL) < ? ORDER BY r.id",
        (KEEP_FROM, len(PARTS)))]


_ROW_NUMBERS = ("id", "position", "golden", "n_gold", "latency_ms", "cost_usd")
_JUDGMENT_NUMBERS = ("row_id", "judge_id", "passage_rank", "status", "score")
_PASSAGE_NUMBERS = ("hit_rows", "hit_ranks", "prompt_rows", "prompt_k")


# codes, ranks and judge ids, which are only compared and counted: kept in the dtype they were stored in (a million
# rows' judgments took 48 MB more as int64)
SMALL = ("slice_codes", "judge_id", "passage_rank", "status", "hit_ranks", "row_id")
CHECKED = 64          # rows of the `rows` part whose golden keys are looked up again before it is used


def keys_hold(conn: sqlite3.Connection, read: Read) -> bool:
    """Whether the golden rowids a `rows` part holds are still those of its rows' golden rows, for up to CHECKED
    rows spread over the run (a renumbering moves every rowid after its first gap)."""
    import numpy as np

    row_ids, golden = np.asarray(read[0]), np.asarray(read[2])
    linked = np.flatnonzero(golden != -1)
    if not linked.size:
        return True
    picked = linked[np.unique(np.linspace(0, linked.size - 1, min(CHECKED, linked.size)).astype(np.int64))]
    ids = [int(i) for i in row_ids[picked]]
    found = dict(conn.execute(
        f"SELECT rr.id, g.rowid FROM run_rows rr JOIN golden_rows g ON g.id = rr.golden_id "
        f"WHERE rr.id IN ({','.join('?' * len(ids))})", ids).fetchall())
    return all(found.get(i) == int(k) for i, k in zip(ids, golden[picked], strict=True))


MAGIC = b"RVV1"
_KINDS = {"<i1", "<i2", "<i4", "<i8", "<f4", "<f8", "|u1", "|i1"}   # what a blob may hold: numbers, never objects


def _narrow(values: ndarray) -> ndarray:
    """The array in the smallest dtype that holds every value exactly (read back as the original dtype): ids,
    ranks and codes in 1-4 bytes, scores as float32 where that loses nothing."""
    import numpy as np

    if values.dtype.kind == "i" and values.size:
        low, high = int(values.min()), int(values.max())
        for kind in (np.int8, np.int16, np.int32):
            if np.iinfo(kind).min <= low and high <= np.iinfo(kind).max:
                return values.astype(kind)
    elif values.dtype.kind == "f" and values.size:
        with np.errstate(over="ignore", invalid="ignore"):   # (a value past float32's range: kept as it is)
            small = values.astype(np.float32)
        if np.array_equal(small.astype(values.dtype), values, equal_nan=True):
            return small
    return values


def _pack(arrays: dict[str, ndarray]) -> bytes:
    """MAGIC, the header's length (4 bytes), the header (JSON: each array's name, stored dtype, read dtype, length)
    and the arrays' bytes, little-endian, one after another."""
    import numpy as np
    import orjson

    header, chunks = [], []
    for name, values in arrays.items():
        values = np.ascontiguousarray(values)
        small = _narrow(values)
        small = small.astype(small.dtype.newbyteorder("<"), copy=False)
        header.append([name, small.dtype.str, values.dtype.newbyteorder("<").str, int(values.size)])
        chunks.append(small.tobytes())
    head = orjson.dumps(header)
    return b"".join([MAGIC, len(head).to_bytes(4, "little"), head, *chunks])


def _texts(values: object) -> ndarray:
    import numpy as np
    import orjson

    return np.frombuffer(orjson.dumps(values), dtype=np.uint8)


def _unpack(blob: bytes | sqlite3.Blob, small: Collection[str] = ()) -> dict[str, ndarray]:
    """`_pack`'s arrays, each a writable array of the dtype it was stored from — but those named in `small`, which
    keep the smallest dtype that holds them (a blob that is not one of ours, or is cut short, raises ValueError).
    `blob` is the bytes, or SQLite's handle on them, read an array at a time (the whole of a million rows' part
    was held twice while it was read: SQLite's copy and Python's)."""
    import numpy as np
    import orjson

    total = len(blob)

    def read(at: int, size: int) -> bytes:
        if at + size > total:
            raise ValueError("cut short")
        if isinstance(blob, bytes):
            return blob[at:at + size]
        blob.seek(at)
        return blob.read(size)

    if read(0, 4) != MAGIC:
        raise ValueError("not a run's values")
    size = int.from_bytes(read(4, 4), "little")
    header = orjson.loads(read(8, size))
    out, at = {}, 8 + size
    for name, stored_as, read_as, n in header:
        if stored_as not in _KINDS or read_as not in _KINDS or not isinstance(n, int) or n < 0:
            raise ValueError(f"an array of {stored_as!r}")
        width = np.dtype(stored_as).itemsize * n
        kept_as = np.dtype(stored_as if name in small and np.dtype(read_as).kind == "i" else read_as)
        out[str(name)] = np.frombuffer(read(at, width), dtype=stored_as, count=n).astype(kept_as.newbyteorder("="))
        at += width
    if at != total:
        raise ValueError("bytes left over")
    return out


def encode(part: str, read: Read) -> bytes:
    """One part's blob from its read's output."""
    import numpy as np

    if part == "rows":
        *numbers, slice_codes, slice_names, alone = read
        arrays = {name: np.asarray(v) for name, v in zip(_ROW_NUMBERS, numbers, strict=True)}
        assert isinstance(alone, dict)
        arrays |= {"slice_codes": np.asarray(slice_codes), "slice_names": _texts(slice_names),
                   "alone": _texts([[int(k), v] for k, v in alone.items()])}
        return _pack(arrays)
    names = _JUDGMENT_NUMBERS if part == "judgments" else _PASSAGE_NUMBERS
    return _pack({name: np.asarray(v) for name, v in zip(names, read, strict=True)})


def decode(part: str, blob: bytes | sqlite3.Blob) -> Read | None:
    """The read's output again, or None when the blob is not one of ours."""
    import orjson

    try:
        arrays = _unpack(blob, SMALL)
        if part == "rows":
            numbers = [arrays[name] for name in _ROW_NUMBERS]
            codes = arrays["slice_codes"]
            names = orjson.loads(arrays["slice_names"].tobytes())
            alone = {int(k): v for k, v in orjson.loads(arrays["alone"].tobytes())}
            n = len(numbers[0])
            if any(len(c) != n for c in (*numbers, codes)) or not all(isinstance(x, str) for x in names) or (
                    n and not 0 <= int(codes.min()) <= int(codes.max()) < len(names)):
                return None
            return (*numbers, codes, names, alone)
        names = _JUDGMENT_NUMBERS if part == "judgments" else _PASSAGE_NUMBERS
        columns = tuple(arrays[name] for name in names)
        if part == "judgments" and any(len(c) != len(columns[0]) for c in columns):
            return None
        if part == "passages" and (len(columns[0]) != len(columns[1]) or len(columns[2]) != len(columns[3])):
            return None
        return columns
    except Exception:     # a damaged or foreign blob is not used: the tables are read instead
        return None


def stored(conn: sqlite3.Connection, rid: int) -> dict[str, Read]:
    """The parts kept for a run that can be used, decoded (none on a file from before schema v22)."""
    try:
        # (the parts' names alone: a test of the blob for NULL read its pages, 0.13 s at a million rows)
        parts = conn.execute("SELECT part, rowid FROM run_values WHERE run_id = ?", (rid,)).fetchall()
    except sqlite3.OperationalError:      # no such table, or no rowids: a file from before v23 (which a read-only
        return {}                          # open does not take) reads its tables
    out: dict[str, Read] = {}
    for part, rowid in parts:     # each read an array at a time through SQLite's handle on it
        try:
            with conn.blobopen("run_values", "data", rowid, readonly=True) as blob:
                values = decode(part, blob) if part in PARTS else None
        except sqlite3.Error:     # a part being written (NULL), or gone meanwhile
            continue
        if values is not None and (part != "rows" or keys_hold(conn, values)):
            out[part] = values
    conn.execute("PRAGMA shrink_memory")
    return out
