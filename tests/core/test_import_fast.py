"""The fast JSON path (orjson, and the passages' fast path) accepts and refuses exactly what the careful path does
(issue 15): what orjson refuses goes through the json module, and a passage's text is checked like any cell."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import import_run


def _run(tmp_path, lines: list[str]):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_values_orjson_refuses_still_import_through_the_json_module(project, tmp_path):
    big = "123456789012345678901234567890"          # beyond 64 bits: orjson refuses, json reads it
    path = _run(tmp_path, ['{"id": "a", "question": "Q1?", "answer": "x", "retrieved": [], "ticket": ' + big + '}',
                           '{"id": "b", "question": "Q2?", "answer": "y", "retrieved": [], "weight": NaN}'])
    report = import_run(project, path, "v1")
    assert report.added == 2
    meta = dict(project.reader().execute("SELECT external_id, metadata FROM run_rows"))
    assert "ticket" in meta["a"]          # kept, as the careful path keeps it


@pytest.mark.parametrize("text, words", [("evil\\u0000text", "NUL character"),
                                         ("lone \\ud800 surrogate", "lone UTF-16 surrogate")])
def test_a_passage_text_is_checked_like_any_cell(project, tmp_path, text, words):
    """Was: the passages' fast path stored NUL characters without the check every other text gets."""
    line = '{"id": "a", "question": "Q?", "answer": "x", "retrieved": [{"chunk_id": "c1", "text": "' + text + '"}]}'
    with pytest.raises(ImportFailed, match=words) as failed:
        import_run(project, _run(tmp_path, [line]), "v1")
    assert "row 1" in str(failed.value) and "retrieved[1]" in str(failed.value)
    assert project.reader().execute("SELECT COUNT(*) FROM run_rows").fetchone()[0] == 0


def test_an_integer_beyond_64_bits_is_kept_exact_wherever_it_sits(project, tmp_path):
    """orjson reads such an integer as a float; the parsed document's floats are checked (no scan of the bytes for
    runs of digits), at any depth and either sign, and the json module reads the line again, exactly. A float the
    file writes as one stays a float; a long run of digits inside a text is text."""
    deep = '{"id": "a", "question": "Q1?", "answer": "x", "retrieved": [{"chunk_id": 18446744073709551617, ' \
           '"text": "t"}], "extra": {"list": [1, {"n": -9223372036854775809}]}}'
    floats = '{"id": "b", "question": "Q2?", "answer": "12345678901234567890123", "retrieved": [], "w": 1e300}'
    report = import_run(project, _run(tmp_path, [deep, floats]), "v1")
    assert report.added == 2
    r = project.reader()
    assert r.execute("SELECT chunk_id FROM retrieved_passages").fetchone()[0] == "18446744073709551617"
    meta = dict(r.execute("SELECT external_id, metadata FROM run_rows"))
    assert "-9223372036854775809" in meta["a"] and "1e+300" in meta["b"]
    assert r.execute("SELECT answer FROM run_rows WHERE external_id = 'b'").fetchone()[0] == "12345678901234567890123"


def test_a_runs_import_leaves_every_reference_whole_with_sqlites_lookups_off(project, tmp_path):
    """A new run's rows and passages are inserted without SQLite looking up each reference (Project.write's
    checked_references=False): what they refer to exists by construction. The file's own check finds nothing
    dangling afterwards, a run replaced still takes its rows, passages and judgments with it (the cascade needs the
    lookups on), and the writer has them on again after the import, and after an import that failed."""
    from rageval_desktop.core.importers import import_golden
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import add_judge

    golden = tmp_path / "g.jsonl"
    golden.write_text("".join(json.dumps({"id": f"g{i}", "question": f"Q{i}?", "gold_answer": "a"}) + "\n"
                              for i in range(4)))
    import_golden(project, golden)
    lines = [json.dumps({"id": f"g{i}", "question": f"Q{i}?", "answer": "a", "retrieved": [
        {"chunk_id": f"c{i}", "text": "t"}, {"chunk_id": f"d{i}", "text": "u"}]}) for i in range(6)]
    import_run(project, _run(tmp_path, lines), "v1")
    add_judge(project, "lex", "correctness", "lexical")
    run_judge_job(project, JobSpec(run="v1", judges=["lex"]))
    r = project.reader()
    assert r.execute("SELECT COUNT(golden_id) FROM run_rows").fetchone()[0] == 4       # linked where they exist
    import_run(project, _run(tmp_path, lines[:3]), "v1", replace=True)
    assert r.execute("PRAGMA foreign_key_check").fetchall() == []
    assert r.execute("SELECT COUNT(*) FROM run_rows").fetchone()[0] == 3
    assert r.execute("SELECT COUNT(*) FROM retrieved_passages").fetchone()[0] == 6     # the old run's went with it
    assert r.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 0
    assert project.pragma("foreign_keys") == 1
    with pytest.raises(ImportFailed):
        import_run(project, _run(tmp_path, [lines[0], '{"id": "x", "answer": "no question"}']), "v2")
    assert project.pragma("foreign_keys") == 1
    assert r.execute("SELECT COUNT(*) FROM runs WHERE name = 'v2'").fetchone()[0] == 0


def test_a_write_never_runs_with_the_reference_checks_left_off(project):
    """Were a write without lookups unable to turn them on again as it ended (a transaction SQLite could not end),
    the next write turns them on before it begins: a cascade still cascades."""
    with project.write("no lookups", checked_references=False) as conn:
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 0
    assert project.pragma("foreign_keys") == 1
    project._writer.execute("PRAGMA foreign_keys = OFF")      # as if the end of that write had failed to
    project._references_off = True
    with project.write("an ordinary write") as conn:
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_a_list_cell_keeps_an_integer_beyond_64_bits_exact(project, tmp_path):
    """A CSV's list cells go through the same check of orjson's floats as a JSON line (readers.parsed_shape)."""
    import csv

    path = tmp_path / "r.csv"
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["id", "question", "answer", "retrieved"])
        out.writerow(["a", "Q?", "x", '[{"chunk_id": 18446744073709551617, "text": "t", "score": 0.5}]'])
        out.writerow(["b", "Q2?", "y", '[{"chunk_id": 18446744073709551618, "text": "u"}]'])
    import_run(project, path, "v1")
    ids = sorted(c for (c,) in project.reader().execute("SELECT chunk_id FROM retrieved_passages"))
    assert ids == ["18446744073709551617", "18446744073709551618"]


def test_a_list_cell_with_a_large_number_in_any_spelling_is_read_by_the_json_module():
    """A number orjson may read inexactly (2**63 or more in magnitude), in any spelling — beyond 64 bits, an exponent,
    negative, with a fraction — sends the cell to the json module; text that merely looks like one does not."""
    from rageval_desktop.core.importers.cells import Cells

    cells = Cells("r.csv")
    for text in ('[{"id": 18446744073709551617}]', '[{"id": 1.8446744073709551617e19}]', '[{"a": [1E+20]}]',
                 '[{"id": -9223372036854775809}]', '[{"id": 123456789012345678901234567890.5}]'):
        assert cells.listing({"retrieved": text}, "retrieved", 1) == json.loads(text), text
    plain = '[{"chunk_id": "c1", "text": "1e5 apples", "score": 0.5}, {"chunk_id": 7, "score": 1}]'
    assert cells.listing({"retrieved": plain}, "retrieved", 1) == json.loads(plain)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_passage_given_as_text_alone_is_checked_like_any_cell(project, tmp_path, fmt):
    """Was: a retrieved item written as a bare string skipped every check, so a NUL character was stored."""
    item = json.dumps(["fine", "evil\u0000text"])
    if fmt == "jsonl":
        path = _run(tmp_path, [json.dumps({"id": "a", "question": "Q?", "answer": "x", "retrieved": json.loads(item)})])
    else:
        import csv

        path = tmp_path / "r.csv"
        with path.open("w", newline="") as fh:
            csv.writer(fh).writerows([["id", "question", "answer", "retrieved"], ["a", "Q?", "x", item]])
    with pytest.raises(ImportFailed, match="NUL character") as failed:
        import_run(project, path, "v1")
    assert "row 1" in str(failed.value) and "retrieved[2]" in str(failed.value)
    assert project.reader().execute("SELECT COUNT(*) FROM retrieved_passages").fetchone()[0] == 0


def test_a_list_cells_passages_read_quickly_are_what_the_exact_reading_gives(project, tmp_path):
    """A CSV's list of passages is read by orjson alone when every value it uses is plain; a score 2**63 or more in
    magnitude (which orjson may have misread) sends the cell to the exact reading, which keeps what it always did."""
    import csv

    cells = [json.dumps([{"chunk_id": "c1", "text": "t", "score": 2}, "bare text", {"chunk_id": "c2", "text": "u"}]),
             '[{"chunk_id": "c3", "text": "v", "score": 1e30}, {"chunk_id": "c4", "text": "w", "score": -0.5}]']
    path = tmp_path / "r.csv"
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows([["id", "question", "answer", "retrieved"], ["a", "Q?", "x", cells[0]],
                                  ["b", "Q2?", "y", cells[1]]])
    import_run(project, path, "v1")
    got = project.reader().execute(
        "SELECT chunk_id, text, score, typeof(score) FROM retrieved_passages ORDER BY run_row_id, rank").fetchall()
    assert got == [("c1", "t", 2.0, "real"), (None, "bare text", None, "null"), ("c2", "u", None, "null"),
                   ("c3", "v", 1e30, "real"), ("c4", "w", -0.5, "real")]
