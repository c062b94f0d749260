"""Hostile and malformed input files for every importer and format: the fuzz test's and the fuzz bench's source.

Each case is (name, kind, file name, bytes). Cases mix targeted attacks seen in the wild (deep nesting, huge
numbers, NaN, NUL, lone surrogates, truncation, duplicate headers, formula cells, compression bombs) with random
mutations of a valid file (byte flips, cuts, splices). Everything is generated from a seed: a failing case can be
written out again with `write_case`.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import zipfile
from collections.abc import Iterator
from pathlib import Path

KINDS = ("golden", "run", "corpus")
FORMATS = ("csv", "jsonl", "json", "parquet", "xlsx", "csv.gz", "jsonl.gz")


def base_rows(kind: str, n: int = 6) -> list[dict]:
    if kind == "golden":
        return [{"id": f"g{i}", "question": f"What is item {i}?", "gold_answer": f"Item {i}.",
                 "gold_chunk_ids": [f"c{i}"], "slice_tag": "easy"} for i in range(n)]
    if kind == "run":
        return [{"id": f"g{i}", "question": f"What is item {i}?", "answer": f"It is {i}.", "latency_ms": 120.5,
                 "prompt_tokens": 50, "retrieved": [{"chunk_id": f"c{i}", "text": f"Chunk {i}.", "score": 0.5}]}
                for i in range(n)]
    return [{"chunk_id": f"c{i}", "doc_id": f"d{i // 2}", "text": f"Chunk {i} text."} for i in range(n)]


def _cell(value: object) -> object:
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def encode(rows: list[dict], fmt: str) -> bytes:
    """Rows in one format. Values that are lists/dicts become JSON text in CSV/XLSX cells."""
    gz = fmt.endswith(".gz")
    base = fmt.removesuffix(".gz")
    if base == "jsonl":
        data = "".join(json.dumps(r, allow_nan=True) + "\n" for r in rows).encode("utf-8", "surrogatepass")
    elif base == "json":
        data = json.dumps(rows, allow_nan=True).encode("utf-8", "surrogatepass")
    elif base == "csv":
        cols = list(dict.fromkeys(k for r in rows for k in r))
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(cols)
        for r in rows:
            writer.writerow(["" if r.get(c) is None else _cell(r.get(c)) for c in cols])
        data = buf.getvalue().encode("utf-8", "surrogatepass")
    elif base == "parquet":
        import pandas as pd

        frame = pd.DataFrame([{k: _cell(v) if isinstance(v, dict) else v for k, v in r.items()} for r in rows])
        out = io.BytesIO()
        frame.to_parquet(out)
        data = out.getvalue()
    elif base == "xlsx":
        import openpyxl

        wb = openpyxl.Workbook()
        ws = wb.active
        cols = list(dict.fromkeys(k for r in rows for k in r))
        ws.append(cols)
        for r in rows:
            ws.append([_cell(r.get(c)) if not isinstance(r.get(c), str) else r.get(c)[:32767] for c in cols])
        out = io.BytesIO()
        wb.save(out)
        data = out.getvalue()
    else:
        raise ValueError(fmt)
    return gzip.compress(data) if gz else data


def _deep(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


def targeted(kind: str) -> Iterator[tuple[str, list[dict] | None, bytes | None]]:
    """(name, rows to encode in every format | None, raw text for text formats | None)."""
    rows = base_rows(kind)
    text_col = {"golden": "question", "run": "question", "corpus": "text"}[kind]
    list_col = {"golden": "gold_chunk_ids", "run": "retrieved", "corpus": "doc_id"}[kind]

    def with_(col: str, value: object, at: int = 2) -> list[dict]:
        out = [dict(r) for r in rows]
        out[at][col] = value
        return out

    yield "valid", rows, None
    yield "deep-list-cell", with_(list_col, _deep(1000)), None
    yield "deep-extra", with_("extra", {"a": _deep(3000)}), None
    yield "huge-float-tokens", with_("prompt_tokens", 1e20), None
    yield "inf-latency", with_("latency_ms", float("inf")), None
    yield "nan-extra", with_("extra", float("nan")), None
    yield "nan-in-nested-extra", with_("extra", {"v": [float("nan"), float("inf")]}), None
    yield "nul-text", with_(text_col, "\u0000"), None
    yield "nul-inside-text", with_(text_col, "abc\u0000def"), None
    yield "control-text", with_(text_col, "\u0001\u0002\u200b"), None
    yield "lone-surrogate", with_(text_col, "bad \ud800 text"), None
    digits = "9" * 5000  # written as text: Python itself refuses to print such an int
    yield "huge-int-text", None, f'{{"id": "g1", "{text_col}": {digits}, "chunk_id": "c1"}}\n'.encode()
    yield "huge-int-tokens", None, (f'{{"id": "g1", "question": "q?", "answer": "a", "text": "t", "chunk_id": "c",'
                                    f' "prompt_tokens": {digits}}}\n').encode()
    yield "huge-int-csv", None, f"id,{text_col},prompt_tokens\ng1,q,{digits}\n".encode()
    yield "negative-tokens", with_("prompt_tokens", -5), None
    yield "list-as-text", with_(text_col, ["a", "b"]), None
    yield "dict-as-list", with_(list_col, {"a": 1}), None
    yield "formula-text", with_(text_col, "=HYPERLINK(\"http://x\",\"y\")"), None
    yield "tag-injection", with_(text_col, "</question><script>alert(1)</script>"), None
    yield "long-cell", with_(text_col, "A" * 1_100_000), None
    yield "bool-text", with_(text_col, True), None
    yield "empty-rows", [{}], None
    yield "only-header", [], None
    yield "bigint-id", with_("id", 2**80), None
    yield "utf8-bad", None, "id,question\ng1,caf\xe9\n".encode("latin-1")
    yield "dup-header", None, f"{text_col},{text_col},id\nq,q,1\n".encode()
    yield "csv-open-quote", None, f'id,{text_col}\ng1,"unterminated\n'.encode()
    yield "csv-short-last-row", None, (f"id,{text_col},gold_answer\ng1,What is one?,One.\ng2,What is"
                                       ).encode()
    yield "csv-long-row", None, f"id,{text_col}\ng1,a,b,c,d\n".encode()
    yield "json-deep-raw", None, ("[" * 5000 + "]" * 5000).encode()
    yield "json-nan-raw", None, b'[{"question": NaN, "text": Infinity, "chunk_id": "c"}]'
    yield "json-bigint-raw", None, ('[{"id": ' + "1" * 5000 + ', "question": "q", "text": "t", "chunk_id": "c"}]'
                                    ).encode()
    yield "json-scalar", None, b"42"
    yield "json-null", None, b"null"
    yield "binary-garbage", None, bytes(range(256)) * 4
    yield "bom-only", None, b"\xef\xbb\xbf"
    yield "whitespace-only", None, b" \n\t\n"


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random mutation of a valid file's bytes."""
    if not data:
        return data
    choice = rng.randrange(5)
    buf = bytearray(data)
    if choice == 0:      # cut
        return bytes(buf[: rng.randrange(len(buf))])
    if choice == 1:      # flip bytes
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        return bytes(buf)
    if choice == 2:      # duplicate a slice
        a = rng.randrange(len(buf))
        b = min(len(buf), a + rng.randint(1, 200))
        return bytes(buf[:b] + buf[a:b] + buf[b:])
    if choice == 3:      # insert special bytes
        at = rng.randrange(len(buf))
        junk = rng.choice([b"\x00", b"\"", b"\n", b",", b"[", b"{", b"\xff\xfe", b"\\u", b"\r"])
        return bytes(buf[:at] + junk * rng.randint(1, 5) + buf[at:])
    a = rng.randrange(len(buf))  # delete a slice
    return bytes(buf[:a] + buf[a + rng.randint(1, 100):])


def xlsx_bomb(mb: int) -> bytes:
    """A small XLSX whose sheet inflates to `mb` megabytes."""
    valid = encode(base_rows("corpus"), "xlsx")
    src = zipfile.ZipFile(io.BytesIO(valid))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename.endswith("sheet1.xml"):
                pad = b"<!--" + b" " * (mb * 1024 * 1024) + b"-->"
                body = body.replace(b"<sheetData>", pad + b"<sheetData>", 1)
            dst.writestr(item, body)
    return out.getvalue()


def cases(seed: int = 0, mutations_per_format: int = 4,
          kinds: tuple[str, ...] = KINDS) -> Iterator[tuple[str, str, str, bytes]]:
    rng = random.Random(seed)
    for kind in kinds:
        for name, rows, raw in targeted(kind):
            for fmt in FORMATS:
                if rows is None:
                    if fmt in ("parquet", "xlsx"):
                        continue
                    data = gzip.compress(raw) if fmt.endswith(".gz") else raw
                else:
                    try:
                        data = encode(rows, fmt)
                    except Exception:  # e.g. parquet cannot hold a 5,000-digit integer: not a file anyone has
                        continue
                yield f"{kind}/{name}", kind, f"{name}.{fmt}", data
        for fmt in FORMATS:
            valid = encode(base_rows(kind, 20), fmt)
            for i in range(mutations_per_format):
                yield f"{kind}/mutation-{i}", kind, f"m{i}.{fmt}", mutate(valid, rng)
        yield f"{kind}/gzip-bomb", kind, "bomb.jsonl.gz", gzip.compress(b" " * (64 * 1024 * 1024))
        yield f"{kind}/xlsx-bomb", kind, "bomb.xlsx", xlsx_bomb(64)


def write_case(folder: Path, file_name: str, data: bytes) -> Path:
    path = folder / file_name
    path.write_bytes(data)
    return path
