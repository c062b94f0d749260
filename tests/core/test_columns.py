"""The audit computes on columns of arrays (core.review.columns), not DataFrames: `rageval agreement` imports no
pandas (issue 50: its import was a third of a second of the command), and the columns' operations equal the
DataFrame ones they replace."""

import subprocess
import sys

import numpy as np
import pandas as pd

from rageval_desktop.core.review.columns import Columns


def _table():
    rows = [(3, "1", "ann", 4.0), (1, "0", "bob", None), (3, "1", "bob", 2.0), (2, "0", "ann", 5.0),
            (1, "0", "bob", 3.0), (3, "2", None, 1.0)]
    return Columns.of_rows(rows, ("row", "target", "reviewer", "score")), pd.DataFrame(
        rows, columns=["row", "target", "reviewer", "score"])


def test_first_last_and_groups_are_a_dataframes():
    cols, frame = _table()
    assert cols.first("row", "target").tolist() == (~frame.duplicated(["row", "target"])).tolist()
    assert cols.last("row", "target", "reviewer").tolist() == (
        ~frame.duplicated(["row", "target", "reviewer"], keep="last")).tolist()
    for name in ("row", "reviewer", "score"):
        expected = {key: list(idx) for key, idx in frame.groupby(name).indices.items()}
        found = {key: list(idx) for key, idx in cols.groups(name).items()}
        assert found == expected and list(found) == sorted(expected)


def test_columns_keep_their_kinds_and_take_rows_in_order():
    cols, _ = _table()
    assert cols["row"].dtype == np.int64 and cols["score"].dtype == float and cols["target"].dtype == object
    assert np.isnan(cols["score"][1]) and cols["reviewer"][5] is None
    picked = cols.take(np.array([4, 0]))
    assert picked.keys("row", "reviewer") == [(1, "bob"), (3, "ann")]
    assert len(cols.take(cols["row"] == 3)) == 3
    frame = cols.with_columns(n=np.arange(6)).frame()
    assert list(frame.columns) == ["row", "target", "reviewer", "score", "n"] and len(frame) == 6


def test_the_agreement_command_imports_no_pandas(demo_file):
    code = ("import sys, io, contextlib\n"
            "from rageval_desktop.cli import main\n"
            f"sys.argv = ['rageval', 'agreement', '--json', {str(demo_file)!r}]\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    try:\n"
            "        main()\n"
            "    except SystemExit as e:\n"
            "        assert not e.code, e.code\n"
            "assert '\"verdict\"' in out.getvalue()\n"
            "print(sorted(m for m in ('pandas', 'pyarrow', 'scipy', 'sklearn') if m in sys.modules))\n")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert found.strip() == "[]", found


def test_the_short_sums_are_numpys_to_the_bit():
    """κ's margins are added column by column for speed (core.review.agreement_stats.margins); they must be the
    sums numpy makes, bit for bit, or an interval would move in its last digit."""
    from rageval_desktop.core.review.agreement_stats import add_last, margins

    rng = np.random.default_rng(5)
    for k in (2, 3, 4, 5, 7, 8, 11):
        stack = rng.random((300, k, k)) * rng.integers(1, 10_000)
        rows, cols = margins(stack)
        assert np.array_equal(rows, stack.sum(axis=-1)) and np.array_equal(cols, stack.sum(axis=-2))
        assert np.array_equal(add_last(stack[:, 0, :] * 3.7), (stack[:, 0, :] * 3.7).sum(axis=-1))


def test_taking_nothing_gives_empty_columns_of_the_same_names():
    cols, _ = _table()
    for nothing in ([], np.array([], dtype=np.intp), np.zeros(6, bool)):
        none = cols.take(nothing)
        assert none.empty and none.names == cols.names and none.groups("row") == {} and none.first("row").size == 0
