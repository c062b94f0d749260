"""A large run file is read by a second process while the importer writes (core.importers.reader_process): when
that process fails, or the user cancels, or the import stops before writing, nothing is imported, the reason is
clear, and the reader is gone."""

from __future__ import annotations

import pytest

from rageval_desktop.core.base.context import Cancelled, TaskContext
from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import import_run, reader_process, readers, run_import
from tests.core.test_import_stream import rows, write


@pytest.fixture(autouse=True)
def reader_mode(monkeypatch):
    monkeypatch.setattr(readers, "CHUNK_ROWS", 4)
    monkeypatch.setattr(run_import, "PARALLEL_BYTES", 0)
    readers_seen: list = []
    close = reader_process.ReaderProcess.close

    def tracked(self):
        readers_seen.append(self)
        close(self)

    monkeypatch.setattr(reader_process.ReaderProcess, "close", tracked)
    return readers_seen


def counts(project) -> tuple[int, int]:
    r = project.reader()
    return (r.execute("SELECT COUNT(*) FROM runs").fetchone()[0],
            r.execute("SELECT COUNT(*) FROM run_rows").fetchone()[0])


def test_a_reader_that_dies_fails_the_import_with_what_it_said(project, tmp_path, monkeypatch, reader_mode):
    monkeypatch.setattr(reader_process, "READER_MODULE", "rageval_desktop.no_such_module")
    path = write(tmp_path / "r.jsonl", rows(9))
    with pytest.raises(ImportFailed, match=r"stopped unexpectedly \(exit code 1\).*No module named"):
        import_run(project, path, "v1")
    assert counts(project) == (0, 0)
    assert reader_mode and all(r.process.poll() is not None for r in reader_mode)


def test_cancelling_mid_file_rolls_back_and_stops_the_reader(project, tmp_path, reader_mode):
    path = write(tmp_path / "r.jsonl", rows(400))
    ctx = TaskContext(min_interval_s=0)
    ctx.on_progress = lambda done, total, message: ctx.cancel() if "run rows written" in message else None
    with pytest.raises(Cancelled):
        import_run(project, path, "v1", ctx=ctx)
    assert counts(project) == (0, 0)
    assert reader_mode[0].process.poll() is not None          # stopped, not left reading the rest of the file


def test_a_run_that_exists_stops_the_reader_before_it_prepares_anything(project, tmp_path, reader_mode):
    path = write(tmp_path / "r.jsonl", rows(9))
    assert import_run(project, path, "v1").added == 9
    with pytest.raises(ImportFailed, match="already exists"):
        import_run(project, path, "v1")
    assert counts(project) == (1, 9)
    assert len(reader_mode) == 2 and reader_mode[1].process.returncode == 0    # it was told, and ended cleanly


def test_without_an_interpreter_to_start_the_import_reads_in_one_process(project, tmp_path, monkeypatch, reader_mode):
    import sys

    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    path = write(tmp_path / "r.jsonl", rows(9))
    assert import_run(project, path, "v1").added == 9
    assert counts(project) == (1, 9) and reader_mode == []          # no reader was started


def test_a_compressed_file_gets_a_reader_by_what_it_holds(monkeypatch):
    """A Parquet or .gz file's bytes hold about four times as much as a text file's: 8 MB of them are the 32 MB that
    make a reader process worth starting (a 30k-row Parquet file of 24 MB was read in the importing process)."""
    monkeypatch.setattr(run_import, "PARALLEL_BYTES", 32 << 20)
    mb = 1 << 20
    assert run_import.parallel("run.parquet", 8 * mb) and run_import.parallel("run.jsonl.gz", 8 * mb)
    assert run_import.parallel("run.CSV.GZ", 9 * mb) and run_import.parallel("run.csv", 32 * mb)
    assert not run_import.parallel("run.csv", 24 * mb) and not run_import.parallel("run.parquet", 7 * mb)
    assert not run_import.parallel("run.unknown", 24 * mb)      # (reading it says what is wrong with it)
