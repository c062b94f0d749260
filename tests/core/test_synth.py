"""The synthetic pipeline against the loopback server: the critique filter keeps exactly the rows at or above
the thresholds; a re-run is served from the cache."""

from __future__ import annotations

import json
import re

from rageval_desktop.cli import main
from rageval_desktop.core.golden.synth import SynthSpec, parse_generation, run_synth
from rageval_desktop.core.importers import import_corpus
from rageval_desktop.core.judges.registry import add_judge
from rageval_desktop.core.store.project import Project
from tests.support.fake_openai import FakeOpenAI, Reply

# chunk i gets question "Q<i>?"; critique scores depend on i so the filter has something to decide
SCORES = {0: (5, 5, 5), 1: (4, 4, 4), 2: (3, 5, 5), 3: (5, 3, 5), 4: (5, 5, 3), 5: (4, 5, 4)}


def script(body: dict, n: int) -> Reply:
    text = body["messages"][-1]["content"]
    if "Factoid question:" in text:
        i = int(re.search(r"Chunk number (\d+)", text).group(1))
        return Reply(f"Factoid question: What does chunk {i} say?\nAnswer: It says {i}.")
    i = int(re.search(r"What does chunk (\d+) say\?", text).group(1))
    g, r, s = SCORES[i]
    score = g if "answer the given question unambiguously" in text else r if "how useful" in text else s
    return Reply(f"Evaluation: fine.\nTotal rating: {score}")


def test_critique_filter_keeps_exactly_the_rows_at_or_above_thresholds(tmp_path):
    p = Project.create(tmp_path / "s.rageval")
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"chunk_id": f"c{i}", "doc_id": "d",
                                                          "text": f"Chunk number {i} is about {i}."}) + "\n"
                                              for i in range(6)))
    import_corpus(p, tmp_path / "c.jsonl")
    with FakeOpenAI(script) as server:
        add_judge(p, "writer", "correctness", "llm", model="m", base_url=server.url)
        stats = run_synth(p, SynthSpec(n=6, judge="writer", seed=1))
        calls = server.calls
        assert (stats.chunks, stats.candidates, stats.kept) == (6, 6, 3)
        assert stats.rejected == {"below threshold: groundedness": 1, "below threshold: relevance": 1,
                                  "below threshold: standalone": 1}
        rows = {r[0]: r[1:] for r in p.reader().execute(
            "SELECT question, status, source, gold_chunk_ids, gold_answer FROM golden_rows")}
        assert set(rows) == {"What does chunk 0 say?", "What does chunk 1 say?", "What does chunk 5 say?"}
        assert rows["What does chunk 1 say?"] == ("draft", "synthetic", '["c1"]', "It says 1.")
        assert calls == 6 + 6 * 3
        # a second run with other thresholds is answered from the project's cache: no new calls
        again = run_synth(p, SynthSpec(n=6, judge="writer", seed=1, thresholds={"groundedness": 3, "relevance": 3,
                                                                                  "standalone": 3}))
        assert server.calls == calls and again.cache_hits == 24
        assert again.kept == 3 and again.rejected == {"already in the golden set": 3}
    p.close()


def test_snippet_style_requires_exact_quotes():
    chunk = "The Amazon flows through Brazil, Peru and Colombia."
    text = ('[{"question": "Where does it flow?", "ground_truth_source": "Brazil, Peru and Colombia"},'
            ' {"question": "Who named it?", "ground_truth_source": "Francisco de Orellana"}]')
    out = parse_generation("snippets", text, chunk)
    assert [c["snippet_found"] for c in out] == [True, False]


def test_synth_cli_needs_an_llm_judge(tmp_path, capsys):
    p = Project.create(tmp_path / "s.rageval")
    add_judge(p, "lex", "correctness", "lexical")
    p.close()
    assert main(["synth", str(tmp_path / "s.rageval"), "--n", "2", "--judge", "lex"]) == 1
    assert "not an LLM judge" in capsys.readouterr().err


def test_an_endpoint_that_cannot_be_reached_stops_synthesis_and_says_so(tmp_path, capsys):
    import socket

    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = Project.create(tmp_path / "s.rageval")
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"chunk_id": f"c{i}", "doc_id": "d",
                                                          "text": f"Chunk number {i} is about {i}."}) + "\n"
                                              for i in range(3)))
    import_corpus(p, tmp_path / "c.jsonl")
    add_judge(p, "writer", "correctness", "llm", model="m", base_url=f"http://127.0.0.1:{port}/v1",
              params={"max_retries": 1, "timeout": 1.0})
    stats = run_synth(p, SynthSpec(n=3, judge="writer", seed=1))
    assert stats.stopped == "fatal" and "judge 'writer' cannot reach its endpoint" in stats.message
    assert stats.kept == 0
    p.close()
    assert main(["synth", str(tmp_path / "s.rageval"), "--judge", "writer", "--n", "3"]) == 1
    assert "cannot reach its endpoint" in capsys.readouterr().err
