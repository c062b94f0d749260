"""Embeddings on a server (`/v1/embeddings`), through the real openai client against a loopback server that returns
deterministic vectors: the same near-duplicate pairs as the local model when the vectors are the same, the same
cache (a second run sends nothing), batched requests, clear errors."""

from __future__ import annotations

import json

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.golden import dedupe
from rageval_desktop.core.importers import import_golden
from rageval_desktop.core.judges import embed_endpoint, embedded
from tests.core.test_dedupe_incremental import VOCAB, BagOfWords
from tests.support.fake_openai import FakeOpenAI, Reply

QUESTIONS = ["How do I reverse a list in python?", "please reverse a list in python?", "What is the capital of France?",
             "capital of France please?", "How tall is Everest?", "Which ocean is largest?", "sort a dict in python?",
             *[f"Which {w} file number {i}?" for i, w in enumerate(VOCAB)]]


@pytest.fixture
def golden(project, tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps({"question": q, "gold_answer": "a", "slice_tag": "easy"}) + "\n"
                            for q in QUESTIONS))
    import_golden(project, path)
    return project


def serve_bow(server):
    bow = BagOfWords()
    server.embedder = lambda text: [float(x) * 3.0 for x in bow.encode([text])[0]]   # unnormalised on purpose
    return bow


def test_the_endpoint_finds_the_same_pairs_as_the_local_model_and_caches_them(golden, monkeypatch):
    local = BagOfWords()
    monkeypatch.setattr(embedded, "load_model", lambda model_id=embedded.MINILM_ID: local)
    monkeypatch.setattr(embed_endpoint, "BATCH", 4)                  # several requests
    expected = dedupe.golden_duplicates(golden, 0.9)
    assert len(expected) >= 2
    with FakeOpenAI() as server:
        serve_bow(server)
        model = embed_endpoint.model_id(server.url, "bow-embed")
        first = dedupe.golden_duplicates(golden, 0.9, model_id=model)
        sent = len(server.embedding_requests)
        again = dedupe.golden_duplicates(golden, 0.9, model_id=model)
        assert len(server.embedding_requests) == sent                 # the second run asks for nothing
    assert first == expected == again
    assert sent == -(-len(QUESTIONS) // 4)                             # batched: 4 texts per request
    assert {r["model"] for r in server.embedding_requests} == {"bow-embed"}
    # cached under the model's name, not its URL: the same model served elsewhere reuses the vectors
    names = {m for (m,) in golden.reader().execute("SELECT DISTINCT model_id FROM embeddings")}
    assert names == {embedded.MINILM_ID, "bow-embed"}
    with FakeOpenAI() as moved:
        serve_bow(moved)
        assert dedupe.golden_duplicates(golden, 0.9, model_id=embed_endpoint.model_id(moved.url, "bow-embed")) \
            == expected
        assert moved.embedding_requests == []


def test_rageval_golden_dedupe_takes_an_embeddings_url(golden, capsys, monkeypatch):
    with FakeOpenAI() as server:
        serve_bow(server)
        path = str(golden.path)
        golden.close()
        assert main(["golden", "dedupe", path, "--embeddings-url", server.url, "--model", "bow", "--json"]) == 0
        pairs = json.loads(capsys.readouterr().out)
        assert main(["golden", "dedupe", path, "--embeddings-url", server.url, "--json"]) == 2
        assert "needs --model" in capsys.readouterr().err
    assert pairs and all(p["cosine"] >= 0.9 for p in pairs)


def test_an_embedding_judge_on_an_endpoint(tmp_path, monkeypatch):
    from rageval_desktop.core.jobs.judge_job import run_judge_job
    from rageval_desktop.core.jobs.spec import JobSpec
    from rageval_desktop.core.judges.registry import add_judge
    from tests.core.test_judging import make_project

    project = make_project(tmp_path / "e.rageval", n=10)
    with FakeOpenAI() as server:
        server.embedder = lambda text: [1.0, float(len(text) % 7), 0.5]
        judge = add_judge(project, "sim", "correctness", "embedding", model="tiny", base_url=server.url)
        assert judge.model_id == "embedding:tiny"
        stats = run_judge_job(project, JobSpec(run="v1"))
        asked = len(server.embedding_requests)
        project.write("forget").__enter__().execute("DELETE FROM judgments")
        run_judge_job(project, JobSpec(run="v1"))
        assert len(server.embedding_requests) == asked                 # from the cache
    assert stats.ok == 10 and asked >= 1 and server.calls == 0
    project.close()


def test_a_failing_endpoint_is_a_clear_error(project, tmp_path):
    with FakeOpenAI(lambda body, n: Reply(status=500)) as server:       # no embedder: every request is a 404
        with pytest.raises(RagevalError, match="embeddings endpoint .* failed: .*404"):
            embedded.embed(project, ["a text"], embed_endpoint.model_id(server.url, "missing-model"))
    with pytest.raises(RagevalError, match="credentials"):
        embed_endpoint.model_id("http://user:secret@127.0.0.1:9/v1", "m")


@pytest.mark.parametrize("vector", [
    lambda text: [1.0] * (3 + len(text) % 3),       # ragged: was an internal ValueError
    lambda text: ["a", "b"],                        # not numbers: was an internal ValueError
    lambda text: [float("nan"), 1.0, 2.0],          # was cached, and every similarity was NaN: no pair found
    lambda text: [1e308, 1.0, 2.0],                 # beyond float32: was cached as inf, the same
    lambda text: [[1.0], [2.0]],                    # nested: was flattened into another vector
])
def test_vectors_that_are_not_vectors_are_refused_and_never_cached(golden, vector):
    with FakeOpenAI() as server:
        server.embedder = vector
        with pytest.raises(RagevalError, match="not vectors of finite numbers of one length"):
            embedded.embed(golden, QUESTIONS[:6], embed_endpoint.model_id(server.url, "astray"))
    assert golden.reader().execute("SELECT COUNT(*) FROM embeddings WHERE model_id = 'astray'").fetchone()[0] == 0


def test_vectors_of_another_length_from_another_request_are_refused(golden, monkeypatch):
    monkeypatch.setattr(embed_endpoint, "BATCH", 2)
    with FakeOpenAI() as server:
        server.embedder = lambda text: [1.0] * (3 if "python" in text else 4)
        with pytest.raises(RagevalError, match="vectors of different lengths to different requests"):
            embedded.embed(golden, QUESTIONS[:4], embed_endpoint.model_id(server.url, "astray"), batch_size=2)
