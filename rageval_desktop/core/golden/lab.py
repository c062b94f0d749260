"""The retrieval lab: how recall depends on chunk size and embedding model (the cookbook's "chunk size matters").

Documents are rebuilt from the project's corpus (chunks of a document in order), re-chunked for each
configuration, embedded (cached by text hash + model) and indexed with FAISS; the approved golden questions are
searched. A new chunk counts as a gold chunk when it shares at least half of the smaller of the two texts with one
of the row's original gold chunks. The configuration "as imported" uses the corpus's own chunks and gold ids, so
its numbers are the ones the metrics module would give a run that retrieved the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.golden.corpus import chunk_spans, tokenizer
from rageval_desktop.core.judges.embedded import MINILM_ID, embed, text_hash
from rageval_desktop.core.metrics import retrieval
from rageval_desktop.core.store.project import Project

KS = (5, 10, 50)


@dataclass
class Chunk:
    id: str
    doc: str
    start: int
    end: int
    text: str


def rebuild_documents(project: Project) -> tuple[dict[str, str], dict[str, Chunk]]:
    """(document text by doc id, the original chunks with their span in that text)."""
    docs: dict[str, list[tuple[str, str]]] = {}
    for cid, doc, text in project.reader().execute(
            "SELECT chunk_id, doc_id, text FROM corpus_chunks ORDER BY doc_id, position, chunk_id"):
        docs.setdefault(doc, []).append((cid, text))
    texts, originals = {}, {}
    for doc, parts in docs.items():
        pos, pieces = 0, []
        for cid, text in parts:
            originals[cid] = Chunk(cid, doc, pos, pos + len(text), text)
            pieces.append(text)
            pos += len(text) + 2
        texts[doc] = "\n\n".join(pieces)
    return texts, originals


def _overlap(a: Chunk, b: Chunk) -> bool:
    if a.doc != b.doc:
        return False
    shared = min(a.end, b.end) - max(a.start, b.start)
    return shared > 0 and shared >= 0.5 * min(a.end - a.start, b.end - b.start)


def evaluate(project: Project, chunks: list[Chunk], gold: dict[str, list[Chunk]], questions: dict[str, str],
             slices: dict[str, str], model_id: str, exact_ids: bool) -> dict[str, Any]:
    import faiss
    import numpy as np

    vectors = embed(project, [c.text for c in chunks] + list(questions.values()), model_id)
    index = faiss.IndexFlatIP(len(next(iter(vectors.values()))))
    index.add(np.stack([vectors[text_hash(c.text)] for c in chunks]).astype(np.float32))
    ids = list(questions)
    _, found = index.search(np.stack([vectors[text_hash(questions[g])] for g in ids]).astype(np.float32),
                            min(max(KS), len(chunks)))
    by_doc: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        by_doc.setdefault(c.doc, []).append(i)
    hit_rows, hit_ranks, n_gold = [], [], []
    for row, (gid, ranked) in enumerate(zip(ids, found, strict=True)):
        golds = gold[gid]
        if exact_ids:
            relevant = {i for i, c in enumerate(chunks) if c.id in {g.id for g in golds}}
        else:
            relevant = {i for g in golds for i in by_doc.get(g.doc, []) if _overlap(chunks[i], g)}
        n_gold.append(max(1, len(relevant)) if golds else 0)
        for rank, i in enumerate(ranked, start=1):
            if int(i) in relevant:
                hit_rows.append(row)
                hit_ranks.append(rank)
    cols = retrieval.table(list(range(len(ids))), n_gold, hit_rows, hit_ranks, KS)
    out: dict[str, Any] = {}
    groups = sorted(set(slices.values()))
    for name in [*groups, "all"]:
        mask = np.array([name == "all" or slices[g] == name for g in ids])
        out[name] = {"n": int(mask.sum()), **{m: float(np.nanmean(cols[m][mask])) * 100
                                              for m in ("hit@5", "hit@10", "hit@50", "mrr")}}
    return out


def run_lab(project: Project, chunk_sizes: list[int], *, overlap: float = 0.2, models: list[str] | None = None,
            include_existing: bool = True, ctx: TaskContext | None = None) -> dict[str, Any]:
    ctx = ctx or TaskContext()
    models = models or [MINILM_ID]
    docs, originals = rebuild_documents(project)
    if not originals:
        raise RagevalError("the corpus is empty: import documents first")
    conn = project.reader()
    questions, slices, gold = {}, {}, {}
    import json

    for gid, q, ids, tag in conn.execute("SELECT id, question, gold_chunk_ids, slice_tag FROM golden_rows "
                                         "WHERE status = 'approved'"):
        golds = [originals[c] for c in json.loads(ids) if c in originals]
        if golds:
            questions[gid], slices[gid], gold[gid] = q, tag or "(no slice)", golds
    if not questions:
        raise RagevalError("no approved golden row has gold chunks in the corpus")
    configs: list[tuple[str, int | None, str]] = []
    for model in models:
        if include_existing:
            configs.append(("as imported", None, model))
        configs += [(f"{size} tokens", size, model) for size in chunk_sizes]
    tok = tokenizer()
    results = []
    for n, (name, size, model) in enumerate(configs, start=1):
        ctx.check()
        ctx.report(n - 1, len(configs), f"{name} · {model}", force=True)
        if size is None:
            chunks = list(originals.values())
        else:
            chunks = [Chunk(f"{doc}@{size}#{i}", doc, a, b, text[a:b])
                      for doc, text in docs.items()
                      for i, (a, b) in enumerate(chunk_spans(text, size, int(size * overlap), tok))]
        scores = evaluate(project, chunks, gold, questions, slices, model, exact_ids=size is None)
        results.append({"config": name, "chunk_size": size, "model": model, "chunks": len(chunks), "slices": scores})
    ctx.report(len(configs), len(configs), "done", force=True)
    return {"questions": len(questions), "overlap": overlap, "configs": results}
