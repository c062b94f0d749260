"""Files to records. Every failure names the file and, where one exists, the row and column.

Text formats are decoded here (strict UTF-8, BOM allowed) so an encoding error can name its line; pandas
parses. Row numbers are 1-based data rows (the header is not counted), the same in every format.
"""

from __future__ import annotations

import gzip
import io
import json
import math
from pathlib import Path
from typing import Any

from rageval_desktop.core.errors import ImportFailed

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet",
           ".xlsx": "xlsx"}
TEXT_FORMATS = {"csv", "jsonl", "json"}
JSON_CONTAINER_KEYS = ("rows", "data", "records", "samples", "examples")


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


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ImportFailed(f"line {line} is not UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start}); "
                           "save the file as UTF-8", file=path.name) from None


def read_records(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """All rows of a tabular file as dicts (missing cells = None) and the column names, in file order."""
    path = Path(path)
    fmt, gz = file_format(path)
    if not path.is_file():
        raise ImportFailed("no such file", file=str(path))
    raw = path.read_bytes()
    if gz:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ImportFailed(f"not a valid gzip file ({exc})", file=path.name) from None
    if not raw.strip():
        raise ImportFailed("the file is empty", file=path.name)
    if fmt == "jsonl":  # parsed line by line straight to records: no DataFrame round trip, half the memory
        return _jsonl(path, raw)
    if fmt in TEXT_FORMATS:
        text = _decode(path, raw)
        del raw
        frame = _csv(path, text) if fmt == "csv" else _json(path, text)
    else:
        frame = _binary(path, fmt, raw)
    columns = [str(c).strip() for c in frame.columns]
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise ImportFailed(f"duplicate column name(s): {', '.join(dupes)}", file=path.name)
    if "" in columns or any(c.startswith("Unnamed: ") for c in columns):
        raise ImportFailed("a column has no name in the header row", file=path.name)
    frame.columns = columns
    if len(frame) == 0:
        raise ImportFailed("the file has a header but no data rows", file=path.name)
    records = frame.to_dict("records")
    for record in records:
        for key, value in record.items():
            if isinstance(value, float) and math.isnan(value):
                record[key] = None
    return records, columns


def _csv(path: Path, text: str):
    import pandas as pd

    try:
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, ValueError) as exc:
        raise ImportFailed(f"not a valid CSV file ({str(exc).strip()})", file=path.name) from None


def _jsonl(path: Path, raw: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    rows: list[dict[str, Any]] = []
    columns: dict[str, None] = {}
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ImportFailed(f"line {number} is not UTF-8 (byte {line[exc.start]:#04x}); save the file as UTF-8",
                               file=path.name) from None
        except json.JSONDecodeError as exc:
            raise ImportFailed(f"line {number} is not valid JSON ({exc.msg}, column {exc.colno})",
                               file=path.name) from None
        if not isinstance(obj, dict):
            raise ImportFailed(f"line {number} is a JSON {type(obj).__name__}, expected an object",
                               file=path.name)
        for key in obj:
            if key not in columns:
                columns[key] = None
        rows.append(obj)
    names = [str(c).strip() for c in columns]
    if len(set(names)) != len(names) or "" in names:
        raise ImportFailed("column names must be unique and not empty", file=path.name)
    if not rows:
        raise ImportFailed("the file has no data rows", file=path.name)
    if names != list(columns):
        rows = [{str(k).strip(): v for k, v in r.items()} for r in rows]
    return rows, names


def _json(path: Path, text: str):
    import pandas as pd

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                           file=path.name) from None
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
                return pd.DataFrame(data)
            raise ImportFailed("expected a list of objects (or {\"rows\": [...]})", file=path.name)
    if not isinstance(data, list):
        raise ImportFailed("expected a list of objects", file=path.name)
    for i, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise ImportFailed(f"item is a JSON {type(obj).__name__}, expected an object",
                               file=path.name, row=i)
    return pd.DataFrame.from_records(data)


def _binary(path: Path, fmt: str, raw: bytes):
    import pandas as pd

    try:
        if fmt == "parquet":
            return pd.read_parquet(io.BytesIO(raw))
        frame = pd.read_excel(io.BytesIO(raw), engine="openpyxl", dtype=object)
        return frame.dropna(how="all")
    except ImportError:
        raise
    except Exception as exc:  # pyarrow and openpyxl raise many kinds for a damaged file
        kind = "Parquet" if fmt == "parquet" else "XLSX"
        raise ImportFailed(f"not a valid {kind} file ({type(exc).__name__}: {exc})", file=path.name) from None
