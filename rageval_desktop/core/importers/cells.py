"""Typed reading of one cell. Each helper raises ImportFailed naming the row and column."""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any, Literal, overload

from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers.readers import parsed_shape

MAX_CELL_CHARS = 1_000_000  # a larger cell is almost always a broken export, and would stall every view
MAX_NUMBER = 1e15           # latencies, costs and token counts beyond this are broken data (and overflow SQLite)
MAX_DEPTH = 32              # nesting of lists/objects kept in metadata
ID_SEPARATORS = re.compile(r"[;|]")
SPREADSHEET_CELL_LIMIT = 32_767  # what Excel keeps of a cell; a cell of exactly this length was probably cut
_SURROGATE = re.compile("[\ud800-\udfff]")
_INVISIBLE = re.compile("[\\s\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]+")


def _loads(text: str, exact: bool = True) -> Any:
    """json.loads, through orjson (several times faster) where the two read alike: orjson refuses what the json
    module reads differently (NaN, lone surrogates, nesting past 1024) and reads an integer beyond 64 bits as a
    float (`parsed_shape` finds it), so those go to the json module. Both keep the last of a key named twice.
    `exact=False` leaves that float as orjson read it, for a caller that checks every value it reads."""
    import orjson

    try:
        found = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    return json.loads(text) if exact and parsed_shape(found)[1] else found


class Cells:
    """Reads cells of one file; remembers the file name for error messages and collects warnings."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.spreadsheet = file.lower().endswith(".xlsx")
        self.warnings: list[str] = []
        self._cut_columns: set[str] = set()
        self.offset = 0   # rows before the chunk being read (a file read a chunk at a time): messages name file rows

    def fail(self, message: str, row: int, column: str | None) -> ImportFailed:
        return ImportFailed(message, file=self.file, row=row + self.offset, column=column)

    @staticmethod
    def missing(value: Any) -> bool:
        if value is None:
            return True
        if isinstance(value, float) and math.isnan(value):
            return True
        return type(value).__name__ == "NAType"

    @overload
    def text(self, rec: dict, column: str, row: int, *, required: Literal[True]) -> str: ...

    @overload
    def text(self, rec: dict, column: str, row: int, *, required: bool = False) -> str | None: ...

    def text(self, rec: dict, column: str, row: int, *, required: bool = False) -> str | None:
        value = rec.get(column)
        if type(value) is str and value.isascii() and len(value) <= MAX_CELL_CHARS and "\x00" not in value \
                and value.strip() and not self.spreadsheet and (not required or value.isprintable()):
            return value   # the common cell (plain ASCII text): the checks below, in fewer steps
        if self.missing(value) or (isinstance(value, str) and not value.strip()):
            if required:
                raise self.fail("is empty; a value is required", row, column)
            return None
        if isinstance(value, (bool, list, dict, tuple, bytes, bytearray)) or hasattr(value, "__array__"):
            raise self.fail(f"expected text, got {type(value).__name__}", row, column)
        if isinstance(value, float) and value.is_integer() and abs(value) < MAX_NUMBER:
            value = int(value)
        if isinstance(value, int) and abs(value) >= 10 ** 300:
            raise self.fail("holds a number of 300 digits or more; write it as quoted text if it is one", row, column)
        text = str(value)
        self.check_size(text, row, column)
        if required and not _INVISIBLE.sub("", text):
            raise self.fail("holds only invisible characters; a value is required", row, column)
        return text

    def check_size(self, text: str, row: int, column: str) -> None:
        """Every text the file gives passes here: size, then characters SQLite and every view can hold."""
        if len(text) > MAX_CELL_CHARS:
            raise self.fail(f"the cell holds {len(text) / 1e6:.1f} million characters; the limit is "
                            f"{MAX_CELL_CHARS / 1e6:.0f} million per cell", row, column)
        if "\x00" in text:
            raise self.fail("contains a NUL character (\\x00): the file is binary or damaged", row, column)
        if not text.isascii() and _SURROGATE.search(text):   # isascii() is O(1): most texts skip the search
            raise self.fail("contains an invalid character (a lone UTF-16 surrogate, such as \\ud800); fix the "
                            "program that wrote the file", row, column)
        if self.spreadsheet and len(text) == SPREADSHEET_CELL_LIMIT and column not in self._cut_columns:
            self._cut_columns.add(column)
            self.warnings.append(f"{self.file}, row {row + self.offset}, column '{column}': the cell holds exactly "
                                 f"{SPREADSHEET_CELL_LIMIT:,} characters, the most a spreadsheet cell keeps — the "
                                 "text was probably cut off when the file was saved; export as CSV or JSONL")

    @overload
    def number(self, rec: dict, column: str, row: int, *, integer: Literal[True],
               minimum: float | None = 0.0) -> int | None: ...

    @overload
    def number(self, rec: dict, column: str, row: int, *, integer: bool = False,
               minimum: float | None = 0.0) -> float | int | None: ...

    def number(self, rec: dict, column: str, row: int, *, integer: bool = False,
               minimum: float | None = 0.0) -> float | int | None:
        value = rec.get(column)
        if value is None:
            return None
        # the common cell — a plain number, or one written as text (every number of a CSV) — passes the checks
        # below in fewer steps; any other goes through them, which word the refusal
        kind = type(value)
        if kind is float or kind is int:
            plain, whole = value, kind is int
        elif kind is str:
            try:
                plain = float(value)
            except ValueError:
                plain = math.nan
            whole = plain.is_integer()
        else:
            plain, whole = math.nan, False
        if math.isfinite(plain) and abs(plain) <= MAX_NUMBER and (minimum is None or plain >= minimum) and (
                not integer or whole):
            return int(plain) if integer else float(plain)
        if self.missing(value) or (isinstance(value, str) and not value.strip()):
            return None
        if isinstance(value, bool):
            raise self.fail(f"expected a number, got {value!r}", row, column)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise self.fail(f"expected a number, got {str(value)[:40]!r}", row, column) from None
        if math.isnan(number) or math.isinf(number):
            raise self.fail(f"expected a finite number, got {str(value)[:40]!r}", row, column)
        if abs(number) > MAX_NUMBER:
            raise self.fail(f"the number {number:.3g} is too large (the limit is {MAX_NUMBER:.0e})", row, column)
        if minimum is not None and number < minimum:
            raise self.fail(f"must be ≥ {minimum:g}, got {number:g}", row, column)
        if integer:
            if not number.is_integer():
                raise self.fail(f"expected a whole number, got {value!r}", row, column)
            return int(number)
        return number

    def listing(self, rec: dict, column: str, row: int, *, exact: bool = True) -> list[Any]:
        """A list cell: a real list (JSON, Parquet), or text holding a JSON or Python list (CSV, XLSX). With
        `exact=False` an integer beyond 64 bits in the text may come as a float of 2**63 or more (`_loads`)."""
        value = rec.get(column)
        if self.missing(value):
            return []
        tolist = getattr(value, "tolist", None)
        if tolist is not None and not isinstance(value, str):  # numpy arrays from Parquet
            value = tolist()
        if isinstance(value, (list, tuple)):
            return list(value)
        if isinstance(value, str):
            stripped = value.strip()
            if not stripped:
                return []
            self.check_size(stripped, row, column)
            if stripped.startswith("["):
                try:
                    parsed = _loads(stripped, exact)
                except RecursionError:
                    raise self.fail("the list is nested too deeply", row, column) from None
                except ValueError:  # not JSON (or a number too long to read): maybe a Python repr
                    try:
                        parsed = ast.literal_eval(stripped)  # ragas CSVs hold Python reprs
                    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                        parsed = None
                if isinstance(parsed, list):
                    return parsed
            raise self.fail(f"expected a list such as [\"a\", \"b\"], got {stripped[:40]!r}", row, column)
        raise self.fail(f"expected a list, got {type(value).__name__}", row, column)

    def id_list(self, rec: dict, column: str, row: int) -> list[str]:
        """A list of ids: a JSON list (or a real list), or — in CSV and spreadsheet cells — ids separated by `;`
        or `|` (`c1;c2`, `c1 | c2`); a single bare id is a list of one."""
        value = rec.get(column)
        if isinstance(value, str) and value.strip() and not value.strip().startswith("["):
            self.check_size(value, row, column)
            items: list = [part.strip() for part in ID_SEPARATORS.split(value)]
            if any(not part for part in items):
                raise self.fail(f"an empty id in {value.strip()[:60]!r}: separate ids with ';' or '|', "
                                "or write a JSON list", row, column)
        else:
            items = self.listing(rec, column, row)
        out = []
        for item in items:
            if self.missing(item) or isinstance(item, (list, dict, bool)):
                raise self.fail(f"expected a list of ids, found {item!r}", row, column)
            if isinstance(item, float) and item.is_integer() and abs(item) < MAX_NUMBER:
                item = int(item)
            if isinstance(item, int) and abs(item) >= 10 ** 300:
                raise self.fail("holds an id that is a number of 300 digits or more; write ids as quoted text",
                                row, column)
            text = str(item)
            self.check_size(text, row, column)
            out.append(text)
        return out

    def text_list(self, rec: dict, column: str, row: int) -> list[str]:
        items = self.listing(rec, column, row)
        out = []
        for item in items:
            if not isinstance(item, str):
                raise self.fail(f"expected a list of texts, found {type(item).__name__}", row, column)
            self.check_size(item, row, column)
            out.append(item)
        return out

    def extras(self, rec: dict, known: set[str], row: int) -> dict[str, Any]:
        """Columns no layout knows are kept in metadata, not dropped."""
        extra = {}
        for key, value in rec.items():
            if key in known or self.missing(value):
                continue
            extra[str(key)] = self.plain(value, row, str(key), 0)
        return extra

    def plain(self, value: Any, row: int, column: str, depth: int) -> Any:
        """A value JSON (and SQLite's json_valid) can hold: NaN and infinities become null, numbers too large
        for any reader become text, nesting is bounded, texts are checked like every other cell."""
        if depth > MAX_DEPTH:
            raise self.fail(f"the value is nested more than {MAX_DEPTH} levels deep", row, column)
        if hasattr(value, "tolist") and not isinstance(value, str):
            value = value.tolist()
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            return value if abs(value) < 2 ** 63 else (str(value) if abs(value) < 10 ** 300 else None)
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, str):
            self.check_size(value, row, column)
            return value
        if isinstance(value, (list, tuple)):
            return [self.plain(v, row, column, depth + 1) for v in value]
        if isinstance(value, dict):
            return {str(k): self.plain(v, row, column, depth + 1) for k, v in value.items()}
        if self.missing(value):
            return None
        text = str(value)
        self.check_size(text, row, column)
        return text
