"""HHEM-2.1-Open, local: a tiny randomly initialised T5 token classifier saved the way Vectara's checkpoint is
(weights under `t5.`, a config naming its foundation, custom code we never run), registered by folder, scored in
both modes, each score checked against a direct computation of the same predict path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.scoring.citations import statements
from rageval_desktop.core.importers import import_run
from rageval_desktop.core.jobs.judge_job import run_judge_job
from rageval_desktop.core.jobs.spec import JobSpec
from rageval_desktop.core.judges import hhem
from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.metrics.rowdata import load_run
from rageval_desktop.core.store.project import Project

pytestmark = pytest.mark.slow

ROWS = [
    {"id": "q1", "question": "What is a black hole?", "answer": "Black holes are dense. They are also round.",
     "retrieved": [{"chunk_id": "a", "text": "Black holes are dense regions of space."},
                   {"chunk_id": "b", "text": "The earth is round."}]},
    {"id": "q2", "question": "How big is the sun?", "answer": "The sun is small.",
     "retrieved": [{"chunk_id": "c", "text": "x" * 9000}]},           # longer than open-rag-eval's 8192 characters
]


def tiny_hhem(folder: Path) -> tuple[Path, Path]:
    """(model folder, foundation folder) of a random HHEM-shaped model: a T5 token classifier, two labels."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoTokenizer, T5Config, T5ForTokenClassification

    from rageval_desktop.core.judges.embedded import minilm_path

    torch.manual_seed(0)
    foundation = folder / "flan-t5-base"
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()), local_files_only=True)
    config = T5Config(vocab_size=tokenizer.vocab_size, d_model=16, d_kv=4, d_ff=32, num_layers=1, num_heads=2,
                      num_labels=2)
    config.save_pretrained(foundation)
    tokenizer.save_pretrained(foundation)
    model = T5ForTokenClassification(config)
    for p in model.parameters():   # large random weights: scores spread over 0-1, not all near 0.5
        torch.nn.init.normal_(p, std=1.0)
    state = {f"t5.{k}": v.contiguous() for k, v in model.state_dict().items()
             if not k.endswith("encoder.embed_tokens.weight")}   # tied to `shared`, as checkpoints store it
    model_dir = folder / "hallucination_evaluation_model"
    model_dir.mkdir()
    save_file(state, str(model_dir / "model.safetensors"))
    (model_dir / "config.json").write_text(json.dumps({"model_type": "HHEMv2", "foundation": "google/flan-t5-base",
                                                       "prompt": hhem.PROMPT, "auto_map": {}}))
    # the custom code that ships with the model: never imported
    (model_dir / "modeling_hhem_v2.py").write_text(f"open({str(folder / 'RAN')!r}, 'w').write('remote code ran')\n")
    return model_dir, foundation


def direct_scores(model_dir: Path, foundation: Path, pairs: list[tuple[str, str]]) -> list[float]:
    """The same predict path, written out here from the parts: prompt, tokenizer, T5 head, softmax of token 0."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoTokenizer, T5Config, T5ForTokenClassification

    config = T5Config.from_pretrained(str(foundation), num_labels=2)
    model = T5ForTokenClassification(config)
    weights = {k[3:]: v for k, v in load_file(str(model_dir / "model.safetensors")).items()}
    weights["transformer.encoder.embed_tokens.weight"] = weights["transformer.shared.weight"]
    model.load_state_dict(weights)
    model.eval()
    tok = AutoTokenizer.from_pretrained(str(foundation))
    out = []
    for premise, hypothesis in pairs:
        enc = tok([hhem.PROMPT.format(text1=premise, text2=hypothesis)], return_tensors="pt")
        with torch.no_grad():
            logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
        out.append(float(torch.softmax(logits[:, 0, :], dim=-1)[0, 1]))
    return out


@pytest.fixture(scope="module")
def model_folders(tmp_path_factory):
    return tiny_hhem(tmp_path_factory.mktemp("hhem"))


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "user"))
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    p = Project.create(tmp_path / "h.rageval")
    import_run(p, path, "v1")
    yield p
    p.close()


def test_without_a_registered_model_the_job_says_how_to_add_one(project):
    add_judge(project, "hhem", "hallucination", "hhem")
    stats = run_judge_job(project, JobSpec(run="v1"))
    assert stats.stopped == "fatal" and "rageval models add hhem" in stats.message
    assert project.reader().execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 0


def test_both_modes_score_as_the_predict_path_does_and_no_remote_code_runs(project, model_folders):
    model_dir, foundation = model_folders
    entry = hhem.register(model_dir)          # the foundation is found beside it, by the name its config gives
    assert entry["foundation"] == str(foundation.resolve())
    add_judge(project, "hhem", "hallucination", "hhem")
    add_judge(project, "hhem-claims", "hallucination", "hhem", params={"mode": "claims"})
    stats = run_judge_job(project, JobSpec(run="v1"))
    assert (stats.ok, stats.errors, stats.calls) == (4, 0, 0)
    assert not (model_dir.parent / "RAN").exists()

    got = {(name, ext): (score, rationale, json.loads(detail)) for name, ext, score, rationale, detail in
           project.reader().execute("SELECT j.name, r.external_id, x.score, x.rationale, x.detail FROM judgments x "
                                    "JOIN judges j ON j.id = x.judge_id JOIN run_rows r ON r.id = x.run_row_id")}
    texts = {r["id"]: [p["text"] for p in r["retrieved"]] for r in ROWS}
    # whole: the answer against the passages joined, cut to 8192 characters (and said so)
    for row in ROWS:
        joined = " ".join(texts[row["id"]])
        want = direct_scores(model_dir, foundation, [(joined[:hhem.MAX_CHARS], row["answer"])])[0]
        score, rationale, detail = got[("hhem", row["id"])]
        assert score == pytest.approx(want, abs=1e-5)
        assert detail["truncated"] == (len(joined) > hhem.MAX_CHARS)
    assert "cut to 8192" in got[("hhem", "q2")][1] and "cut" not in got[("hhem", "q1")][1]
    # claims: each sentence against each passage, the best passage per sentence, the mean over sentences
    claims = [s.text for s in statements(ROWS[0]["answer"])]
    per = direct_scores(model_dir, foundation, [(p, c) for c in claims for p in texts["q1"]])
    best = [max(per[0:2]), max(per[2:4])]
    score, rationale, detail = got[("hhem-claims", "q1")]
    assert score == pytest.approx(sum(best) / 2, abs=1e-5)
    assert [c["score"] for c in detail["claims"]] == pytest.approx(best, abs=1e-5)
    assert len({round(s, 3) for s in per}) > 1            # a model that says 0.5 to everything proves nothing

    data = load_run(project, "v1")
    frame = data.frame.rename(index=dict(project.reader().execute(
        "SELECT id, external_id FROM run_rows WHERE run_id = ?", (data.run_id,))))
    assert "hhem" in frame.columns      # both judges' scores, averaged per row, on 0-100
    assert frame.loc["q1", "hhem"] == pytest.approx(100 * (got[("hhem", "q1")][0] + got[("hhem-claims", "q1")][0]) / 2)


def test_registering_checks_the_folders(tmp_path, monkeypatch, model_folders):
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "user"))
    model_dir, foundation = model_folders
    with pytest.raises(RagevalError, match="no such folder"):
        hhem.register(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RagevalError, match="not an HHEM model folder"):
        hhem.register(empty)
    with pytest.raises(RagevalError, match="no tokenizer files"):
        hhem.register(model_dir, _bare_config(tmp_path))
    assert hhem.register(model_dir, foundation)["model"] == str(model_dir.resolve())
    assert hhem.unregister() and hhem.registered() == {}


def _bare_config(tmp_path: Path) -> Path:
    folder = tmp_path / "bare"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    return folder


def test_a_long_premise_is_cut_never_the_hypothesis_and_citation_markers_are_stripped(model_folders, tmp_path,
                                                                                     monkeypatch):
    """Was (issue 28): the input was cut at 2,048 tokens from the end, dropping the hypothesis; and `[n]` markers
    stayed in it, which open-rag-eval strips (12 of 24 rows differed, by up to 0.35)."""
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "user"))
    hhem.register(*model_folders)
    model = hhem.load()
    premise = " ".join(f"passage sentence number {i} about the sun." for i in range(900))
    hypothesis = "The sun is a star of medium size."
    fitted, cut = model.fit(premise, hypothesis)
    assert cut and len(fitted) < len(premise)
    ids = model.tokenizer(hhem.PROMPT.format(text1=fitted, text2=hypothesis))["input_ids"]
    tail = model.tokenizer(hypothesis, add_special_tokens=False)["input_ids"]
    assert len(ids) <= hhem.MAX_TOKENS and ids[-len(tail) - 1:-1] == tail        # the hypothesis, whole, at the end
    assert model.predict([(premise, hypothesis)]) == pytest.approx(direct_scores(*model_folders,
                                                                                [(fitted, hypothesis)]), abs=1e-5)
    from rageval_desktop.core.base.scoring.citations import marker_free

    # open-rag-eval's reading (issue 45): parts between marker blocks joined by a space, "[1-3]" is not a marker
    assert marker_free("Dense [1] and round [2][3], see [1, 2] or [1-3].") == "Dense and round , see or [1-3]."


def test_an_input_between_2048_and_4096_tokens_is_scored_whole_as_hhems_own_predict_does(model_folders, tmp_path,
                                                                                          monkeypatch):
    """Issue 45: HHEM's own predict never truncates; cutting at 2,048 tokens made long inputs differ from it by up
    to 0.028. Up to 4,096 tokens the premise goes in whole; past it the premise is cut and the prompt fits."""
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "user"))
    hhem.register(*model_folders)
    model = hhem.load()
    premise = " ".join(f"passage sentence number {i} about the sun." for i in range(300))
    hypothesis = "The sun is a star of medium size."
    size = len(model.tokenizer(hhem.PROMPT.format(text1=premise, text2=hypothesis))["input_ids"])
    assert 2048 < size <= hhem.MAX_TOKENS
    assert model.fit(premise, hypothesis) == (premise, False)
    assert model.predict([(premise, hypothesis)]) == pytest.approx(
        direct_scores(*model_folders, [(premise, hypothesis)]), abs=1e-5)
    longer = premise * 3
    fitted, cut = model.fit(longer, hypothesis)
    assert cut and len(model.tokenizer(hhem.PROMPT.format(text1=fitted, text2=hypothesis))["input_ids"]) \
        <= hhem.MAX_TOKENS
