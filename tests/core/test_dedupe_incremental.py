"""Adding rows to a golden set costs what the new rows cost (issue 15): the import saves them and lists them as
unchecked; the near-duplicate check that follows embeds only the new questions and reads the set's vectors from the
cache, a chunk at a time."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.golden import dedupe
from rageval_desktop.core.importers import import_golden
from rageval_desktop.core.judges import embedded

VOCAB = "reverse list python sort dict capital france largest ocean tall everest copy file read merge".split()


class BagOfWords:
    """A deterministic stand-in for MiniLM: word counts over a small vocabulary (plus a unique direction per text),
    so paraphrases sharing their words are near-duplicates and the rest are not."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts, **_):
        self.encoded += list(texts)
        out = []
        for text in texts:
            words = text.lower().replace("?", "").split()
            v = np.array([words.count(w) for w in VOCAB] + [0.0] * 48, dtype=np.float32)
            v[len(VOCAB) + hash(text) % 48] += 0.15
            out.append(v / np.linalg.norm(v))
        return np.stack(out)


@pytest.fixture
def model(monkeypatch):
    fake = BagOfWords()
    monkeypatch.setattr(embedded, "load_model", lambda model_id=embedded.MINILM_ID: fake)
    return fake


def _golden(path, questions):
    path.write_text("".join(json.dumps({"question": q, "gold_answer": "a", "slice_tag": "easy"}) + "\n"
                            for q in questions))
    return path


def test_the_check_embeds_only_the_new_rows_and_finds_their_near_duplicates(project, tmp_path, model, monkeypatch):
    monkeypatch.setattr(dedupe, "SET_CHUNK", 7)            # the set is read in several chunks
    existing = ["How do I reverse a list in python?", "What is the capital of France?",
                *[f"Which {w} file number {i}?" for i, w in enumerate(VOCAB * 2)]]
    import_golden(project, _golden(tmp_path / "a.jsonl", existing))
    assert len(dedupe.unchecked(project)) == len(existing)
    first = dedupe.check_new(project)                      # the first check embeds the set once (then cached)
    assert first.checked == len(existing) and first.embedded == len(existing)
    assert dedupe.unchecked(project) == []
    model.encoded.clear()

    new = ["please reverse a list in python?", "How tall is Everest?"]
    report = import_golden(project, _golden(tmp_path / "b.jsonl", new))
    assert len(report.fresh_ids) == 2 and report.as_dict()["new_questions"] == 2
    assert sorted(dedupe.unchecked(project)) == sorted(report.fresh_ids)
    assert model.encoded == []                             # the import itself embeds nothing
    found = dedupe.check_new(project)
    assert sorted(model.encoded) == sorted(new)            # only the new questions were embedded
    assert found.embedded == 2 and found.checked == 2
    reverse = next(i for i in report.fresh_ids if project.reader().execute(
        "SELECT question FROM golden_rows WHERE id = ?", (i,)).fetchone()[0].startswith("please"))
    assert [(p["a"], found.questions[p["b"]]) for p in found.pairs] == [(reverse, existing[0])]
    assert found.pairs[0]["cosine"] >= 0.9
    assert dedupe.unchecked(project) == []


def test_rageval_import_golden_says_what_is_unchecked_and_dedupe_new_checks_it(project, tmp_path, model, capsys):
    import_golden(project, _golden(tmp_path / "a.jsonl", ["How do I reverse a list in python?", "What is France?"]))
    dedupe.check_new(project)
    path = str(project.path)
    project.close()
    assert main(["import", "golden", path, str(_golden(tmp_path / "b.jsonl", ["python reverse a list how?"])),
                 "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["new_questions"] == 1
    assert f"1 new question(s) not yet checked for near-duplicates; check them with: rageval golden dedupe {path} " \
           "--new" in captured.err
    assert main(["golden", "dedupe", path, "--new", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["checked"] == 1 and len(out["pairs"]) == 1 and out["embedded"] == 1
    assert main(["golden", "dedupe", path, "--new", "--json"]) == 0       # nothing left to check
    assert json.loads(capsys.readouterr().out)["checked"] == 0
    assert main(["import", "golden", path, str(_golden(tmp_path / "c.jsonl", ["How do I sort a dict?"])),
                 "--dedupe-check"]) == 0
    captured = capsys.readouterr()
    assert "not yet checked" not in captured.err and "imported golden set" in captured.out


def test_a_failed_check_leaves_the_rows_imported_and_listed_as_unchecked(project, tmp_path, monkeypatch):
    def no_model(model_id=embedded.MINILM_ID):
        from rageval_desktop.core.base.errors import RagevalError

        raise RagevalError("the embedding model is not installed")

    monkeypatch.setattr(embedded, "load_model", no_model)
    report = import_golden(project, _golden(tmp_path / "a.jsonl", ["Q one?", "Q two?"]), check_duplicates=True)
    assert report.added == 2 and any("near-duplicate check skipped" in w for w in report.warnings)
    assert sorted(dedupe.unchecked(project)) == sorted(report.fresh_ids)


def test_the_sets_vectors_are_kept_in_the_project_and_follow_edits_and_retirements(project, tmp_path, model,
                                                                                    monkeypatch):
    from rageval_desktop.core.golden import edits

    monkeypatch.setattr(dedupe, "SET_CHUNK", 3)
    existing = ["How do I reverse a list in python?", "What is the capital of France?", "How tall is Everest?",
                "How do I copy a file?", "Which ocean is largest?"]
    import_golden(project, _golden(tmp_path / "a.jsonl", existing))
    dedupe.check_new(project)
    stored = dict(project.reader().execute("SELECT golden_id, text_hash FROM golden_vectors"))
    ids = {q: gid for gid, q in project.reader().execute("SELECT id, question FROM golden_rows")}
    assert stored == {ids[q]: embedded.text_hash(q) for q in existing}

    lookups: list[int] = []                     # the set's vectors come from golden_vectors, not the cache
    real_embed = dedupe.embed
    monkeypatch.setattr(dedupe, "embed", lambda p, texts, *a, **k: lookups.append(len(texts)) or real_embed(
        p, texts, *a, **k))
    new = edits.add_row(project, "please sort a dict in python?", slice_tag="easy")
    assert dedupe.unchecked(project) == [new["id"]]       # rows added by hand wait for the check too
    assert dedupe.check_new(project).pairs == []
    assert lookups == [1]                                 # the new question only

    # an edited question: its stored vector is stale; the check re-embeds it and finds what the new text repeats
    lookups.clear()
    edits.edit_row(project, ids["How do I copy a file?"], "reworded", question="How do I sort a dict in python?")
    assert dedupe.unchecked(project) == [ids["How do I copy a file?"]]
    found = dedupe.check_new(project)
    assert [(p["a"], p["b"]) for p in found.pairs] == [(ids["How do I copy a file?"], new["id"])]
    stored = dict(project.reader().execute("SELECT golden_id, text_hash FROM golden_vectors"))
    assert stored[ids["How do I copy a file?"]] == embedded.text_hash("How do I sort a dict in python?")

    # a retired row is no longer part of the set: its vector goes, and nothing is found against it
    edits.set_status(project, new["id"], "retired", "duplicate")
    again = dedupe.check_new(project, [ids["How do I copy a file?"]])
    assert again.pairs == []
    assert new["id"] not in dict(project.reader().execute("SELECT golden_id, text_hash FROM golden_vectors"))


def test_the_check_finds_the_same_pairs_as_the_whole_set_check(project, tmp_path, model, monkeypatch):
    monkeypatch.setattr(dedupe, "SET_CHUNK", 4)
    questions = [f"{a} {b} {c}?" for a, b, c in zip(VOCAB, VOCAB[3:] + VOCAB[:3], VOCAB[7:] + VOCAB[:7], strict=True)]
    questions += [f"{q[:-1]} please?" for q in questions[::3]]          # near-duplicates of every third question
    import_golden(project, _golden(tmp_path / "a.jsonl", questions))
    whole = {(p["a"], p["b"]) for p in dedupe.golden_duplicates(project, 0.9)}
    assert len(whole) >= 5
    ids = sorted(gid for (gid,) in project.reader().execute("SELECT id FROM golden_rows"))
    dedupe.check_new(project, ids[:3])                                 # stores the set's vectors
    subset = ids[::2]
    found = {tuple(sorted((p["a"], p["b"]))) for p in dedupe.check_new(project, subset).pairs}
    assert found == {pair for pair in whole if set(pair) & set(subset)}
