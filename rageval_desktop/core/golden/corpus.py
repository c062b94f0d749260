"""Import a folder of documents as corpus chunks, split by tokens with overlap.

Tokens are counted with the bundled MiniLM tokenizer (the `tokenizers` library, no torch), the same tokenizer the
embedding judges and the retrieval lab use. Chunk ids are `<relative path>#<n>`: stable for the same folder and
the same chunk size and overlap, which the chunk's metadata records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.context import TaskContext
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.paths import resources_dir
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

SUFFIXES = (".txt", ".md", ".markdown", ".rst", ".pdf")


def tokenizer() -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise RagevalError("chunking by tokens needs the tokenizers package (pip install tokenizers)") from None


    tok = Tokenizer.from_file(str(resources_dir() / "tokenizers" / "minilm-wordpiece.json"))   # MiniLM's own
    tok.no_truncation()
    tok.no_padding()
    return tok


def chunk_spans(text: str, size: int, overlap: int, tok: Any = None) -> list[tuple[int, int]]:
    """Character spans of windows of `size` tokens stepping by `size - overlap`."""
    if size < 8 or not 0 <= overlap < size:
        raise RagevalError("chunk size must be at least 8 tokens and the overlap smaller than it")
    tok = tok or tokenizer()
    offsets = tok.encode(text, add_special_tokens=False).offsets
    if not offsets:
        return [(0, len(text))] if text.strip() else []
    spans, step = [], size - overlap
    for start in range(0, len(offsets), step):
        window = offsets[start:start + size]
        spans.append((window[0][0], window[-1][1]))
        if start + size >= len(offsets):
            break
    return spans


def chunk_text(text: str, size: int, overlap: int, tok: Any = None) -> list[str]:
    """The chunks' texts (see chunk_spans)."""
    return [p for p in (text[a:b].strip() for a, b in chunk_spans(text, size, overlap, tok)) if p]


def read_document(path: Path) -> str:
    if path.suffix.lower() == ".pdf":
        try:
            from pypdf import PdfReader
        except ImportError:
            raise RagevalError(f"{path.name}: reading PDFs needs the pypdf package") from None
        return "\n\n".join(page.extract_text() or "" for page in PdfReader(path).pages)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RagevalError(f"{path.name}: not UTF-8 text; save it as UTF-8") from None


def import_folder(project: Project, folder: str | Path, *, size: int = 200, overlap: int = 40,
                  ctx: TaskContext | None = None) -> dict[str, Any]:
    ctx = ctx or TaskContext()
    folder = Path(folder)
    if not folder.is_dir():
        raise RagevalError(f"{folder}: not a folder")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    if not files:
        raise RagevalError(f"{folder}: no .txt, .md, .rst or .pdf files")
    tok = tokenizer()
    rows = []
    for n, path in enumerate(files, start=1):
        ctx.check()
        doc_id = path.relative_to(folder).as_posix()
        for i, piece in enumerate(chunk_text(read_document(path), size, overlap, tok)):
            rows.append({"chunk_id": f"{doc_id}#{i:04d}", "doc_id": doc_id, "position": i, "text": piece,
                         "token_count": len(tok.encode(piece, add_special_tokens=False).ids),
                         "metadata": json.dumps({"chunk_size": size, "overlap": overlap})})
        ctx.report(n, len(files), f"chunking {doc_id}")
    with project.write("import corpus folder", changed=(Area.CORPUS,)) as conn:
        before = conn.execute("SELECT COUNT(*) FROM corpus_chunks").fetchone()[0]
        project.utils.table("corpus_chunks").upsert_all(rows, pk="chunk_id", batch_size=2_000)
        after = conn.execute("SELECT COUNT(*) FROM corpus_chunks").fetchone()[0]
        project.audit(conn, "import corpus", "corpus", str(folder), files=len(files), chunks=len(rows),
                      chunk_size=size, overlap=overlap)
    return {"files": len(files), "chunks": len(rows), "new_chunks": after - before, "chunk_size": size,
            "overlap": overlap}
