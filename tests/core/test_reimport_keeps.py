"""A golden re-import keeps what the file leaves out, and refuses to clear labels unless told to."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers import import_golden
from rageval_desktop.core.importers.cells import Cells
from rageval_desktop.core.importers.preview import preview
from tests.core.test_importers import GOLDEN, golden_rows, write


def _meta(project):
    return {r[0]: json.loads(r[1]) for r in project.reader().execute("SELECT id, metadata FROM golden_rows")}


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_file_without_label_columns_keeps_the_stored_labels(project, tmp_path, suffix):
    import_golden(project, write(tmp_path / "g.jsonl", [dict(r, owner="ana") for r in GOLDEN]))
    before, meta = golden_rows(project), _meta(project)
    slim = [{"id": r["id"], "question": r["question"], "gold_answer": r["gold_answer"] + " Edited."} for r in GOLDEN]
    report = import_golden(project, write(tmp_path / f"slim{suffix}", slim))
    assert (report.updated, report.added) == (3, 0)
    assert report.kept == ["gold_chunk_ids", "slice_tag", "metadata"]
    assert "kept as stored: gold chunk ids, slice, metadata" in report.summary()
    after = golden_rows(project)
    for gid, row in after.items():
        assert row[2:] == before[gid][2:]                  # gold chunk ids and slice as they were
        assert row[1].endswith("Edited.")
    assert _meta(project) == meta == {r["id"]: {"owner": "ana"} for r in GOLDEN}


def test_a_file_that_clears_labels_is_refused_unless_confirmed(project, tmp_path):
    import_golden(project, write(tmp_path / "g.jsonl", GOLDEN))
    before = golden_rows(project)
    blank = [dict(r, slice_tag="", gold_chunk_ids=[]) for r in GOLDEN]
    path = write(tmp_path / "blank.csv", blank)
    with pytest.raises(ImportFailed, match=r"would clear the gold chunk ids of 2 row\(s\), the slice of 3 row\(s\)"):
        import_golden(project, path)
    assert golden_rows(project) == before                 # nothing written
    shown = preview(project, path, "golden")
    assert shown.summary["clears"] == {"gold_chunk_ids": 2, "slice_tag": 3}
    report = import_golden(project, path, allow_clearing=True)
    assert report.updated == 3
    assert all(row[2] == "[]" and row[3] is None for row in golden_rows(project).values())


def test_the_preview_names_the_fields_a_file_leaves_out(project, tmp_path):
    import_golden(project, write(tmp_path / "g.jsonl", GOLDEN))
    shown = preview(project, write(tmp_path / "slim.csv", [{"id": "g1", "question": "What does assert do?",
                                                             "gold_answer": "x"}]), "golden")
    assert shown.summary["kept"] == ["gold_chunk_ids", "slice_tag", "metadata"]
    assert shown.summary["clears"] == {}


def test_a_default_slice_does_not_overwrite_a_stored_slice(project, tmp_path):
    import_golden(project, write(tmp_path / "g.jsonl", GOLDEN))
    slim = [{"id": r["id"], "question": r["question"], "gold_answer": r["gold_answer"]} for r in GOLDEN]
    slim.append({"id": "g4", "question": "A new one?", "gold_answer": "yes"})
    import_golden(project, write(tmp_path / "slim.jsonl", slim), default_slice="edge")
    rows = golden_rows(project)
    assert rows["g1"][3] == "easy" and rows["g4"][3] == "edge"


@pytest.mark.parametrize("value", [10 ** 300, -(10 ** 301)])
def test_a_number_too_long_is_refused_not_stored_as_placeholder_text(value):
    cells = Cells("f.jsonl")
    with pytest.raises(ImportFailed, match="300 digits"):
        cells.text({"question": value}, "question", 1, required=True)
    with pytest.raises(ImportFailed, match="300 digits"):
        cells.id_list({"gold_chunk_ids": [value]}, "gold_chunk_ids", 1)


def test_a_gate_with_no_gated_cell_is_never_a_pass():
    from rageval_desktop.core.base.verdicts import Decision
    from rageval_desktop.core.metrics.gate import GateResult

    empty = GateResult()
    assert empty.decision is Decision.NOT_DECISION_GRADE and not empty and empty.exit_code == 3
    assert GateResult(gated=2).decision is Decision.PASS


def test_the_demo_golden_set_reimported_without_labels_keeps_its_gate(demo, tmp_path):
    """The issue's case: export, keep id,question,gold_answer, import: labels stay, the gate still gates."""
    import pandas as pd

    from rageval_desktop.core.golden.versions import export_version
    from rageval_desktop.core.metrics.gate import gate

    before = gate(demo, "v1", "v2").gated
    export_version(demo, "current", tmp_path / "g.csv")
    pd.read_csv(tmp_path / "g.csv")[["id", "question", "gold_answer"]].to_csv(tmp_path / "slim.csv", index=False)
    report = import_golden(demo, tmp_path / "slim.csv")
    assert report.updated == 0 and report.unchanged == 72
    assert gate(demo, "v1", "v2").gated == before > 0
