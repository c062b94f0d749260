"""Issue 79.6: a file whose large runs' values are not kept (made before they were kept, or a golden edit made by a
script calling core) reads their tables on every `metrics` and `compare`; `rageval info` names those runs and says
how to keep them, and `rageval migrate` keeps them (a read never writes)."""

from __future__ import annotations

import json

from rageval_desktop.cli import main
from rageval_desktop.core.metrics import values
from rageval_desktop.core.store.project import Project
from tests.conftest import file_digest


def test_info_names_the_runs_without_kept_values_and_migrate_keeps_them(demo_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(values, "KEEP_FROM", 1)          # the demo's runs count as large
    path = tmp_path / "old.rageval"
    path.write_bytes(demo_file.read_bytes())
    with Project.open(path) as p:
        with p.write("test: as a file from before v22 left it") as w:
            w.execute("DELETE FROM run_values")
        runs = [name for (name,) in p.reader().execute("SELECT name FROM runs WHERE purpose = 'run' ORDER BY id")]
    before = file_digest(path)
    assert main(["info", str(path)]) == 0
    said = capsys.readouterr().out
    assert f"values not kept: {', '.join(runs)}" in said and f"rageval migrate {path}" in said
    assert main(["info", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["values_not_kept"] == runs
    assert file_digest(path) == before                  # info only read

    assert main(["migrate", str(path)]) == 0
    said = capsys.readouterr().out
    assert f"kept the values of {len(runs)} large run(s)" in said and "already at schema" in said
    with Project.open(path, read_only=True) as p:
        assert values.not_kept(p.reader()) == []
        rid = p.reader().execute("SELECT id FROM runs WHERE name = ?", (runs[0],)).fetchone()[0]
        assert set(values.stored(p.reader(), rid)) == set(values.PARTS)
    assert main(["info", str(path)]) == 0
    assert "values not kept" not in capsys.readouterr().out
    assert main(["migrate", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["values_kept_for"] == []     # nothing left to keep: nothing written


def test_metrics_and_compare_say_when_they_read_a_large_runs_tables(demo_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(values, "KEEP_FROM", 1)
    path = tmp_path / "old.rageval"
    path.write_bytes(demo_file.read_bytes())
    with Project.open(path) as p:
        with p.write("test: as a file from before v22 left it") as w:
            w.execute("DELETE FROM run_values")
        first, second = [name for (name,) in p.reader().execute(
            "SELECT name FROM runs WHERE purpose = 'run' ORDER BY id")][:2]
    assert main(["metrics", str(path), "--run", first, "--json"]) == 0
    out = capsys.readouterr()
    assert f"note: the values of {first} (" in out.err and f"rageval migrate {path}" in out.err
    json.loads(out.out)                                  # the JSON on stdout is untouched
    assert main(["compare", str(path), "--baseline", first, "--candidate", second]) == 0
    assert f"{first} (" in capsys.readouterr().err
    assert main(["migrate", str(path)]) == 0
    capsys.readouterr()
    assert main(["metrics", str(path), "--run", first]) == 0
    assert "note:" not in capsys.readouterr().err
