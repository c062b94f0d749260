"""The retrieval lab: on the corpus as imported its recall equals the metrics module's on the same retrieval."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.golden.lab import run_lab
from rageval_desktop.core.importers import import_corpus, import_golden, import_run
from rageval_desktop.core.judges.embedded import embed, text_hash
from rageval_desktop.core.metrics.dashboard import dashboard
from rageval_desktop.core.store.project import Project

TOPICS = ["rivers flow to the sea", "volcanoes erupt lava", "bees make honey from nectar", "glaciers carve valleys",
          "owls hunt at night", "tides follow the moon", "cacti store water", "bats use echolocation"]


@pytest.mark.slow   # heavy: make test-slow (and CI) run it
def test_lab_matches_the_metrics_module(tmp_path, capsys):
    p = Project.create(tmp_path / "lab.rageval")
    chunks = [{"chunk_id": f"d{i}#{j}", "doc_id": f"d{i}", "position": j,
               "text": f"{t.capitalize()}. Detail {j} about how {t} in nature, with example {i}-{j}."}
              for i, t in enumerate(TOPICS) for j in range(3)]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chunks))
    import_corpus(p, tmp_path / "c.jsonl")
    golden = [{"id": f"g{i}", "question": f"Why do {t.split()[0]} {' '.join(t.split()[1:])}?",
               "gold_answer": t, "gold_chunk_ids": [f"d{i}#1"], "slice_tag": "easy" if i % 2 else "edge"}
              for i, t in enumerate(TOPICS)]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in golden))
    import_golden(p, tmp_path / "g.jsonl")
    # a run that retrieves exactly as the lab does on the imported chunks: MiniLM + inner product, top 24
    vectors = embed(p, [c["text"] for c in chunks] + [g["question"] for g in golden])
    matrix = np.stack([vectors[text_hash(c["text"])] for c in chunks])
    run = []
    for g in golden:
        scores = matrix @ vectors[text_hash(g["question"])]
        order = np.argsort(-scores, kind="stable")
        run.append({"id": g["id"], "question": g["question"], "answer": "a",
                    "retrieved": [{"chunk_id": chunks[i]["chunk_id"], "text": chunks[i]["text"],
                                   "score": float(scores[i])} for i in order]})
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in run))
    import_run(p, tmp_path / "r.jsonl", "dense")
    lab = run_lab(p, [16])
    imported = next(c for c in lab["configs"] if c["config"] == "as imported")["slices"]
    metrics = dashboard(p, "dense")["slices"]
    for name in ("easy", "edge", "all"):
        for m in ("hit@5", "hit@10", "mrr"):
            assert imported[name][m] == pytest.approx(metrics[name][m], abs=1e-9), (name, m)
    rechunked = next(c for c in lab["configs"] if c["config"] == "16 tokens")
    assert rechunked["chunks"] > len(chunks) and 0 <= rechunked["slices"]["all"]["hit@5"] <= 100
    p.close()
    assert main(["lab", str(tmp_path / "lab.rageval"), "--chunk-sizes", "16,32", "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert [c["config"] for c in data["configs"]] == ["as imported", "16 tokens", "32 tokens"]
    # progress on stderr, --json or not (was: minutes of silence; issue 31)
    assert "lab: configuration 1 of 3: as imported" in captured.err
    assert "lab: configuration 3 of 3: 32 tokens" in captured.err
