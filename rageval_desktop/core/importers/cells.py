"""Typed reading of one cell. Each helper raises ImportFailed naming the row and column."""

from __future__ import annotations

import ast
import json
import math
from typing import Any

from rageval_desktop.core.errors import ImportFailed

MAX_CELL_CHARS = 1_000_000  # a larger cell is almost always a broken export, and would stall every view


class Cells:
    """Reads cells of one file; remembers the file name for error messages."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, message: str, row: int, column: str | None) -> ImportFailed:
        return ImportFailed(message, file=self.file, row=row, column=column)

    @staticmethod
    def missing(value: Any) -> bool:
        if value is None:
            return True
        if isinstance(value, float) and math.isnan(value):
            return True
        return type(value).__name__ == "NAType"

    def text(self, rec: dict, column: str, row: int, *, required: bool = False) -> str | None:
        value = rec.get(column)
        if self.missing(value) or (isinstance(value, str) and not value.strip()):
            if required:
                raise self.fail("is empty; a value is required", row, column)
            return None
        if isinstance(value, (bool, list, dict, tuple)):
            raise self.fail(f"expected text, got {type(value).__name__}", row, column)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value)
        self.check_size(text, row, column)
        return text

    def check_size(self, text: str, row: int, column: str) -> None:
        if len(text) > MAX_CELL_CHARS:
            raise self.fail(f"the cell holds {len(text) / 1e6:.1f} million characters; the limit is "
                            f"{MAX_CELL_CHARS / 1e6:.0f} million per cell", row, column)

    def number(self, rec: dict, column: str, row: int, *, integer: bool = False,
               minimum: float | None = 0.0) -> float | int | None:
        value = rec.get(column)
        if self.missing(value) or (isinstance(value, str) and not value.strip()):
            return None
        if isinstance(value, bool):
            raise self.fail(f"expected a number, got {value!r}", row, column)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise self.fail(f"expected a number, got {str(value)[:40]!r}", row, column) from None
        if math.isnan(number) or math.isinf(number):
            raise self.fail(f"expected a finite number, got {value!r}", row, column)
        if minimum is not None and number < minimum:
            raise self.fail(f"must be ≥ {minimum:g}, got {number:g}", row, column)
        if integer:
            if not number.is_integer():
                raise self.fail(f"expected a whole number, got {value!r}", row, column)
            return int(number)
        return number

    def listing(self, rec: dict, column: str, row: int) -> list[Any]:
        """A list cell: a real list (JSON, Parquet), or text holding a JSON or Python list (CSV, XLSX)."""
        value = rec.get(column)
        if self.missing(value):
            return []
        if hasattr(value, "tolist") and not isinstance(value, str):  # numpy arrays from Parquet
            value = value.tolist()
        if isinstance(value, (list, tuple)):
            return list(value)
        if isinstance(value, str):
            stripped = value.strip()
            if not stripped:
                return []
            self.check_size(stripped, row, column)
            if stripped.startswith("["):
                try:
                    parsed = json.loads(stripped)
                except json.JSONDecodeError:
                    try:
                        parsed = ast.literal_eval(stripped)  # ragas CSVs hold Python reprs
                    except (ValueError, SyntaxError, MemoryError, RecursionError):
                        parsed = None
                if isinstance(parsed, list):
                    return parsed
            raise self.fail(f"expected a list such as [\"a\", \"b\"], got {stripped[:40]!r}", row, column)
        raise self.fail(f"expected a list, got {type(value).__name__}", row, column)

    def id_list(self, rec: dict, column: str, row: int) -> list[str]:
        items = self.listing(rec, column, row)
        out = []
        for item in items:
            if self.missing(item) or isinstance(item, (list, dict, bool)):
                raise self.fail(f"expected a list of ids, found {item!r}", row, column)
            if isinstance(item, float) and item.is_integer():
                item = int(item)
            out.append(str(item))
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
            if hasattr(value, "tolist") and not isinstance(value, str):
                value = value.tolist()
            if isinstance(value, str):
                self.check_size(value, row, key)
            try:
                json.dumps(value)
            except TypeError:
                value = str(value)
            extra[key] = value
        return extra
