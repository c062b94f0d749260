"""Hostile and malformed files: a clear error naming file, row and column, exit 1, the project unchanged —
never a traceback, a hang or a partial import. The fuzz test runs every generator case in every format."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json

import numpy as np
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.context import Cancelled, TaskContext
from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import import_golden, import_run
from rageval_desktop.core.importers import readers as readers_mod
from rageval_desktop.core.judges import embedded
from rageval_desktop.core.store.project import Project
from tests.conftest import table_dump
from tests.support.hostile_files import base_rows, cases, encode, write_case, xlsx_bomb


def _import(project_path, kind: str, path, n: int) -> tuple[int, str]:
    argv = ["import", kind, str(project_path), str(path)]
    argv += ["--run", f"r{n}"] if kind == "run" else []
    argv += ["--no-dedupe-check"] if kind == "golden" else []
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.slow   # heavy: `make test-all` and CI run it
def test_fuzz_every_format_and_importer(tmp_path):
    """Targeted attacks and random mutations in csv, jsonl, json, parquet, xlsx and .gz: exit 0 or 1 only, a plain
    first line, no internal error, and after a refusal every table exactly as before."""
    project_path = tmp_path / "fuzz.rageval"
    Project.create(project_path).close()
    seen, refused, problems = 0, 0, []
    for n, (name, kind, file_name, data) in enumerate(cases(seed=7, mutations_per_format=2)):
        path = write_case(tmp_path, file_name, data)
        before = table_dump(project_path)
        code, err = _import(project_path, kind, path, n)
        seen += 1
        first = err.splitlines()[0] if err else ""
        if code not in (0, 1, 2) or "internal error" in err or "Traceback" in err:
            problems.append(f"{name} {file_name}: {code} {first[:160]}")
        elif code != 0:
            refused += 1
            if not first.startswith("error: ") or table_dump(project_path) != before:
                problems.append(f"{name} {file_name}: refused but {first[:80]!r} / project changed")
        elif name.endswith("/valid") is False and name.split("/")[1] in (
                "lone-surrogate", "nul-text", "deep-list-cell", "json-deep-raw", "json-bigint-raw", "dup-header",
                "csv-short-last-row", "csv-long-row", "gzip-bomb", "xlsx-bomb"):
            problems.append(f"{name} {file_name}: accepted")
    assert seen > 500 and refused > 200
    assert problems == []


@pytest.mark.parametrize(("kind", "fmt", "row", "column", "words"), [
    ("run", "jsonl", 3, "question", "lone UTF-16 surrogate"),
    ("run", "json", 3, "question", "lone UTF-16 surrogate"),
    ("golden", "jsonl", 3, "question", "NUL character"),
    ("corpus", "csv", 3, "text", "NUL character"),
    ("golden", "csv", 3, "gold_chunk_ids", "nested too deeply"),
    ("run", "csv", 3, "prompt_tokens", "too large"),
    ("run", "xlsx", 3, "prompt_tokens", "too large"),
])
def test_each_refusal_names_file_row_and_column(tmp_path, kind, fmt, row, column, words):
    path = tmp_path / f"bad.{fmt}"
    if words == "nested too deeply":  # written as text: building such a list in Python recurses too
        path.write_text("id,question,gold_chunk_ids\ng1,q1,[]\ng2,q2,[]\ng3,q3," + "[" * 2000 + "]" * 2000 + "\n")
    else:
        rows = base_rows(kind)
        rows[row - 1][column] = {"lone UTF-16 surrogate": "bad \ud800", "NUL character": "\u0000",
                                 "too large": 1e20}[words]
        path.write_bytes(encode(rows, fmt))
    project_path = tmp_path / "p.rageval"
    Project.create(project_path).close()
    before = table_dump(project_path)
    code, err = _import(project_path, kind, path, 1)
    assert code == 1, err
    assert err.startswith(f"error: bad.{fmt}, row {row}, column '{column}': ") and words in err, err
    assert table_dump(project_path) == before


def test_csv_with_a_repeated_column_is_refused_by_name(tmp_path, project):
    path = tmp_path / "g.csv"
    path.write_text("question,gold_answer,question\nWhat?,That.,Again?\n")
    with pytest.raises(ImportFailed, match="duplicate column name.*question"):
        import_golden(project, path)


def test_csv_cut_off_mid_row_is_refused(tmp_path, project):
    """Was: accepted, the cut row imported with empty fields."""
    path = tmp_path / "g.csv"
    path.write_text("question,gold_answer,slice_tag\nWhat is one?,One.,easy\nWhat is two?,Tw")
    with pytest.raises(ImportFailed, match="cut off") as refused:
        import_golden(project, path)
    assert refused.value.row == 2


def test_a_gzip_bomb_is_refused_without_inflating_it(tmp_path, project, monkeypatch):
    monkeypatch.setattr(readers_mod, "BOMB_MIN_BYTES", 1024 * 1024)
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b" " * (8 * 1024 * 1024)))
    with pytest.raises(ImportFailed, match="compression bomb"):
        import_run(project, path, "v1")


def test_an_xlsx_bomb_is_refused_at_once(tmp_path, project):
    """Was: a workbook inflating to 300 MB ran for over 300 s at full CPU."""
    path = tmp_path / "bomb.xlsx"
    path.write_bytes(xlsx_bomb(64))
    with pytest.raises(ImportFailed, match="compression bomb"):
        import_golden(project, path)


def test_a_spreadsheet_cell_cut_at_32767_characters_is_warned(tmp_path, project):
    rows = base_rows("golden")
    rows[1]["gold_answer"] = "x" * 10_000_000  # the writer keeps 32,767 of them
    path = tmp_path / "g.xlsx"
    path.write_bytes(encode(rows, "xlsx"))
    report = import_golden(project, path)
    assert any("row 2, column 'gold_answer'" in w and "cut off" in w for w in report.warnings)


def test_nan_and_infinity_in_extra_columns_import_as_null(tmp_path, project):
    """Was: `CHECK constraint failed: json_valid(metadata)`."""
    path = tmp_path / "g.jsonl"
    path.write_text('{"question": "What?", "gold_answer": "That.", "extra": [NaN, Infinity, 1.5]}\n')
    import_golden(project, path)
    meta = project.reader().execute("SELECT metadata FROM golden_rows").fetchone()[0]
    assert json.loads(meta) == {"extra": [None, None, 1.5]}


class FakeModel:
    def encode(self, texts, **_kw):
        out = []
        for t in texts:
            rng = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
            v = rng.normal(size=16).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        return np.stack(out)


def test_a_failed_golden_import_leaves_the_embedding_cache_untouched(tmp_path, project, monkeypatch):
    """Was: the near-duplicate check cached the new rows' embeddings before the import failed (73 rows left)."""
    monkeypatch.setattr(embedded, "load_model", lambda model_id: FakeModel())
    first = tmp_path / "a.jsonl"
    first.write_text("".join(json.dumps({"question": f"Old question {i}?", "gold_answer": "A."}) + "\n"
                             for i in range(5)))
    import_golden(project, first, check_duplicates=True)
    before = table_dump(project.path)
    second = tmp_path / "b.jsonl"
    second.write_text("".join(json.dumps({"question": f"New question {i}?", "gold_answer": "B."}) + "\n"
                              for i in range(20)))
    ctx = TaskContext()
    ctx.cancel()  # the import fails inside its transaction
    with pytest.raises(Cancelled):
        import_golden(project, second, check_duplicates=True, ctx=ctx)
    assert table_dump(project.path) == before
    report = import_golden(project, second, check_duplicates=True)   # and succeeds, checked, afterwards
    assert report.added == 20 and project.reader().execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 25


def test_parquet_binary_and_list_text_columns_are_not_stored_as_python_reprs(tmp_path):
    """Was (issue 28): Parquet binary string columns imported as the text "b'...'", and a corpus list<string> text
    column was stored as "['...']"."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rageval_desktop.core.base.errors import ImportFailed
    from rageval_desktop.core.importers import import_corpus, import_golden
    from rageval_desktop.core.store.project import Project

    golden = pa.table({"question": pa.array([b"What is X?", b"What is Y?"], pa.binary()),
                       "gold_answer": ["x", "y"], "slice_tag": ["easy", "edge"]})
    pq.write_table(golden, tmp_path / "g.parquet")
    listed = pa.table({"chunk_id": ["c1"], "doc_id": ["d"], "text": pa.array([["one", "two"]], pa.list_(pa.string()))})
    pq.write_table(listed, tmp_path / "c.parquet")
    broken = pa.table({"question": pa.array([b"\xff\xfe not text"], pa.binary()), "gold_answer": ["x"]})
    pq.write_table(broken, tmp_path / "b.parquet")
    with Project.create(tmp_path / "p.rageval") as p:
        import_golden(p, tmp_path / "g.parquet")
        assert sorted(q for (q,) in p.reader().execute("SELECT question FROM golden_rows")) == ["What is X?",
                                                                                                  "What is Y?"]
        with pytest.raises(ImportFailed, match="text.*expected text, got list|expected text, got list"):
            import_corpus(p, tmp_path / "c.parquet")
        with pytest.raises(ImportFailed, match="'question' holds binary data that is not UTF-8 text"):
            import_golden(p, tmp_path / "b.parquet")
        assert p.reader().execute("SELECT COUNT(*) FROM corpus_chunks").fetchone()[0] == 0


def test_xlsx_duplicate_headers_and_formulas_without_values_are_refused_not_altered(tmp_path):
    """Was (issue 28): a duplicate header became `x.1` (a CSV with one is refused), and formula cells without a
    saved value imported as empty, without a word."""
    import openpyxl

    from rageval_desktop.core.base.errors import ImportFailed
    from rageval_desktop.core.importers import import_golden
    from rageval_desktop.core.store.project import Project

    twice = openpyxl.Workbook()
    twice.active.append(["question", "gold_answer", "gold_answer"])
    twice.active.append(["q1?", "a", "b"])
    twice.save(tmp_path / "twice.xlsx")
    formula = openpyxl.Workbook()
    formula.active.append(["question", "gold_answer"])
    formula.active.append(["q1?", "=CONCAT(\"a\", \"b\")"])      # openpyxl saves no computed value
    formula.save(tmp_path / "formula.xlsx")
    with Project.create(tmp_path / "p.rageval") as p:
        with pytest.raises(ImportFailed, match="'gold_answer' appears twice"):
            import_golden(p, tmp_path / "twice.xlsx")
        with pytest.raises(ImportFailed, match=r"1 formula cell\(s\) have no saved value \(for example B2"):
            import_golden(p, tmp_path / "formula.xlsx")
        assert p.reader().execute("SELECT COUNT(*) FROM golden_rows").fetchone()[0] == 0


@pytest.mark.parametrize("name", ["big.jsonl", "big.json"])
def test_integers_beyond_64_bits_stay_exact(tmp_path, name):
    """Was (issue 28): orjson read them as floats, so two ids one apart collided ('duplicate id 1.8446744e+19')."""
    from rageval_desktop.core.importers import import_golden
    from rageval_desktop.core.store.project import Project

    rows = [{"id": 18446744073709551617, "question": "a?", "gold_answer": "x"},
            {"id": 18446744073709551618, "question": "b?", "gold_answer": "y"}]
    text = "".join(json.dumps(r) + "\n" for r in rows) if name.endswith("l") else json.dumps(rows)
    (tmp_path / name).write_text(text)
    with Project.create(tmp_path / "p.rageval") as p:
        import_golden(p, tmp_path / name)
        ids = sorted(i for (i,) in p.reader().execute("SELECT id FROM golden_rows"))
    assert ids == ["18446744073709551617", "18446744073709551618"]


def test_an_empty_passage_is_refused_from_parquet_as_from_jsonl(tmp_path):
    """Was (issue 28): `{}` was refused from JSONL and accepted from Parquet (a struct of nulls)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rageval_desktop.core.base.errors import ImportFailed
    from rageval_desktop.core.store.project import Project

    (tmp_path / "e.jsonl").write_text(json.dumps({"id": "r1", "question": "q?", "answer": "a",
                                                  "retrieved": [{}]}) + "\n")
    kind = pa.list_(pa.struct([("chunk_id", pa.string()), ("text", pa.string())]))
    pq.write_table(pa.table({"id": ["r1"], "question": ["q?"], "answer": ["a"],
                             "retrieved": pa.array([[{"chunk_id": None, "text": None}]], kind)}),
                   tmp_path / "e.parquet")
    with Project.create(tmp_path / "p.rageval") as p:
        for name in ("e.jsonl", "e.parquet"):
            with pytest.raises(ImportFailed, match="retrieved item 1 must be an object with chunk_id and/or text"):
                import_run(p, tmp_path / name, "v1")


@pytest.mark.parametrize("name, text", [
    ("dup.jsonl", '{"question": "q1?", "gold_answer": "a", "gold_answer": "b"}\n'),
    ("dup.json", '[{"question": "q1?", "gold_answer": "a", "gold_answer": "b"}]'),
    ("nested.jsonl", '{"question": "q1?", "answer": "a", "retrieved": [{"chunk_id": "c1", "text": "x", '
                     '"text": "y"}]}\n'),
])
def test_a_key_named_twice_in_a_json_object_is_refused_as_a_header_named_twice_is(tmp_path, name, text):
    """Was (issue 28): the last value won, without a word (a CSV header named twice is refused)."""
    from rageval_desktop.core.base.errors import ImportFailed
    from rageval_desktop.core.store.project import Project

    (tmp_path / name).write_text(text)
    with Project.create(tmp_path / "p.rageval") as p:
        with pytest.raises(ImportFailed, match="appears twice in one object"):
            if "nested" in name:
                import_run(p, tmp_path / name, "v1")
            else:
                import_golden(p, tmp_path / name)
