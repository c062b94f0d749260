"""Near-duplicate questions: MiniLM embeddings (cached in the project by text hash + model id) in a FAISS
inner-product index over unit vectors, so scores are cosines; every pair above the threshold is listed.

Two checks: the whole set against itself (`golden_duplicates`: `rageval golden dedupe`, the Golden Set's
Duplicates…), and the new rows against the set (`check_new`), whose cost follows the new rows, not the set: the set
is read a chunk at a time from its stored vectors (`golden_vectors`, one sequential scan, kept up to date as rows
are added or changed; a chunk's vectors in a FAISS index, searched by range for the new rows' vectors), so only the
new questions are embedded. An import commits its rows first and lists their ids as
unchecked; `check_new` (the app's follow-up task, `rageval import golden --dedupe-check`, `rageval golden dedupe --new`)
checks them later and takes them off the list.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.judges.embed_endpoint import parse
from rageval_desktop.core.judges.embedded import MINILM_ID, embed, text_hash
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

NEIGHBOURS = 10
UNCHECKED_KEY = "golden.dedupe_unchecked"   # meta: ids of golden rows imported and not yet checked
SET_CHUNK = 5000                            # existing rows read, embedded if need be, and searched at a time


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
    pairs = near_duplicates(texts, vectors, threshold)
    _clear_unchecked(project, None)   # every row was checked
    return pairs


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


# --- the new rows against the set -----------------------------------------------------------------------------
@dataclass
class NewRowsCheck:
    checked: int                                   # new rows checked
    pairs: list[dict[str, Any]] = field(default_factory=list)   # a: the new row, b: the row it nearly repeats
    questions: dict[str, str] = field(default_factory=dict)      # the questions of the rows in `pairs`
    embedded: int = 0                              # texts embedded now (the rest came from the cache)
    seconds: float = 0.0
    threshold: float = 0.9

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        if not self.pairs:
            return f"no near-duplicates among the {self.checked} new question(s)"
        rows = len({p["a"] for p in self.pairs})
        return (f"{rows} of the {self.checked} new question(s) nearly repeat golden rows "
                f"({len(self.pairs)} pair(s), cosine ≥ {self.threshold:g})")


def mark_unchecked(conn: sqlite3.Connection, ids: list[str]) -> None:
    """Inside the write that added or changed these rows: they wait for the near-duplicate check."""
    if not ids:
        return
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (UNCHECKED_KEY,)).fetchone()
    listed = json.loads(row[0]) if row else []
    known = set(listed)
    listed += [i for i in ids if i not in known]
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                 (UNCHECKED_KEY, json.dumps(listed)))


def unchecked(project: Project) -> list[str]:
    value = project.meta(UNCHECKED_KEY)
    return json.loads(value) if value else []


def _clear_unchecked(project: Project, ids: list[str] | None) -> None:
    """Take checked ids off the list (None: all of them)."""
    if project.read_only or not project.meta(UNCHECKED_KEY):
        return
    with project.write("near-duplicate check", changed=(Area.SETTINGS,)) as conn:
        if ids is None:
            conn.execute("DELETE FROM meta WHERE key = ?", (UNCHECKED_KEY,))
            return
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (UNCHECKED_KEY,)).fetchone()
        done = set(ids)
        left = [i for i in (json.loads(row[0]) if row else []) if i not in done]
        if left:
            project.set_meta(conn, UNCHECKED_KEY, json.dumps(left))
        else:
            conn.execute("DELETE FROM meta WHERE key = ?", (UNCHECKED_KEY,))


def set_vectors(project: Project, model_id: str, exclude: Any = (), counts: dict[str, int] | None = None,
                ctx: TaskContext | None = None) -> Iterator[tuple[list[str], Any]]:
    """The active golden rows' question vectors (but `exclude`), SET_CHUNK rows at a time as (ids, float32 matrix).

    Read in one sequential scan of `golden_vectors`; a row whose question changed since its vector was stored, or
    that has none yet, is embedded (from the embedding cache where present) and stored, and vectors of rows no
    longer active are removed, so the next check reads them all in one scan again."""
    import numpy as np

    name = parse(model_id)[0]   # stored under the model's name, as the embedding cache does
    conn = project.reader()
    current = {gid: text_hash(q) for gid, q in conn.execute(
        "SELECT id, question FROM golden_rows WHERE status != 'retired'") if gid not in exclude}
    covered: set[str] = set()
    stale: list[str] = []
    last = 0
    while True:
        if ctx is not None:
            ctx.check()
        rows = conn.execute("SELECT rowid, golden_id, text_hash, vector FROM golden_vectors WHERE model_id = ? "
                            "AND rowid > ? ORDER BY rowid LIMIT ?", (name, last, SET_CHUNK)).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        kept = [(gid, vector) for _, gid, h, vector in rows if current.get(gid) == h]
        stale += [gid for _, gid, h, _ in rows if gid not in exclude and current.get(gid) != h]
        if kept:
            covered.update(gid for gid, _ in kept)
            matrix = np.frombuffer(b"".join(v for _, v in kept), dtype=np.float32).reshape(len(kept), -1)
            yield [gid for gid, _ in kept], matrix
    missing = [gid for gid in current if gid not in covered]
    for start in range(0, len(missing), SET_CHUNK):
        if ctx is not None:
            ctx.check()
        chunk = missing[start:start + SET_CHUNK]
        questions: dict[str, str] = {}
        for at in range(0, len(chunk), 500):
            part = chunk[at:at + 500]
            questions.update(conn.execute(f"SELECT id, question FROM golden_rows WHERE id IN "
                                          f"({','.join('?' * len(part))})", part))
        ids = [gid for gid in chunk if gid in questions]
        vectors = embed(project, [questions[gid] for gid in ids], model_id, counts=counts)
        matrix = (np.stack([vectors[text_hash(questions[gid])] for gid in ids]).astype(np.float32) if ids
                  else np.zeros((0, 0), dtype=np.float32))
        _store_vectors(project, model_id, [(gid, text_hash(questions[gid]), matrix[k]) for k, gid in enumerate(ids)],
                       stale if start == 0 else [])
        stale = []
        if ids:
            yield ids, matrix
    if stale:
        _store_vectors(project, model_id, [], stale)


def _store_vectors(project: Project, model_id: str, rows: list[tuple[str, str, Any]], stale: list[str]) -> None:
    """Keep golden rows' vectors (id, question hash, vector) for the next check; drop those of `stale` rows."""
    if project.read_only or not (rows or stale):
        return

    model_id = parse(model_id)[0]
    with project.write("golden vectors", changed=(Area.CACHES,)) as conn:
        conn.executemany("DELETE FROM golden_vectors WHERE golden_id = ? AND model_id = ?",
                         [(gid, model_id) for gid in stale])
        conn.executemany("INSERT OR REPLACE INTO golden_vectors (golden_id, model_id, text_hash, vector) "
                         "VALUES (?, ?, ?, ?)",
                         [(gid, model_id, h, v.astype("float32").tobytes()) for gid, h, v in rows])


def check_new(project: Project, ids: list[str] | None = None, threshold: float = 0.9,
              model_id: str = MINILM_ID, ctx: TaskContext | None = None) -> NewRowsCheck:
    """The rows `ids` (default: the unchecked ones) against every other active golden row and each other."""
    import faiss
    import numpy as np

    began = time.perf_counter()
    wanted = unchecked(project) if ids is None else list(ids)
    conn = project.reader()
    new: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        new.update(conn.execute(f"SELECT id, question FROM golden_rows WHERE status != 'retired' AND id IN "
                                f"({','.join('?' * len(chunk))})", chunk))
    result = NewRowsCheck(checked=len(new), threshold=threshold)
    if new:
        new_ids = sorted(new)
        counts = {"embedded": 0}
        vectors = embed(project, [new[i] for i in new_ids], model_id, counts=counts)
        query = np.stack([vectors[text_hash(new[i])] for i in new_ids]).astype(np.float32)
        found: dict[tuple[str, str], float] = {}

        def search(ids_: list[str], matrix: Any, same: bool) -> None:
            index = faiss.IndexFlatIP(matrix.shape[1])
            index.add(matrix)
            limits, scores, hits = index.range_search(query, threshold - 1e-6)
            for qi in range(len(new_ids)):
                for score, j in zip(scores[limits[qi]:limits[qi + 1]], hits[limits[qi]:limits[qi + 1]], strict=True):
                    other = ids_[int(j)]
                    if other == new_ids[qi]:
                        continue
                    a, b = (min(new_ids[qi], other), max(new_ids[qi], other)) if same else (new_ids[qi], other)
                    key = (a, b)
                    found[key] = max(found.get(key, -1.0), float(score))

        search(new_ids, query, True)
        for set_ids, matrix in set_vectors(project, model_id, exclude=new, counts=counts, ctx=ctx):
            search(set_ids, matrix, False)
        _store_vectors(project, model_id, [(i, text_hash(new[i]), query[k]) for k, i in enumerate(new_ids)], [])
        result.embedded = counts["embedded"]
        result.pairs = [{"a": a, "b": b, "cosine": round(min(1.0, c), 4)}
                        for (a, b), c in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))]
        named = {x for p in result.pairs for x in (p["a"], p["b"])}
        result.questions = {gid: q for gid, q in new.items() if gid in named}
        missing = sorted(named - set(result.questions))
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            result.questions.update(conn.execute(
                f"SELECT id, question FROM golden_rows WHERE id IN ({','.join('?' * len(chunk))})", chunk))
    _clear_unchecked(project, wanted)
    result.seconds = time.perf_counter() - began
    return result

