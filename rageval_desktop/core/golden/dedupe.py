"""Near-duplicate questions: MiniLM embeddings (cached in the project by text hash + model id) in a FAISS
inner-product index over unit vectors, so scores are cosines; every pair above the threshold is listed."""

from __future__ import annotations

from typing import Any

from rageval_desktop.core.judges.embedded import MINILM_ID, embed, text_hash
from rageval_desktop.core.store.project import Project

NEIGHBOURS = 10


def near_duplicates(texts: dict[str, str], vectors: dict[str, Any], threshold: float = 0.9) -> list[dict[str, Any]]:
    """Pairs (a < b) of ids whose texts' cosine is at least the threshold."""
    import faiss
    import numpy as np

    ids = sorted(texts)
    if len(ids) < 2:
        return []
    matrix = np.stack([vectors[text_hash(texts[i])] for i in ids]).astype(np.float32)
    index = faiss.IndexFlatIP(matrix.shape[1])
    index.add(matrix)
    k = min(NEIGHBOURS + 1, len(ids))
    scores, neighbours = index.search(matrix, k)
    pairs: dict[tuple[str, str], float] = {}
    for i, (row_scores, row_ids) in enumerate(zip(scores, neighbours, strict=True)):
        for score, j in zip(row_scores, row_ids, strict=True):
            if j < 0 or j == i or score < threshold:
                continue
            a, b = sorted((ids[i], ids[int(j)]))
            pairs[(a, b)] = max(pairs.get((a, b), -1.0), float(score))
    return [{"a": a, "b": b, "cosine": round(min(1.0, c), 4)}
            for (a, b), c in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))]


def golden_duplicates(project: Project, threshold: float = 0.9, model_id: str = MINILM_ID,
                      include_retired: bool = False) -> list[dict[str, Any]]:
    where = "" if include_retired else "WHERE status != 'retired'"
    texts = {gid: q for gid, q in project.reader().execute(f"SELECT id, question FROM golden_rows {where}")}
    vectors = embed(project, list(texts.values()), model_id)
    return near_duplicates(texts, vectors, threshold)


def leakage(project: Project, questions: list[str], threshold: float = 0.9,
            model_id: str = MINILM_ID, exclude_ids: set[str] | None = None) -> list[dict[str, Any]]:
    """New questions (an import) that nearly repeat an existing golden row: index the set, query the new ones.
    `exclude_ids`: rows left out of the set (the import's own rows, when it has committed already)."""
    import faiss
    import numpy as np

    exclude = exclude_ids or set()
    existing = {gid: q for gid, q in project.reader().execute(
        "SELECT id, question FROM golden_rows WHERE status != 'retired'") if gid not in exclude}
    if not existing or not questions:
        return []
    vectors = embed(project, [*existing.values(), *questions], model_id)
    ids = sorted(existing)
    index = faiss.IndexFlatIP(len(next(iter(vectors.values()))))
    index.add(np.stack([vectors[text_hash(existing[i])] for i in ids]).astype(np.float32))
    query = np.stack([vectors[text_hash(q)] for q in questions]).astype(np.float32)
    scores, found = index.search(query, 1)
    return [{"question": q, "similar_to": ids[int(j[0])], "cosine": round(float(s[0]), 4)}
            for q, s, j in zip(questions, scores, found, strict=True) if s[0] >= threshold]
