"""A small table as named numpy arrays of one length: what an audit reads and computes on.

An audit's pairs are a few thousand rows a judge; the audit needs their columns, masks of them, their groups and the
first of each key, never a DataFrame's machinery. Importing pandas (and the pyarrow it brings) was a third of a
second of every `rageval agreement`, and its merges, groupbys and copies another quarter (issue 50). Where a caller
wants a DataFrame, `frame()` makes one (pandas imported there).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import ArrayLike, NDArray

    Column = ArrayLike | Sequence[object]


class Columns:
    """Named columns of equal length (numpy arrays; text as object arrays). Not changed in place: every operation
    returns new columns, and a column read is not to be written to (they are shared in a block of shared reads)."""

    __slots__ = ("_data", "_n", "names")

    def __init__(self, data: dict[str, Column], n: int | None = None) -> None:
        import numpy as np

        self._data: dict[str, NDArray[Any]] = {}
        for name, values in data.items():
            self._data[name] = values if isinstance(values, np.ndarray) else _array(list(values))  # type: ignore[arg-type]
        lengths = {len(v) for v in self._data.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self._n = lengths.pop() if lengths else (n or 0)
        self.names = tuple(self._data)

    @classmethod
    def of_rows(cls, rows: list[tuple[object, ...]], names: Iterable[str]) -> Columns:
        """Columns from rows (as a query returns them)."""
        names = list(names)
        if not rows:
            return cls({name: _array([]) for name in names})
        return cls({name: _array(list(values)) for name, values in zip(names, zip(*rows, strict=True),
                                                                          strict=True)})

    @classmethod
    def of_frame(cls, frame: pd.DataFrame, names: Iterable[str]) -> Columns:
        """The named columns of a DataFrame (text as objects, missing text as None)."""
        return cls({name: _array(frame[name].tolist()) for name in names}, len(frame))

    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: object) -> bool:
        return name in self._data

    def __getitem__(self, name: str) -> NDArray[Any]:
        return self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    @property
    def empty(self) -> bool:
        return self._n == 0

    def take(self, idx: ArrayLike) -> Columns:
        """The rows at positions `idx` (or where a boolean mask is true), in that order."""
        import numpy as np

        where = np.asarray(idx)
        if where.dtype == bool:
            where = np.flatnonzero(where)
        elif where.size == 0:
            where = where.astype(np.intp)             # (an empty list is floats to numpy)
        return Columns({name: values[where] for name, values in self._data.items()}, int(where.size))

    def with_columns(self, **columns: Column) -> Columns:
        """These columns with some added or replaced (added at the end, in the order given)."""
        return Columns({**self._data, **columns}, self._n)

    def keys(self, *names: str) -> list[tuple[object, ...]]:
        """Each row's values of `names`, as tuples (plain Python values: ints, floats, strings, None)."""
        return list(zip(*(self._data[name].tolist() for name in names), strict=True)) if self._n else []

    def targets(self) -> list[tuple[int, str]]:
        """Each row's (run row, target): the key an audit's pairs are matched, weighed and counted by."""
        return cast("list[tuple[int, str]]", self.keys("run_row_id", "target"))

    def first(self, *names: str) -> NDArray[np.bool_]:
        """True at each row that is the first of its key (`names`' values): a DataFrame's ~duplicated(names)."""
        import numpy as np

        seen: set[tuple[object, ...]] = set()
        out = np.zeros(self._n, bool)
        for i, key in enumerate(self.keys(*names)):
            if key not in seen:
                seen.add(key)
                out[i] = True
        return out

    def last(self, *names: str) -> NDArray[np.bool_]:
        """True at each row that is the last of its key: a DataFrame's ~duplicated(names, keep="last")."""
        import numpy as np

        seen: set[tuple[object, ...]] = set()
        out = np.zeros(self._n, bool)
        keys = self.keys(*names)
        for i in range(self._n - 1, -1, -1):
            if keys[i] not in seen:
                seen.add(keys[i])
                out[i] = True
        return out

    def groups(self, name: str) -> dict[Any, NDArray[np.intp]]:
        """Each value of column `name` -> the positions holding it, values in sorted order (a groupby's indices;
        missing values, None or NaN, in no group)."""
        import numpy as np

        values = self._data[name]
        if values.dtype != object:                # numbers: one stable sort, split where the value changes
            keep = np.flatnonzero(~np.isnan(values)) if values.dtype.kind == "f" else np.arange(values.size)
            if keep.size == 0:
                return {}
            order = keep[np.argsort(values[keep], kind="stable")]
            found, starts = np.unique(values[order], return_index=True)
            return {value: part for value, part in zip(found.tolist(), np.split(order, starts[1:]), strict=True)}
        if values.size and all(type(v) is str for v in values.tolist()):     # text: the same, sorted by numpy
            found, where = np.unique(values, return_inverse=True)
            order = np.argsort(where, kind="stable")
            starts = np.cumsum(np.bincount(where, minlength=len(found)))[:-1]
            return {value: part for value, part in zip(found.tolist(), np.split(order, starts), strict=True)}
        seen: dict[Any, list[int]] = {}
        for i, value in enumerate(values.tolist()):
            if value is not None and value == value:
                seen.setdefault(value, []).append(i)
        return {value: np.asarray(seen[value], dtype=np.intp) for value in sorted(seen)}

    def frame(self) -> pd.DataFrame:
        """A DataFrame of these columns (for callers that want one; pandas is imported here)."""
        import pandas as pd

        return pd.DataFrame({name: values for name, values in self._data.items()}, index=pd.RangeIndex(self._n))


def _array(values: list[object]) -> NDArray[np.generic]:
    """A column from Python values: numbers as numbers (None among numbers as NaN), anything else as objects."""
    import numpy as np

    kinds = set(map(type, values))
    if not kinds or kinds - {int, float, bool, type(None)}:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    if kinds == {bool}:
        return np.array(values, dtype=bool)
    if kinds == {int}:
        return np.array(values, dtype=np.int64)
    if kinds == {type(None)}:
        return np.array(values, dtype=object)
    return np.array(values, dtype=float)          # floats, or numbers with None (as NaN)
