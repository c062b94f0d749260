"""A native run read from Parquet is checked a column at a time where every cell and passage is plain
(`layouts.column_run_records`): the project then holds exactly what reading it a row at a time gives — rows, passages,
warnings — and a chunk with any cell or item that is not plain goes the long way, which reads it or words the
refusal."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import common, import_run, readers
from rageval_desktop.core.store.project import Project

ITEM = pa.struct([("chunk_id", pa.string()), ("text", pa.string()), ("score", pa.float64())])


def _lists(n: int, item=lambda r, k: {"chunk_id": f"c{r}-{k}", "text": f"passage {k} of row {r}", "score": 1 - k / 10}):
    return [[item(r, k) for k in range(1 + r % 3)] for r in range(n)]


def _table(retrieved: list, item_type=ITEM, list_type=pa.list_) -> pa.Table:
    n = len(retrieved)
    return pa.table({"id": [f"q{r}" for r in range(n)], "question": [f"Question {r}?" for r in range(n)],
                     "answer": [f"answer {r}" for r in range(n)],
                     "retrieved": pa.array(retrieved, type=list_type(item_type)),
                     "latency_ms": [100.0 + r for r in range(n)]})


def _with(lists: list, row: int, value) -> list:
    lists[row] = value
    return lists


CASES = {   # name: (table, read a column at a time?)
    "plain, a row whose scores rise": (
        _table(_with(_lists(9), 6, [{"chunk_id": "a", "text": "x", "score": 0.1},
                                    {"chunk_id": "b", "text": "y", "score": 0.9}])), True),
    "float32 scores, in_prompt with gaps, a field no one reads": (
        _table([[{"chunk_id": f"c{r}", "text": "t é ✓ \u202e", "score": 0.1, "in_prompt": (None, True, False)[r % 3],
                  "url": "u"}] for r in range(7)],
               pa.struct([("chunk_id", pa.string()), ("text", pa.string()), ("score", pa.float32()),
                          ("in_prompt", pa.bool_()), ("url", pa.string())])), True),
    "integer scores, one missing": (
        _table([[{"chunk_id": f"c{r}", "text": "t", "score": None if r == 4 else r}] for r in range(7)],
               pa.struct([("chunk_id", pa.string()), ("text", pa.string()), ("score", pa.int64())])), True),
    "no score, large lists of large strings, empty lists": (
        _table([[{"chunk_id": f"c{r}", "text": "t"}] * (r % 2) for r in range(7)],
               pa.struct([("chunk_id", pa.large_string()), ("text", pa.large_string())]), pa.large_list), True),
    "an empty chunk id": (_table(_with(_lists(7), 5, [{"chunk_id": "", "text": "t", "score": 0.5}])), True),
    "a NaN score": (_table(_with(_lists(7), 5, [{"chunk_id": "c", "text": "t", "score": math.nan}])), False),
    "an infinite score": (_table(_with(_lists(7), 5, [{"chunk_id": "c", "text": "t", "score": math.inf}])), False),
    "a score of 1e30": (_table(_with(_lists(7), 5, [{"chunk_id": "c", "text": "t", "score": 1e30}])), False),
    "a passage without a chunk id": (_table(_with(_lists(7), 5, [{"chunk_id": None, "text": "t", "score": 1}])),
                                     False),
    "a passage without a text": (_table(_with(_lists(7), 5, [{"chunk_id": "c", "text": None, "score": 1}])), False),
    "a NUL in a text": (_table(_with(_lists(7), 5, [{"chunk_id": "c", "text": "a\x00b", "score": 1}])), False),
    "a text over the cell limit": (_table(_with(_lists(7), 5, [{"chunk_id": "c", "text": "x" * 1_000_001}])), False),
    "a missing item": (_table(_with(_lists(7), 5, [None])), False),
    "a missing list": (_table(_with(_lists(7), 5, None)), False),
    "numeric chunk ids": (
        _table([[{"chunk_id": r, "text": "t"}] for r in range(7)],
               pa.struct([("chunk_id", pa.int64()), ("text", pa.string())])), False),
    "binary texts": (
        _table([[{"chunk_id": "c", "text": b"t"}] for r in range(7)],
               pa.struct([("chunk_id", pa.string()), ("text", pa.binary())])), False),
    "a string score": (
        _table([[{"chunk_id": "c", "text": "t", "score": "0.5"}] for r in range(7)],
               pa.struct([("chunk_id", pa.string()), ("text", pa.string()), ("score", pa.string())])), False),
    # the rows' own cells
    "whole-number ids, missing answers and token counts, whole floats as token counts": (
        pa.table({"id": pa.array(range(7), pa.int64()), "question": [f"Q{r}?" for r in range(7)],
                  "answer": [None if r % 2 else "a" for r in range(7)], "retrieved": _lists(7),
                  "prompt_tokens": pa.array([None, 3, 4, 5, None, 7, 8], pa.int32()),
                  "completion_tokens": [1.0, 2.0, None, 4.0, 5.0, 6.0, 7.0], "cost_usd": [0.0] * 7}), True),
    "texts in other scripts, and invisible characters beside visible ones": (
        pa.table({"id": [f"行{r}" for r in range(7)], "question": ["מה? \u202e", "\u200bQ?", "日本語？", "Q?", "Ä?",
                                                                   "\u3000x", "¿Q?"],
                  "answer": ["\u2028x", "ok", " é ", "ok", "ok", "ok", "ok"], "retrieved": _lists(7)}), True),
    "a blank answer": (pa.table({"question": ["Q?"] * 7, "answer": ["a", "a", "a", "a", "a", "   ", "a"],
                                 "retrieved": _lists(7)}), False),
    "an answer blank in another script's spaces": (
        pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 5 + ["\u3000\u00a0", "a"], "retrieved": _lists(7)}),
        False),
    "a question of invisible characters only": (
        pa.table({"question": ["Q?"] * 5 + ["\u200b\u200d", "Q?"], "answer": ["a"] * 7, "retrieved": _lists(7)}),
        False),
    "a missing question": (pa.table({"question": ["Q?"] * 5 + [None, "Q?"], "answer": ["a"] * 7,
                                     "retrieved": _lists(7)}), False),
    "a NUL in a question": (pa.table({"question": ["Q?"] * 5 + ["Q\x00?", "Q?"], "answer": ["a"] * 7,
                                      "retrieved": _lists(7)}), False),
    "an answer over the cell limit": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 5 + ["x" * 1_000_001, "a"],
                                                "retrieved": _lists(7)}), False),
    "a negative latency": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 7, "retrieved": _lists(7),
                                     "latency_ms": [1.0] * 5 + [-1.0, 1.0]}), False),
    "a NaN latency": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 7, "retrieved": _lists(7),
                                "latency_ms": [1.0] * 5 + [math.nan, 1.0]}), False),
    "an infinite cost": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 7, "retrieved": _lists(7),
                                   "cost_usd": [1.0] * 5 + [math.inf, 1.0]}), False),
    "a latency past the limit": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 7, "retrieved": _lists(7),
                                           "latency_ms": [1.0] * 5 + [1e16, 1.0]}), False),
    "a token count that is not whole": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 7, "retrieved": _lists(7),
                                                  "prompt_tokens": [1.0] * 5 + [1.5, 1.0]}), False),
    "true/false token counts": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 7, "retrieved": _lists(7),
                                          "prompt_tokens": [True] * 7}), False),
    "a column no layout knows (metadata)": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 7,
                                                      "retrieved": _lists(7), "query_run": [1] * 7}), False),
    "passages written as text": (pa.table({"question": ["Q?"] * 7, "answer": ["a"] * 7,
                                           "retrieved": ['[{"chunk_id": "c", "text": "t"}]'] * 7}), False),
    "float ids": (pa.table({"id": [1.0, 2.0, 3.5, 4.0, 5.0, 6.0, 7.0], "question": ["Q?"] * 7, "answer": ["a"] * 7,
                            "retrieved": _lists(7)}), False),
}


def _import(tmp_path, name: str, path, monkeypatch, columns: bool) -> tuple:
    """What the project holds (or the refusal) after importing `path`, its passages read as columns or not."""
    taken: list[bool] = []
    real = common.column_run_records

    def watched(chunk):
        got = real(chunk) if columns else None
        taken.append(got is not None)
        return got

    monkeypatch.setattr(common, "column_run_records", watched)
    project = Project.create(tmp_path / f"{name}.rageval")
    try:
        report = import_run(project, path, "v1")
        said = report.warnings
    except ImportFailed as exc:
        said = ["refused: " + str(exc)]
    r = project.reader()
    held = (r.execute("SELECT id, position, external_id, question, answer, latency_ms, metadata FROM run_rows "
                      "ORDER BY id").fetchall(),
            r.execute("SELECT run_row_id, rank, chunk_id, text, score, typeof(score), in_prompt "
                      "FROM retrieved_passages ORDER BY run_row_id, rank").fetchall())
    project.close()
    return held, said, taken


@pytest.mark.parametrize("case", list(CASES))
def test_passages_read_as_columns_are_what_reading_them_row_by_row_gives(tmp_path, monkeypatch, case):
    monkeypatch.setattr(readers, "CHUNK_ROWS", 2)      # several chunks, each read as columns or not
    table, plain = CASES[case]
    path = tmp_path / "run.parquet"
    pq.write_table(table, path)
    held, said, taken = _import(tmp_path, "columns", path, monkeypatch, columns=True)
    row_by_row, said_row_by_row, _ = _import(tmp_path, "rows", path, monkeypatch, columns=False)
    assert (held, said) == (row_by_row, said_row_by_row)
    if plain:
        assert len(taken) == (table.num_rows + 1) // 2 and all(taken)   # every chunk as columns, the first too
        assert held[1]
    else:
        # the chunk with the odd item went the long way (or the first chunk, read row by row, was refused)
        assert False in taken or (taken == [] and said[0].startswith("refused: "))


def test_a_row_whose_scores_rise_is_named_when_its_passages_were_read_as_columns(tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "CHUNK_ROWS", 2)
    path = tmp_path / "run.parquet"
    pq.write_table(CASES["plain, a row whose scores rise"][0], path)
    _, said, taken = _import(tmp_path, "p", path, monkeypatch, columns=True)
    assert all(taken) and any("scores rise down the list (first: row 7)" in w for w in said)


def test_passages_ranked_by_score_are_read_row_by_row(tmp_path, monkeypatch):
    """Sorting a row's passages by score is the long way's: no chunk is read as columns."""
    monkeypatch.setattr(readers, "CHUNK_ROWS", 2)
    path = tmp_path / "run.parquet"
    pq.write_table(CASES["plain, a row whose scores rise"][0], path)
    seen: list = []
    real = common.column_run_records
    monkeypatch.setattr(common, "column_run_records", lambda chunk: seen.append(1) or real(chunk))
    with Project.create(tmp_path / "p.rageval") as project:
        import_run(project, path, "v1", rank_by="score")
        ranks = project.reader().execute(
            "SELECT chunk_id FROM retrieved_passages JOIN run_rows ON run_rows.id = run_row_id "
            "WHERE external_id = 'q6' ORDER BY rank").fetchall()
    assert seen == [] and ranks == [("b",), ("a",)]


def test_a_reader_process_sends_passages_read_as_columns_as_the_importer_reads_them(tmp_path, monkeypatch):
    """The same file through a reader process (which reads every chunk after the first as columns, as the plain case
    above shows) and in one process with the long way alone: the project holds the same."""
    from rageval_desktop.core.importers import reader_process, run_import

    monkeypatch.setattr(readers, "CHUNK_ROWS", 2)
    path = tmp_path / "run.parquet"
    pq.write_table(CASES["float32 scores, in_prompt with gaps, a field no one reads"][0], path)
    row_by_row, said_row_by_row, _ = _import(tmp_path, "rows", path, monkeypatch, columns=False)
    monkeypatch.undo()
    monkeypatch.setattr(readers, "CHUNK_ROWS", 2)
    monkeypatch.setattr(run_import, "PARALLEL_BYTES", 0)
    started = []
    start = reader_process.ReaderProcess.start
    monkeypatch.setattr(reader_process.ReaderProcess, "start", lambda *a: started.append(1) or start(*a))
    with Project.create(tmp_path / "reader.rageval") as project:
        report = import_run(project, path, "v1")
        r = project.reader()
        held = (r.execute("SELECT id, position, external_id, question, answer, latency_ms, metadata FROM run_rows "
                          "ORDER BY id").fetchall(),
                r.execute("SELECT run_row_id, rank, chunk_id, text, score, typeof(score), in_prompt "
                          "FROM retrieved_passages ORDER BY run_row_id, rank").fetchall())
    assert started == [1] and (held, report.warnings) == (row_by_row, said_row_by_row)


def test_a_text_that_is_not_utf8_is_refused_as_the_long_way_refuses_it(tmp_path, monkeypatch):
    """Parquet's reader does not check a string column's bytes: a passage text that is not UTF-8 (a lone surrogate's
    bytes) fails the columns' check, and the long way says what is wrong with the file, naming it."""
    monkeypatch.setattr(readers, "CHUNK_ROWS", 2)
    texts = [b"ok", b"ok", b"ok", b"bad \xed\xa0\x80 surrogate", b"ok", b"ok"]
    raw = pa.array(texts, pa.binary())
    struct = pa.StructArray.from_arrays([pa.array([f"c{i}" for i in range(6)]),
                                         pa.Array.from_buffers(pa.string(), len(texts), raw.buffers())],
                                        names=["chunk_id", "text"])
    retrieved = pa.ListArray.from_arrays(pa.array(range(7), pa.int32()), struct)
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"id": [f"q{i}" for i in range(6)], "question": ["Q?"] * 6, "answer": ["a"] * 6,
                             "retrieved": retrieved}), path)
    held, said, taken = _import(tmp_path, "columns", path, monkeypatch, columns=True)
    assert taken == [True, False]          # the first chunk as columns; the second went the long way, and stopped
    assert said == ["refused: run.parquet: not a valid Parquet file (UnicodeDecodeError: 'utf-8' codec can't decode "
                    "byte 0xed in position 4: invalid continuation byte)"]
    assert held == ([], [])
