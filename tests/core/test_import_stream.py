"""A run file is read, converted and written a chunk at a time inside one transaction (issue 16: a million rows):
the rows' numbers in messages are the file's, a problem in a late chunk leaves nothing behind, a repeated id is
found across chunks, and progress follows the bytes read. Every test runs twice: read in the importing process (a
small file), and read by a second process while the importer writes (a large one: core.importers.reader_process)."""

from __future__ import annotations

import gzip
import json

import pytest

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import import_golden, import_run, readers, run_import


def rows(n: int, **override) -> list[dict]:
    out = [{"id": f"q{i}", "question": f"Question {i}?", "answer": f"Answer {i}.",
            "retrieved": [{"chunk_id": f"c{i}", "text": f"Passage {i}.", "score": 0.5}]} for i in range(1, n + 1)]
    for row, values in override.items():
        out[int(row[1:]) - 1].update(values)
    return out


def write(path, records, fmt="jsonl"):
    if fmt == "jsonl":
        data = "".join(json.dumps(r) + "\n" for r in records).encode()
        path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    else:
        import pandas as pd

        frame = pd.DataFrame(records)
        frame["retrieved"] = [json.dumps(v) for v in frame["retrieved"]]
        if fmt == "csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)
    return path


@pytest.fixture(autouse=True, params=["one process", "reader process"])
def small_chunks(monkeypatch, request):
    monkeypatch.setattr(readers, "CHUNK_ROWS", 4)
    monkeypatch.setattr(run_import, "PARALLEL_BYTES", 0 if request.param == "reader process" else 1 << 60)
    return request.param


@pytest.mark.parametrize("name,fmt", [("r.jsonl", "jsonl"), ("r.jsonl.gz", "jsonl"), ("r.csv", "csv"),
                                      ("r.parquet", "parquet")])
def test_every_streamed_format_imports_every_row_in_order(project, tmp_path, name, fmt):
    seen: list[tuple[int, int]] = []
    path = write(tmp_path / name, rows(11), fmt)
    report = import_run(project, path, "v1", ctx=TaskContext(on_progress=lambda d, t, m: seen.append((d, t)),
                                                             min_interval_s=0))
    got = project.reader().execute("SELECT position, external_id, question FROM run_rows ORDER BY position").fetchall()
    assert report.added == report.rows_read == 11
    assert got == [(i, f"q{i}", f"Question {i}?") for i in range(1, 12)]
    assert project.reader().execute("SELECT COUNT(*) FROM retrieved_passages").fetchone()[0] == 11
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and seen[-1][0] == seen[-1][1] == path.stat().st_size
    if not name.endswith(".gz"):   # (gzip reads its small file whole at once)
        assert len({d for d in dones if 0 < d < path.stat().st_size}) >= 2   # progress moved with the chunks


def test_a_bad_cell_in_a_late_chunk_names_its_file_row_and_leaves_nothing(project, tmp_path):
    path = write(tmp_path / "r.jsonl", rows(11, r10={"latency_ms": "slow"}))
    with pytest.raises(ImportFailed) as err:
        import_run(project, path, "v1")
    assert err.value.row == 10 and err.value.column == "latency_ms"
    assert project.reader().execute("SELECT COUNT(*) FROM run_rows").fetchone()[0] == 0
    assert project.reader().execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_a_row_id_repeated_in_another_chunk_is_named_with_its_first_row(project, tmp_path):
    path = write(tmp_path / "r.jsonl", rows(11, r9={"id": "q2"}))
    with pytest.raises(ImportFailed, match="duplicate row id 'q2' \\(first seen on row 2\\)") as err:
        import_run(project, path, "v1")
    assert err.value.row == 9
    path = write(tmp_path / "s.jsonl", rows(11, r11={"id": "q10"}))          # repeated within one chunk
    with pytest.raises(ImportFailed, match="first seen on row 10") as err:
        import_run(project, path, "v1")
    assert err.value.row == 11
    assert project.reader().execute("SELECT COUNT(*) FROM run_rows").fetchone()[0] == 0


def test_a_truncated_gzip_late_in_the_file_leaves_nothing(project, tmp_path):
    path = write(tmp_path / "r.jsonl.gz", rows(400))
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(ImportFailed, match="not a valid gzip file"):
        import_run(project, path, "v1")
    assert project.reader().execute("SELECT COUNT(*) FROM run_rows").fetchone()[0] == 0


def test_a_gzip_bomb_is_refused_while_it_is_read(project, tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "BOMB_MIN_BYTES", 1000)
    path = tmp_path / "bomb.jsonl.gz"
    line = json.dumps(rows(1)[0]) + "\n"
    path.write_bytes(gzip.compress((line + " " * 2_000_000 + "\n").encode()))
    with pytest.raises(ImportFailed, match="compression bomb"):
        import_run(project, path, "v1")


def test_a_gzip_bomb_without_line_breaks_is_refused_before_it_fills_memory(project, tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "BOMB_MIN_BYTES", 3 << 20)
    path = tmp_path / "flat.jsonl.gz"
    path.write_bytes(gzip.compress(b"[" + b"0," * (20 << 20) + b"0]"))        # 40 MB on one line, ~40 KB packed
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ImportFailed, match="compression bomb"):
            import_run(project, path, "v1")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20          # read in blocks: refused at ~3 MB inflated, not after the whole 40 MB line


def test_both_ways_of_reading_import_the_same_rows_links_and_warnings(tmp_path):
    """Golden links (by id, by question), passages given as text matched to corpus chunks, rows left unlinked,
    scores that contradict the order, repeats of a question: one process or two, the same run."""
    from rageval_desktop.core.importers import import_corpus
    from rageval_desktop.core.store.project import Project

    golden = tmp_path / "g.jsonl"
    golden.write_text("".join(json.dumps({"id": f"g{i}", "question": f"Question {i}?", "gold_answer": "A.",
                                          "gold_chunk_ids": [f"c{i}"], "slice_tag": "easy"}) + "\n"
                              for i in range(1, 8)))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"chunk_id": f"c{i}", "text": f"Passage {i}."}) + "\n" for i in range(1, 12)))
    records = rows(11, r1={"golden_id": "g1"}, r3={"question": "  question 3 ? "},
                   r4={"retrieved": ["Passage 4.", "Passage  5."]},
                   r5={"retrieved": [{"chunk_id": "c5", "text": "x", "score": 0.1},
                                     {"chunk_id": "c6", "text": "y", "score": 0.9}]},
                   r6={"query_id": "q6", "query_run": 1}, r7={"query_id": "q6", "query_run": 2})
    path = write(tmp_path / "r.jsonl", records)
    seen = {}
    for mode, bytes_ in (("one process", 1 << 60), ("reader process", 0)):
        run_import.PARALLEL_BYTES = bytes_
        with Project.create(tmp_path / f"{mode}.rageval") as p:
            import_golden(p, golden)
            import_corpus(p, corpus)
            report = import_run(p, path, "v1")
            again = import_run(p, path, "v1", replace=True)         # its messages in the same order too
            seen[mode] = (again.warnings,
                p.reader().execute("SELECT id, position, external_id, golden_id, question, answer, latency_ms, "
                                   "metadata FROM run_rows ORDER BY id").fetchall(),
                p.reader().execute("SELECT * FROM retrieved_passages ORDER BY run_row_id, rank").fetchall(),
                (report.linked, report.unlinked, report.unlinked_examples, report.layout, report.warnings))
    assert seen["one process"] == seen["reader process"]
    replaced, rows_, passages, (linked, unlinked, _examples, _layout, warnings) = seen["reader process"]
    assert replaced[0] == "replaced the previous run 'v1'"
    assert linked == 7 and unlinked == 4
    assert [p[2] for p in passages if p[0] == rows_[3][0]] == ["c4", "c5"]        # text matched to the corpus
    assert any("scores rise down the list" in w for w in warnings)
    assert any("run more than once" in w for w in warnings)
