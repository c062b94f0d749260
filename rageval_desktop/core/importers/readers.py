"""Files to records. Every failure names the file and, where one exists, the row and column.

Text formats are decoded here (strict UTF-8, BOM allowed) so an encoding error can name its line; pandas
parses. Row numbers are 1-based data rows (the header is not counted), the same in every format.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rageval_desktop.core.base.errors import ImportFailed

if TYPE_CHECKING:
    import pyarrow as pa
    from pandas import DataFrame

Rows = list[dict[str, Any]]    # a chunk of a file's rows, keyed by column name

MAX_DECOMPRESSED_BYTES = 2 * 1024 ** 3   # a .gz file may inflate to this much ...
BOMB_RATIO = 200                          # ... and no text file compresses 200 : 1 past ...
XLSX_BOMB_RATIO = 100                     # (nor a workbook 100 : 1) ...
BOMB_MIN_BYTES = 50 * 1024 ** 2           # ... 50 MB: that is a compression bomb
MAX_XLSX_UNCOMPRESSED = 300 * 1024 ** 2   # larger sheets take minutes in openpyxl: CSV or Parquet instead
MAX_NUMBER_DIGITS = 100                   # JSON integers longer than this are not data (and overflow every reader)

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet",
           ".xlsx": "xlsx"}
TEXT_FORMATS = {"csv", "jsonl", "json"}
JSON_CONTAINER_KEYS = ("rows", "data", "records", "samples", "examples", "testCases", "goldens", "test_cases")


def file_format(path: Path) -> tuple[str, bool]:
    """(format, gzipped) from the file name."""
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    ext = suffixes[-2] if gz and len(suffixes) >= 2 else (suffixes[-1] if suffixes else "")
    fmt = FORMATS.get(ext)
    if fmt is None or (gz and fmt not in TEXT_FORMATS):
        raise ImportFailed(f"unsupported file type '{''.join(path.suffixes) or '(none)'}'; "
                           "use .csv, .jsonl, .json, .parquet or .xlsx (.gz allowed for text formats)",
                           file=path.name)
    return fmt, gz


def _gunzip(path: Path) -> bytes:
    """Decompress in chunks, stopping at a size cap or a bomb's ratio, never holding more than the cap."""
    compressed = max(1, path.stat().st_size)
    out, total = [], 0
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                total += len(chunk)
                _check_inflation(path, total, compressed)
                out.append(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise ImportFailed(f"not a valid gzip file ({exc}); it may be truncated", file=path.name) from None
    return b"".join(out)


def _check_inflation(path: Path, total: int, compressed: int) -> None:
    """`total` bytes inflated so far from a `compressed`-byte file: past the cap, or a bomb's ratio, it stops."""
    if total > MAX_DECOMPRESSED_BYTES:
        raise ImportFailed(f"decompresses to more than {MAX_DECOMPRESSED_BYTES / 1024 ** 3:.0f} GB; split the file",
                           file=path.name)
    if total > BOMB_MIN_BYTES and total / compressed > BOMB_RATIO:
        raise ImportFailed(f"inflates more than {BOMB_RATIO}-fold ({compressed:,} bytes to over "
                           f"{total / 1024 ** 2:.0f} MB): a compression bomb, not data", file=path.name)


def _json_loads(text: str | bytes) -> Any:
    """json.loads that refuses what would crash later (integers of thousands of digits) or change data without a
    word: an object that names a key twice (the last value won; a CSV header named twice is refused)."""
    def parse_int(digits: str) -> int:
        if len(digits) > MAX_NUMBER_DIGITS:
            raise ValueError(f"a number with {len(digits):,} digits")
        return int(digits)

    def once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(pairs)
        if len(found) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise ValueError(f"the key '{key[:60]}' appears twice in one object")
                seen.add(key)
        return found

    return json.loads(text, parse_int=parse_int, object_pairs_hook=once)


# orjson reads an integer beyond 64 bits as a float (two ids one apart become the same id); such a float is at least
# 2**63 in magnitude, which a document rarely writes as a float
_BEYOND_INT64 = 2.0 ** 63


def parsed_shape(obj: Any) -> tuple[int, bool]:
    """Of a document orjson parsed: the keys in every object of it (what a duplicate key would leave one short), and
    whether a float in it is at least 2**63 in magnitude (an integer orjson could not hold, or a float as large: the
    json module reads it again, exactly)."""
    count, large, stack = 0, False, [obj]
    if type(obj) is not dict and type(obj) is not list:     # a document that is one value
        return 0, type(obj) is float and not -_BEYOND_INT64 < obj < _BEYOND_INT64
    while stack:
        item = stack.pop()
        values = item.values() if type(item) is dict else item
        if type(item) is dict:
            count += len(item)
        for value in values:
            kind = type(value)
            if kind is dict or kind is list:
                stack.append(value)
            elif kind is float and not -_BEYOND_INT64 < value < _BEYOND_INT64:
                large = True
    return count, large


def _said(exc: BaseException) -> str:
    """A library's message on one line (pyarrow ends some with a line break, inside our parentheses)."""
    return " ".join(str(exc).split())


def _json_error(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg}, column {exc.colno}"
    return str(exc)


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ImportFailed(f"line {line} is not UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start}); "
                           "save the file as UTF-8", file=path.name) from None


def read_records(path: str | Path) -> tuple[Rows, list[str]]:
    """All rows of a tabular file as dicts (missing cells = None) and the column names, in file order."""
    path = Path(path)
    fmt, gz = file_format(path)
    if not path.is_file():
        raise ImportFailed("no such file", file=str(path))
    raw = _gunzip(path) if gz else path.read_bytes()
    if not raw.strip():
        raise ImportFailed("the file is empty", file=path.name)
    if fmt == "jsonl":  # parsed line by line straight to records: no DataFrame round trip, half the memory
        return _jsonl(path, raw)
    if fmt == "json":  # straight to records, like JSONL: a frame would choke on text pyarrow cannot hold
        text = _decode(path, raw)
        del raw
        return _json(path, text)
    if fmt == "csv":   # the csv module, not pandas: it sees duplicate headers (pandas renames them `x.1`), rows
        # longer than the header, and a file cut off in its last row; cells stay text, empty cells are missing
        rows = [row for chunk in _csv_stream(path, iter(raw.splitlines(keepends=True)), WHOLE) for row in chunk]
        if not rows:
            raise ImportFailed("the file has a header but no data rows", file=path.name)
        return rows, list(rows[0])
    if fmt == "parquet":  # the streaming parser, like JSONL and CSV: binary columns decoded as UTF-8 text (they came
        # through pandas as the text "b'...'"), list columns as lists (pandas gave arrays, stored as "['...']")
        del raw
        rows = [row for chunk in cast(Iterator[Rows], _parquet_stream(path, WHOLE, {}))
                for row in chunk]
        if not rows:
            raise ImportFailed("the file has a header but no data rows", file=path.name)
        return rows, list(rows[0])
    frame = _binary(path, fmt, raw)
    columns, keep = _named(path, [str(c) for c in frame.columns], None)
    frame = frame.iloc[:, keep]
    frame.columns = columns
    if len(frame) == 0:
        raise ImportFailed("the file has a header but no data rows", file=path.name)
    records = frame.to_dict("records")
    for record in records:
        for key, value in record.items():
            if isinstance(value, float) and math.isnan(value):
                record[key] = None
    return records, columns


def _fast_loads(data: bytes | str) -> Any:
    """orjson (several times faster than the json module) for what it reads; whatever it refuses — bad JSON, but
    also integers beyond 64 bits, NaN, nesting beyond 1024 — goes through `_json_loads`, which accepts what the
    json module accepts and words the errors (its messages name the column)."""
    import orjson

    def careful() -> Any:
        return _json_loads(data.decode("utf-8") if isinstance(data, bytes) else data)   # strict UTF-8

    try:
        found = orjson.loads(data)
    except orjson.JSONDecodeError:
        return careful()
    keys, large = parsed_shape(found)
    # orjson read an integer beyond 64 bits as a float (two ids one apart would become the same id): the json
    # module reads the document again and keeps integers exact (checking the parsed floats costs a fraction of
    # scanning the bytes for runs of 19 digits)
    if large:
        return careful()
    # orjson keeps the last of a key named twice: a document with as many '":' as keys has none (the count is a
    # C-speed scan); any other (a key named twice, '":' inside a text, a space before a colon) is parsed again by
    # the json module, which refuses a key named twice
    if (data.count(b'":') if isinstance(data, bytes) else data.count('":')) != keys:
        careful()
    return found


def _jsonl(path: Path, raw: bytes) -> tuple[Rows, list[str]]:
    rows = [row for chunk in _jsonl_stream(path, iter(raw.split(b"\n")), WHOLE) for row in chunk]
    return _named_records(path, rows)


def _json(path: Path, text: str) -> tuple[Rows, list[str]]:
    try:
        data = _fast_loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                           file=path.name) from None
    except (ValueError, RecursionError) as exc:
        raise ImportFailed(f"not valid JSON ({_json_error(exc)})", file=path.name) from None
    if isinstance(data, dict):
        for key in JSON_CONTAINER_KEYS:
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            if data and all(isinstance(v, list) for v in data.values()):  # column-oriented
                lengths = {len(v) for v in data.values()}
                if len(lengths) != 1:
                    raise ImportFailed("column lists have different lengths", file=path.name)
                names = list(data)
                data = [dict(zip(names, values, strict=True)) for values in zip(*data.values(), strict=True)]
            else:
                raise ImportFailed("expected a list of objects (or {\"rows\": [...]})", file=path.name)
    if not isinstance(data, list):
        raise ImportFailed("expected a list of objects", file=path.name)
    for i, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise ImportFailed(f"item is a JSON {type(obj).__name__}, expected an object",
                               file=path.name, row=i)
    return _named_records(path, data)


def _check_names(path: Path, names: list[str]) -> None:
    """Column names, in every format: unique and not empty (after stripping spaces). A refusal names the column by
    its position and its neighbours' names."""
    dupes = sorted({c for c in names if names.count(c) > 1 and c})
    if dupes:
        at = ", ".join(f"'{c}' (columns {', '.join(str(i + 1) for i, n in enumerate(names) if n == c)})"
                       for c in dupes)
        raise ImportFailed(f"duplicate column name(s): {at}; rename one", file=path.name)
    for i, name in enumerate(names):
        if name == "" or name.startswith("Unnamed: "):
            before = f" after '{names[i - 1]}'" if i else ""
            after = f" before '{names[i + 1]}'" if i + 1 < len(names) else ""
            raise ImportFailed(f"column {i + 1}{before}{after} has no name in the header row: name it (an "
                               "empty column at the end is left out)", file=path.name)


def _nameless(name: str) -> bool:
    return name == "" or name.startswith("Unnamed: ")


def _named(path: Path, header: list[str], notes: dict[str, int] | None) -> tuple[list[str], list[int]]:
    """The header's names, stripped and checked, and the positions of the columns read: a first column without a
    name (the index pandas' `to_csv` writes: a ragas result saved with `df.to_csv(path)`) and columns without a name
    at the end (a trailing comma, as ragas-examples' `question,expected_answer,` has) are left out and counted in
    notes["index"] and notes["nameless"] — cells the trailing ones hold in notes["nameless_cells"] as they are
    read. A nameless column anywhere else is refused by `_check_names`."""
    columns = [c.strip() for c in header]
    if not columns:
        raise ImportFailed("the header row is empty: the first line must name the columns", file=path.name)
    first = 1 if len(columns) > 1 and _nameless(columns[0]) else 0
    last = len(columns)
    while last > first + 1 and _nameless(columns[last - 1]):
        last -= 1
    if notes is not None:
        notes["index"], notes["nameless"] = first, len(columns) - last
    _check_names(path, columns[first:last])
    return columns[first:last], list(range(first, last))


def _named_records(path: Path, rows: Rows) -> tuple[Rows, list[str]]:
    """Rows of objects (JSON, JSONL): the columns in first-seen order, checked and stripped like a header."""
    keys = list(dict.fromkeys(key for row in rows for key in row))
    names = [str(k).strip() for k in keys]
    _check_names(path, names)
    if not rows:
        raise ImportFailed("the file has no data rows", file=path.name)
    if names != keys:
        rows = [{str(k).strip(): v for k, v in r.items()} for r in rows]
    return rows, names


def _binary(path: Path, fmt: str, raw: bytes) -> DataFrame:
    import pandas as pd

    if fmt == "xlsx":
        _check_xlsx_size(path, raw)
        _check_xlsx_cells(path, raw)
    try:
        if fmt == "parquet":
            return pd.read_parquet(io.BytesIO(raw))
        frame = pd.read_excel(io.BytesIO(raw), engine="openpyxl", dtype=object)
        return frame.dropna(how="all")
    except ImportError:
        raise
    except Exception as exc:  # pyarrow and openpyxl raise many kinds for a damaged file
        kind = "Parquet" if fmt == "parquet" else "XLSX"
        raise ImportFailed(f"not a valid {kind} file ({type(exc).__name__}: {_said(exc)})", file=path.name) from None


def _check_xlsx_cells(path: Path, raw: bytes) -> None:
    """What reading the sheet's values would change without a word (the first sheet, which the import reads): a
    header named twice (pandas renames the second `x.1`; a CSV with it is refused) and formula cells with no saved
    value (they read as empty)."""
    import openpyxl

    try:
        formulas = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=False)
        values = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception:       # a damaged workbook: pandas' read says so, in words
        return
    try:
        _scan_xlsx(path, formulas, values)
    except ImportFailed:
        raise
    except Exception:       # a sheet openpyxl cannot walk: pandas' read says what is wrong, in words
        return
    finally:
        formulas.close()
        values.close()


def _scan_xlsx(path: Path, formulas: Any, values: Any) -> None:
    import openpyxl

    rows_f = formulas.worksheets[0].iter_rows(values_only=True)
    rows_v = values.worksheets[0].iter_rows(values_only=True)
    header = [str(h).strip() for h in next(rows_f, ()) if h is not None]
    next(rows_v, None)
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise ImportFailed(f"the column '{name}' appears twice in the header; rename one", file=path.name)
        seen.add(name)
    missing, example = 0, ""
    for r, (formula_row, value_row) in enumerate(zip(rows_f, rows_v, strict=False), start=2):
        for c, (f, v) in enumerate(zip(formula_row, value_row, strict=False), start=1):
            if v is None and isinstance(f, str) and f.startswith("="):
                missing += 1
                example = example or f"{openpyxl.utils.get_column_letter(c)}{r} {f[:40]}"
    if missing:
        raise ImportFailed(f"{missing} formula cell(s) have no saved value (for example {example}); they would "
                           "import as empty. Open the file in a spreadsheet program and save it (which computes "
                           "them), or export it as CSV", file=path.name)


def _check_xlsx_size(path: Path, raw: bytes) -> None:
    """An XLSX is a zip: look at what it would inflate to before openpyxl spends minutes on it."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ImportFailed(f"not a valid XLSX file ({_said(exc)})", file=path.name) from None
    total = sum(m.file_size for m in members)
    packed = max(1, sum(m.compress_size for m in members))
    if total > BOMB_MIN_BYTES and total / packed > XLSX_BOMB_RATIO:
        raise ImportFailed(f"inflates more than {XLSX_BOMB_RATIO}-fold ({packed:,} bytes to "
                           f"{total / 1024 ** 2:.0f} MB): a compression bomb, not data", file=path.name)
    if total > MAX_XLSX_UNCOMPRESSED:
        raise ImportFailed(f"the workbook holds {total / 1024 ** 2:.0f} MB of sheet data, more than the "
                           f"{MAX_XLSX_UNCOMPRESSED / 1024 ** 2:.0f} MB an XLSX import reads; save it as CSV or "
                           "Parquet", file=path.name)


# --- streaming: a large file a chunk at a time -----------------------------------------------------------------
CHUNK_ROWS = 2_000    # rows in flight per process: 5,000 cost 110 MB more over both processes, and no time
WHOLE = 1 << 62      # a chunk size that reads a file as one chunk
STREAMED = ("jsonl", "csv", "parquet")   # JSON (one document) and XLSX are read whole


class Apart:
    """A Parquet stream hands its chunks over in Arrow form (`ArrowChunk`), for a reader that checks them a column at
    a time, when `decide` says so from the first chunk's column names (the layout they make)."""

    def __init__(self, decide: Callable[[list[str]], bool] | None = None) -> None:
        self.on = False
        self.decide = decide


class ArrowChunk:
    """A chunk of a Parquet file as Arrow read it (column names stripped in `names`). `rows()` reads it as every other
    chunk is read — dicts, binary columns as text, NaN as None — and `column(name)` is one column as Arrow holds it."""

    def __init__(self, batch: pa.RecordBatch, names: list[str], file: str) -> None:
        self.batch, self.names, self.file = batch, names, file

    def __len__(self) -> int:
        return int(self.batch.num_rows)

    def column(self, name: str) -> pa.Array | None:
        return self.batch.column(self.names.index(name)) if self.names.count(name) == 1 else None

    def rows(self) -> Rows:
        try:
            return _batch_rows(self.file, self.batch, self.names)
        except ImportFailed:
            raise
        except Exception as exc:  # as the stream says of a damaged file's batch
            raise _not_parquet(exc, self.file) from None


def skipped(notes: dict[str, int]) -> list[str]:
    """What the reader left out of a file (`_csv_stream`, `_named`), in words."""
    out = []
    if notes.get("index"):
        out.append("the first column has no name (the index pandas' to_csv writes) and was left out")
    if notes.get("blank"):
        out.append(f"{notes['blank']} row(s) with every cell empty were skipped (as a spreadsheet saves blank rows)")
    if notes.get("nameless"):
        cells = notes.get("nameless_cells", 0)
        out.append(f"the last {notes['nameless']} column(s) of the header have no name and were left out"
                   + (f"; {cells} row(s) had a value there, not imported" if cells else " (they were empty)"))
    return out


def stream_records(path: str | Path, size: int | None = None,
                   progress: dict[str, int] | None = None) -> Iterator[Rows]:
    """`stream_parts` without `apart`: every chunk is a list of dicts."""
    return cast(Iterator[Rows], stream_parts(path, size, progress))


def stream_parts(path: str | Path, size: int | None = None, progress: dict[str, int] | None = None,
                 apart: Apart | None = None) -> Iterator[Rows | ArrowChunk]:
    """The rows of a tabular file, `size` at a time, with the checks and messages of `read_records`: JSONL, CSV (and
    their .gz, refused as a bomb by what they inflate to so far) and Parquet are read as they go, never whole; JSON and
    XLSX are read whole and handed out in chunks. Column names are checked and stripped in every chunk.
    `progress["read"]`: how much of the file (in bytes of the file on disk) is read so far. `apart`: see `Apart`
    (Parquet only; other formats ignore it; without it every chunk is a list of dicts)."""
    path = Path(path)
    size = size or CHUNK_ROWS
    progress = progress if progress is not None else {}
    progress["read"] = 0
    fmt, gz = file_format(path)
    if not path.is_file():
        raise ImportFailed("no such file", file=str(path))
    if fmt not in STREAMED:
        rows, _ = read_records(path)
        progress["read"] = path.stat().st_size
        for start in range(0, len(rows), size):
            yield rows[start:start + size]
        return
    if path.stat().st_size == 0:
        raise ImportFailed("the file is empty", file=path.name)
    if fmt == "parquet":
        chunks = _parquet_stream(path, size, progress, apart)
    elif fmt == "jsonl":
        chunks = _jsonl_stream(path, _lines(path, gz, progress), size)
    elif gz:
        chunks = _csv_stream(path, _lines(path, gz, progress), size, progress)
    else:
        chunks = _fast_csv_stream(path, size, progress)
    any_rows = False
    for chunk in chunks:
        if chunk:
            any_rows = True
            yield chunk
    if not any_rows:
        raise ImportFailed("the file is empty" if fmt == "jsonl" else "the file has a header but no data rows",
                           file=path.name)


def _lines(path: Path, gz: bool, progress: dict[str, int]) -> Iterator[bytes]:
    """The file's lines as bytes; a .gz file is inflated as it is read, and stopped at the size cap or a bomb's
    ratio, like `_gunzip`."""
    if not gz:
        with path.open("rb") as fh:
            for line in fh:
                progress["read"] += len(line)
                yield line
        return
    compressed = max(1, path.stat().st_size)
    total = 0
    try:
        with path.open("rb") as raw, gzip.open(raw, "rb") as fh:
            rest = b""
            while block := fh.read(1 << 20):   # blocks, not lines: a bomb without line breaks is caught too
                progress["read"] = raw.tell()
                total += len(block)
                _check_inflation(path, total, compressed)
                lines = (rest + block).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    yield line + b"\n"
            if rest:
                yield rest
    except (OSError, EOFError, zlib.error) as exc:
        raise ImportFailed(f"not a valid gzip file ({exc}); it may be truncated", file=path.name) from None


def _jsonl_stream(path: Path, lines: Iterator[bytes], size: int) -> Iterator[Rows]:
    rows: Rows = []
    for number, line in enumerate(lines, start=1):
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if not line or line.isspace():
            continue
        try:
            obj = _fast_loads(line)
        except UnicodeDecodeError as exc:
            raise ImportFailed(f"line {number} is not UTF-8 (byte {line[exc.start]:#04x}); save the file as UTF-8",
                               file=path.name) from None
        except (ValueError, RecursionError) as exc:
            raise ImportFailed(f"line {number} is not valid JSON ({_json_error(exc)})", file=path.name) from None
        if not isinstance(obj, dict):
            raise ImportFailed(f"line {number} is a JSON {type(obj).__name__}, expected an object", file=path.name)
        rows.append(obj)
        if len(rows) >= size:
            yield _named_records(path, rows)[0]
            rows = []
    if rows:
        yield _named_records(path, rows)[0]


def _csv_stream(path: Path, lines: Iterator[bytes], size: int, notes: dict[str, int] | None = None
                ) -> Iterator[Rows]:
    """The csv module over lines decoded one at a time (a bad byte names its line). Rows whose every cell is empty
    (`,,,,` as a spreadsheet saves them) are skipped and counted in notes["blank"]; see `_named` for columns without
    a name at the end."""
    notes = notes if notes is not None else {}
    notes["blank"] = notes["nameless_cells"] = 0
    state: dict[str, Any] = {"line": 0, "last": b""}

    def decoded() -> Iterator[str]:
        for raw in lines:
            state["line"] += 1
            state["last"] = raw
            try:
                yield raw.decode("utf-8-sig" if state["line"] == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFailed(f"line {state['line']} is not UTF-8 (byte {raw[exc.start]:#04x}); save the file "
                                   "as UTF-8", file=path.name) from None

    csv.field_size_limit(2 ** 31 - 1)
    reader = csv.reader(decoded(), strict=True)
    count = 0
    rows: Rows = []
    last: list[str] = []
    try:
        header = next(reader, None)
        if header is None:
            raise ImportFailed("the file is empty", file=path.name)
        columns, keep = _named(path, header, notes)
        width, end = len(header), keep[-1] + 1
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip() and width > 1):
                continue
            if all(not v.strip() for v in row):
                notes["blank"] += 1
                continue
            count += 1
            if len(row) > width:
                raise ImportFailed(f"has {len(row)} fields but the header has {width} (a comma inside an unquoted "
                                   "text?)", file=path.name, row=count)
            last = row
            notes["nameless_cells"] += any(v.strip() for v in row[end:])
            cells = [(v if v != "" else None) for v in row[keep[0]:end]]
            rows.append(dict(zip(columns, cells + [None] * (len(keep) - len(cells)), strict=True)))
            if len(rows) >= size:
                yield rows
                rows = []
    except csv.Error as exc:
        raise ImportFailed(f"not a valid CSV file ({_said(exc)}, near data row {count + 1})", file=path.name) from None
    if last and len(last) < width and not state["last"].endswith((b"\n", b"\r")):
        raise ImportFailed(f"the last row has {len(last)} of {width} fields and the file does not end with a line "
                           "break: the file was cut off", file=path.name, row=count)
    if rows:
        yield rows


ARROW_BLOCK_BYTES = 1 << 20      # larger blocks were slower, and held more memory (4 MB: 350 MB for the reader)
SCAN_BLOCK_BYTES = 1 << 20      # numpy's passes over a block stay in the CPU's cache


def _separator(byte: Any) -> Any:
    """Which of these bytes (a numpy array) end a field: a comma or a line break."""
    return (byte == 44) | (byte == 10) | (byte == 13)


def _fast_csv_stream(path: Path, size: int, progress: dict[str, int]) -> Iterator[Rows]:
    """`_csv_stream`'s rows, read by pyarrow's CSV parser (three times faster than the csv module) wherever the two
    read a file alike. Where pyarrow has read something it reads more leniently than the csv module (`_Scan`), or
    refuses (a row of the wrong width, a byte that is not UTF-8, a row larger than a block), the csv module reads on
    from the last row handed on, so that its message, naming the row, is the one given, or its reading (a short row
    padded, a blank line skipped) the one kept."""
    header = _plain_header(path)
    if header is None:
        yield from _csv_stream(path, _lines(path, False, progress), size, progress)
        return
    columns, keep = _named(path, header, progress)
    start, end = keep[0], keep[-1] + 1
    progress["blank"] = progress["nameless_cells"] = 0
    import pyarrow as pa
    import pyarrow.csv as pcsv

    names = [f"c{i}" for i in range(len(columns))]   # the header is read above: pyarrow does not rename repeats
    done = 0
    rows: Rows = []
    scan = _Scan(path)
    try:
        with pa.OSFile(str(path)) as source:
            reader = pcsv.open_csv(
                source, read_options=pcsv.ReadOptions(column_names=names, skip_rows=1, block_size=ARROW_BLOCK_BYTES),
                parse_options=pcsv.ParseOptions(newlines_in_values=True, ignore_empty_lines=True),
                convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()),
                                                    strings_can_be_null=True, quoted_strings_can_be_null=True,
                                                    null_values=[""]))
            before = 0
            for batch in reader:
                after, fresh = source.tell(), max(1, batch.num_rows)
                if scan.lenient_before(after):   # the bytes this batch came from: read alike by both, or not used
                    raise _Lenient
                values = [column.to_pylist() for column in batch.columns]
                for row in zip(*values, strict=True):
                    if all(v is None or not v.strip() for v in row):      # `,,,,` as spreadsheets save it
                        progress["blank"] += 1
                        continue
                    progress["nameless_cells"] += any(v is not None and v.strip() for v in row[end:])
                    rows.append(dict(zip(columns, row[start:end], strict=True)))
                while len(rows) >= size:
                    chunk, rows = rows[:size], rows[size:]
                    done += len(chunk)
                    # the bytes read so far, as a share of the batch's bytes (a small file is one batch)
                    progress["read"] = before + (after - before) * max(0, fresh - len(rows)) // fresh
                    yield chunk
                before = after
            progress["read"] = before
            if scan.lenient_before(scan.size):     # the file's end too (a quoted text never closed)
                raise _Lenient
    except (_Lenient, pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, pa.ArrowIndexError):
        rows = []         # the csv module reads the file again from its start, and counts again
        yield from _skip(_csv_stream(path, _lines(path, False, progress), size, progress), done)
        return
    finally:
        scan.close()
    if rows:
        yield rows


class _Lenient(Exception):
    """What pyarrow has read holds something the csv module reads otherwise (`_Scan`): it reads on from there."""


def _skip(chunks: Iterator[Rows], count: int) -> Iterator[Rows]:
    """The chunks without their first `count` rows."""
    for chunk in chunks:
        if count >= len(chunk):
            count -= len(chunk)
            continue
        yield chunk[count:]
        count = 0


def _plain_header(path: Path) -> list[str] | None:
    """The header row, when it is one line without quotes, in UTF-8 (else None: the csv module reads the file)."""
    with path.open("rb") as fh:
        first = fh.readline(1 << 20)
    if b'"' in first or not first.endswith(b"\n"):
        return None
    first = first.removesuffix(b"\n").removesuffix(b"\r")
    if b"\r" in first or b"\x00" in first:
        return None
    try:
        line = first.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return next(csv.reader([line]), None)


class _Scan:
    """Whether the file holds what pyarrow's CSV parser reads and the csv module (strict) refuses or reads otherwise: a
    NUL byte, a carriage return not followed by a line feed, a quoted text with more after its closing quote (`"ab"c`
    and `""x` pyarrow reads as abc and x, `"q" ,` as 'q '), or one never closed. Quotes inside a text that is not
    quoted (`5" screen`) read alike in both, but count too: past one, whether a quote opens or closes a text is no
    longer known from the count of quotes before it.

    Runs of quotes tell it: in a quoted text, each pair is one quote and an odd one out closes the text; at the start
    of a field (after a comma or a line break, outside quotes) the first opens it. A pass with numpy, a block at a time
    (about 0.25 s per 100 MB), as far into the file as asked: the import scans what pyarrow has read before it hands on
    the rows, so the rows come, with their progress, from the start."""

    def __init__(self, path: Path) -> None:
        self.fh = path.open("rb")
        self.size = path.stat().st_size
        self.scanned = 0       # bytes of the file looked at
        self.pending = b"\n"   # the file starts as if after a line break; then the last byte looked at, and quotes
        self.parity = 0        # quotes before `pending`, mod 2: odd inside a quoted text
        self.found: bool | None = None    # the answer, once known for the whole file or found early

    def lenient_before(self, offset: int) -> bool:
        """Whether the file's first `offset` bytes (or more) hold something lenient; at the file's size, the end too."""
        import numpy as np

        while self.found is None and (self.scanned < offset or offset >= self.size):
            block = self.fh.read(SCAN_BLOCK_BYTES)
            if block.endswith(b"\r"):
                block += self.fh.read(1)      # a CRLF is never cut between two blocks
            self.scanned += len(block)
            if b"\x00" in block or (b"\r" in block and block.count(b"\r") != block.count(b"\r\n")):
                self.found = True
                break
            data = self.pending + block if block else self.pending + b"\n"    # the end of the file ends a field
            end = len(data)
            while data[end - 1] == 34:   # a run of quotes at the end goes on in the next block
                end -= 1
            buf = np.frombuffer(data, dtype=np.uint8, count=end)
            quote = buf == 34
            if quote.any():
                # runs of quotes, from where quote turns on to where it turns off (`buf` starts and ends on a byte
                # that is not a quote, so edges pair up); nonzero of a bool array, 0.2 ms a MB (of np.diff's int8:
                # 2.2 ms, most of the scan)
                edges = np.flatnonzero(quote[1:] != quote[:-1])
                starts, stops = edges[0::2] + 1, edges[1::2] + 1
                length = stops - starts
                inside = (self.parity + np.cumsum(length) - length) % 2 == 1
                odd = length % 2 == 1
                field_start = _separator(buf[starts - 1]) & ~inside
                ends_field = _separator(buf[stops])
                closes = (inside & odd) | (field_start & ~odd)     # the run ends a quoted text ...
                literal = ~inside & ~field_start & odd             # ... or is a lone quote in a bare text
                if (closes & ~ends_field).any() or literal.any():
                    self.found = True
                    break
                self.parity = int(self.parity + length.sum()) % 2
            if not block:
                self.found = self.parity == 1   # a quoted text the file ends in (pyarrow keeps it; the csv module not)
                break
            self.pending = data[end - 1:]
        return bool(self.found)

    def close(self) -> None:
        self.fh.close()


def _as_text(file: str, batch: Any) -> Any:
    """The batch with its binary columns as UTF-8 text; a column whose bytes are not text is refused, named."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for i, field in enumerate(batch.schema):
        if pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type):
            try:
                text = pc.cast(batch.column(i), pa.string())
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                raise ImportFailed(f"column '{field.name}' holds binary data that is not UTF-8 text",
                                   file=file) from None
            batch = pa.RecordBatch.from_arrays([text if j == i else batch.column(j) for j in range(batch.num_columns)],
                                               names=batch.schema.names)
    return batch


def _batch_rows(file: str, batch: pa.RecordBatch, names: list[str]) -> Rows:
    """A Parquet batch's rows as dicts, keyed by the stripped `names`: binary columns as text, NaN as None."""
    rows: Rows = _as_text(file, batch).to_pylist()
    for record in rows:
        for key, value in record.items():
            if isinstance(value, float) and math.isnan(value):
                record[key] = None
    if names != batch.schema.names:
        rows = [{str(k).strip(): v for k, v in r.items()} for r in rows]
    return rows


def _parquet_stream(path: Path, size: int, progress: dict[str, int],
                    apart: Apart | None = None) -> Iterator[Rows | ArrowChunk]:
    try:
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        total, done, nbytes = max(1, parquet.metadata.num_rows), 0, path.stat().st_size
        first = True
        for batch in parquet.iter_batches(batch_size=size):
            done += batch.num_rows
            progress["read"] = nbytes * done // total
            names = [str(c).strip() for c in batch.schema.names]
            if first:
                _check_names(path, names)
                first = False
                if apart is not None and apart.decide is not None and not apart.on:
                    apart.on = apart.decide(names)
            if apart is not None and apart.on and batch.num_rows:
                yield ArrowChunk(batch, names, path.name)
            else:
                yield _batch_rows(path.name, batch, names)
    except ImportFailed:
        raise
    except Exception as exc:  # pyarrow raises many kinds for a damaged file
        raise _not_parquet(exc, path.name) from None


def _not_parquet(exc: Exception, file: str) -> ImportFailed:
    return ImportFailed(f"not a valid Parquet file ({type(exc).__name__}: {_said(exc)})", file=file)
