"""The layouts we read, each turned into the same canonical records.

Detection looks at column names only; `--format` overrides it and `--map new=old` renames columns first,
so any other layout can be read as a native one.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.errors import ImportFailed
from rageval_desktop.core.importers.cells import _INVISIBLE, _SURROGATE, MAX_CELL_CHARS, MAX_NUMBER, Cells

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from numpy.typing import NDArray

    from rageval_desktop.core.importers.readers import ArrowChunk


@dataclass
class GoldenRecord:
    row: int
    id: str | None
    question: str
    gold_answer: str | None
    gold_chunk_ids: list[str]
    slice_tag: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    gold_context: str | None = None  # text of the gold chunk when the layout has no chunk ids
    status: str | None = None        # draft | approved | retired (exports of a version carry it)
    source: str | None = None
    # the content fields the file gives for this row; on an update, a field it leaves out keeps its stored value
    # (a file of id,question,gold_answer used to erase every row's gold chunk ids, slice and metadata)
    given: frozenset[str] = frozenset(("gold_answer", "gold_chunk_ids", "slice_tag", "metadata"))


def given_fields(rec: dict, known: set[str], columns: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """The content fields a file's row gives: `columns` maps each field to the columns that carry it; metadata is
    given when the row has a column no layout knows (those columns are the metadata)."""
    out = {name for name, cols in columns.items() if any(col in rec for col in cols)}
    if any(key not in known for key in rec):
        out.add("metadata")
    return frozenset(out)


@dataclass(slots=True)
class Passage:
    chunk_id: str | None
    text: str | None
    score: float | None = None
    in_prompt: bool | None = None
    scoped: bool = False  # chunk_id is a marker local to its query (open-rag-eval "[1]"), not a corpus id


@dataclass(slots=True)
class RunRecord:
    row: int
    external_id: str | None
    golden_id: str | None
    question: str
    answer: str | None
    retrieved: list[Passage]
    latency_ms: float | None = None
    cost_usd: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Layout:
    name: str
    kind: str  # "golden" or "run"
    required: tuple[str, ...]
    optional: tuple[str, ...]
    convert: Callable[[list[dict], Cells], list]
    description: str
    one_of: tuple[str, ...] = ()  # at least one of these columns must be present

    def missing(self, present: set[str]) -> list[str]:
        missing = [col for col in self.required if col not in present]
        if self.one_of and not present & set(self.one_of):
            missing.append(" or ".join(self.one_of))
        return missing

    @property
    def known(self) -> set[str]:
        return set(self.required) | set(self.optional)


# --- golden layouts ----------------------------------------------------------------------------
def _native_golden(records: list[dict], c: Cells) -> list[GoldenRecord]:
    known = set(NATIVE_GOLDEN.known)
    out = []
    for i, r in enumerate(records, start=1):
        status, source = c.text(r, "status", i), c.text(r, "source", i)
        if status not in (None, "draft", "approved", "retired"):
            raise c.fail(f"status must be draft, approved or retired, got {status!r}", i, "status")
        if source not in (None, "import", "manual", "synthetic", "production_failure"):
            raise c.fail(f"source must be import, manual, synthetic or production_failure, got {source!r}", i,
                         "source")
        out.append(GoldenRecord(
            row=i, id=c.text(r, "id", i), question=c.text(r, "question", i, required=True),
            gold_answer=c.text(r, "gold_answer", i), gold_chunk_ids=c.id_list(r, "gold_chunk_ids", i),
            slice_tag=c.text(r, "slice_tag", i), metadata=c.extras(r, known, i), status=status, source=source,
            given=given_fields(r, known, {"gold_answer": ("gold_answer",), "gold_chunk_ids": ("gold_chunk_ids",),
                                          "slice_tag": ("slice_tag",)})))
    return out


def _ragas_golden(records: list[dict], c: Cells) -> list[GoldenRecord]:
    known = set(RAGAS_GOLDEN.known) | set(RAGAS_RUN.known)
    out = []
    for i, r in enumerate(records, start=1):
        contexts = c.text_list(r, "reference_contexts", i) if "reference_contexts" in r else []
        out.append(GoldenRecord(
            row=i, id=c.text(r, "id", i), question=c.text(r, "user_input", i, required=True),
            gold_answer=c.text(r, "reference", i), gold_chunk_ids=c.id_list(r, "reference_context_ids", i),
            slice_tag=c.text(r, "slice_tag", i), metadata=c.extras(r, known, i),
            gold_context=contexts[0] if len(contexts) == 1 else None,
            given=given_fields(r, known, {"gold_answer": ("reference",),
                                          "gold_chunk_ids": ("reference_context_ids", "reference_contexts"),
                                          "slice_tag": ("slice_tag",)})))
    return out


def _cookbook_golden(records: list[dict], c: Cells) -> list[GoldenRecord]:
    known = set(COOKBOOK_GOLDEN.known)
    out = []
    for i, r in enumerate(records, start=1):
        meta = c.extras(r, known, i)
        for col in ("source_doc", "groundedness_score", "relevance_score", "standalone_score"):
            if not c.missing(r.get(col)):
                meta[col] = c.number(r, col, i) if col.endswith("_score") else c.text(r, col, i)
        out.append(GoldenRecord(
            row=i, id=c.text(r, "id", i), question=c.text(r, "question", i, required=True),
            gold_answer=c.text(r, "answer", i), gold_chunk_ids=[], slice_tag=c.text(r, "slice_tag", i),
            metadata=meta, gold_context=c.text(r, "context", i),
            given=given_fields(r, known - {"source_doc", "groundedness_score", "relevance_score",
                                           "standalone_score"},
                               {"gold_answer": ("answer",), "gold_chunk_ids": ("context",),
                                "slice_tag": ("slice_tag",)})))
    return out


def _qa_golden(records: list[dict], c: Cells, question: str, answer: str, known: set[str]) -> list[GoldenRecord]:
    """A golden set of a question column and an answer column (the rest kept in metadata)."""
    return [GoldenRecord(row=i, id=c.text(r, "id", i), question=c.text(r, question, i, required=True),
                         gold_answer=c.text(r, answer, i), gold_chunk_ids=[], slice_tag=c.text(r, "slice_tag", i),
                         metadata=c.extras(r, known, i),
                         given=given_fields(r, known, {"gold_answer": (answer,), "slice_tag": ("slice_tag",)}))
            for i, r in enumerate(records, start=1)]


def _examples_golden(records: list[dict], c: Cells) -> list[GoldenRecord]:
    """ragas-examples' datasets (`question`, `expected_answer`: improve_rag's hf_doc_qa_eval.csv)."""
    return _qa_golden(records, c, "question", "expected_answer", set(EXAMPLES_GOLDEN.known))


def _turn(c: Cells, r: dict, column: str, i: int, role: str = "user", required: bool = True) -> str | None:
    """inspect-ai's `input`: a text, or chat messages ({role, content}) whose last turn of `role` (the user's: the
    question) is the text (a content given as parts: their text parts, joined)."""
    value = r.get(column)
    if not isinstance(value, list):
        return c.text(r, column, i, required=required)
    turns = [m for m in value if isinstance(m, dict) and m.get("role") == role]
    if not turns:
        raise c.fail(f"the chat messages hold no {role} turn to take the text from", i, column)
    content = turns[-1].get("content")
    if isinstance(content, list):
        content = "\n".join(str(part.get("text", "")) for part in content
                            if isinstance(part, dict) and part.get("type") == "text")
    return c.text({column: content}, column, i, required=required)


# the keys an object-valued input or output (Langfuse's, LangSmith's) names its text by, most telling first
QUESTION_KEYS = ("question", "query", "input", "user_input", "prompt", "text", "content")
ANSWER_KEYS = ("answer", "expected_answer", "expected_output", "reference", "ground_truth", "output", "target",
               "response", "text", "content")


def _object_text(c: Cells, r: dict, column: str, i: int, keys: tuple[str, ...], role: str,
                 meta: dict) -> str | None:
    """The text of a column that holds a text, chat messages, or an object of named values ({"question": ...},
    {"messages": [...]}, {"message": {role, content}}): the value under the first of `keys` it has, else its only
    text. An object's other values are kept: the whole object goes to metadata under the column's name."""
    value = r.get(column)
    if not isinstance(value, dict):
        return _turn(c, r, column, i, role, required=role == "user")
    if isinstance(value.get("messages"), list):
        return _turn(c, {column: value["messages"]}, column, i, role, required=role == "user")
    if isinstance(value.get("message"), dict):
        return _turn(c, {column: [value["message"]]}, column, i, role, required=role == "user")
    texts = [k for k, v in value.items() if isinstance(v, str)]
    key = next((k for k in keys if k in texts), texts[0] if len(texts) == 1 else None)
    if key is None:
        names = ", ".join(repr(str(k)) for k in value) or "nothing"
        raise c.fail(f"its object holds {names}: none is named like a {'question' if role == 'user' else 'answer'}"
                     f" ({', '.join(keys[:4])}, ...) and it has not exactly one text", i, column)
    if set(value) != {key}:
        meta[column] = c.plain(value, i, column, 0)
    return c.text({column: value[key]}, column, i, required=role == "user")


def _inspect_golden(records: list[dict], c: Cells) -> list[GoldenRecord]:
    """An inspect-ai dataset (`input`: text or chat messages; `target`: a text, or a list of acceptable ones — the
    first is the gold answer, all are kept in metadata)."""
    known = set(INSPECT_GOLDEN.known)
    out = []
    for i, r in enumerate(records, start=1):
        meta = c.extras(r, known, i)
        target = r.get("target")
        if isinstance(target, list):
            targets = c.text_list(r, "target", i)
            meta["targets"] = targets
            answer = targets[0] if targets else None
        else:
            answer = c.text(r, "target", i)
        out.append(GoldenRecord(row=i, id=c.text(r, "id", i), question=_turn(c, r, "input", i) or "",
                                gold_answer=answer, gold_chunk_ids=[], slice_tag=c.text(r, "slice_tag", i),
                                metadata=meta, given=given_fields(r, known, {"gold_answer": ("target",),
                                                                              "slice_tag": ("slice_tag",)})))
    return out


def _deepeval_golden(records: list[dict], c: Cells) -> list[GoldenRecord]:
    """DeepEval goldens (`input`, `expected_output`; its `context` and the rest kept in metadata)."""
    return _qa_golden(records, c, "input", "expected_output", set(DEEPEVAL_GOLDEN.known))


def _langfuse_golden(records: list[dict], c: Cells) -> list[GoldenRecord]:
    """Langfuse dataset items (`input`, `expectedOutput`: a text or an object; `status` ACTIVE or ARCHIVED — an
    archived item comes in retired; its `metadata`, trace and timestamps kept in metadata)."""
    known = set(LANGFUSE_GOLDEN.known)
    out = []
    for i, r in enumerate(records, start=1):
        meta = c.extras(r, known, i)
        status = c.text(r, "status", i)
        if status not in (None, "ACTIVE", "ARCHIVED"):
            raise c.fail(f"a Langfuse item's status is ACTIVE or ARCHIVED, got {status!r}", i, "status")
        out.append(GoldenRecord(row=i, id=c.text(r, "id", i),
                                question=_object_text(c, r, "input", i, QUESTION_KEYS, "user", meta) or "",
                                gold_answer=_object_text(c, r, "expectedOutput", i, ANSWER_KEYS, "assistant", meta),
                                gold_chunk_ids=[], slice_tag=c.text(r, "slice_tag", i), metadata=meta,
                                status="retired" if status == "ARCHIVED" else None,
                                given=given_fields(r, known, {"gold_answer": ("expectedOutput",),
                                                              "slice_tag": ("slice_tag",)})))
    return out


def _langsmith_golden(records: list[dict], c: Cells) -> list[GoldenRecord]:
    """LangSmith examples (`inputs`, `outputs`: objects of named values; its `metadata`, split and timestamps kept
    in metadata)."""
    known = set(LANGSMITH_GOLDEN.known)
    out = []
    for i, r in enumerate(records, start=1):
        meta = c.extras(r, known, i)
        out.append(GoldenRecord(row=i, id=c.text(r, "id", i),
                                question=_object_text(c, r, "inputs", i, QUESTION_KEYS, "user", meta) or "",
                                gold_answer=_object_text(c, r, "outputs", i, ANSWER_KEYS, "assistant", meta),
                                gold_chunk_ids=[], slice_tag=c.text(r, "slice_tag", i), metadata=meta,
                                given=given_fields(r, known, {"gold_answer": ("outputs",),
                                                              "slice_tag": ("slice_tag",)})))
    return out


# --- run layouts -------------------------------------------------------------------------------
def _numbers(r: dict, c: Cells, i: int, cost_col: str = "cost_usd") -> dict[str, Any]:
    return dict(latency_ms=c.number(r, "latency_ms", i), cost_usd=c.number(r, cost_col, i),
                prompt_tokens=c.number(r, "prompt_tokens", i, integer=True),
                completion_tokens=c.number(r, "completion_tokens", i, integer=True))


def _plain_text(text: str) -> bool:
    """A passage's text that passes `Cells.check_size` (size, NUL, lone surrogates), in fewer steps."""
    return len(text) <= MAX_CELL_CHARS and "\x00" not in text and (text.isascii() or not _SURROGATE.search(text))


def _plain_passages(items: list[object]) -> list[Passage] | None:
    """The passages of a list whose every item is plain (a checked text, or an object with a text chunk id, a checked
    text, a finite score under 2**63 in magnitude and a true/false or no in_prompt), or None. An orjson reading
    agrees with the json module's wherever this holds: the one value it may misread, an integer beyond 64 bits, came
    as a float that large."""
    out = []
    for item in items:
        if type(item) is str:
            if len(item) > MAX_CELL_CHARS or "\x00" in item or not (item.isascii() or not _SURROGATE.search(item)):
                return None
            out.append(Passage(chunk_id=None, text=item))
            continue
        if type(item) is not dict:
            return None
        cid, text, score, in_prompt = item.get("chunk_id"), item.get("text"), item.get("score"), item.get("in_prompt")
        # (the text's checks are `_plain_text`'s, written out: this runs for every passage)
        if type(cid) is not str or type(text) is not str or len(text) > MAX_CELL_CHARS or "\x00" in text or not (
                text.isascii() or not _SURROGATE.search(text)) or (in_prompt is not None
                                                                    and type(in_prompt) is not bool):
            return None
        if score is not None:
            if type(score) is int:
                score = float(score)
            elif type(score) is not float or not -_BEYOND_INT64 < score < _BEYOND_INT64:
                return None
        out.append(Passage(cid, text, score, in_prompt))
    return out


_BEYOND_INT64 = 2.0 ** 63


@dataclass(slots=True)
class ColumnPassages:
    """A chunk's passages read a column at a time (a Parquet list of structs), laid end to end: the chunk's k-th
    record has the next `counts[k]`, in rank order. Each is one `_plain_passages` takes as it is: a text chunk id, a
    checked text, a finite score under 2**63 in magnitude or none, a true/false in_prompt or none."""
    counts: list[int]
    chunk_ids: list[str]
    texts: list[str]
    scores: list[float | None]
    in_prompt: list[bool | None]


class RunChunk(list):
    """A chunk's records whose passages came apart (`ColumnPassages`): each record's `retrieved` is empty."""

    def __init__(self, records: list[RunRecord], passages: ColumnPassages) -> None:
        super().__init__(records)
        self.passages = passages


_RUN_TEXTS = (("id", False), ("golden_id", False), ("question", True), ("answer", False))
_RUN_NUMBERS = (("latency_ms", False), ("cost_usd", False), ("prompt_tokens", True), ("completion_tokens", True))


def column_run_records(chunk: ArrowChunk) -> RunChunk | None:
    """A native run's Parquet chunk read a column at a time: its records, with their passages apart
    (`ColumnPassages`) — or None unless every cell is one `_native_run` takes as it is (then the chunk is read row
    by row, which reads the rest or words the refusal). A column no layout knows (metadata) goes the long way too."""
    try:
        return _column_run_records(chunk)
    except Exception:  # noqa: BLE001 - a column pyarrow cannot take apart is read the long way, which says why
        return None


def _column_run_records(chunk: ArrowChunk) -> RunChunk | None:
    names = chunk.names
    if len(set(names)) != len(names) or not set(names) <= NATIVE_RUN.known:
        return None
    n = len(chunk)
    columns: list[list] = []
    for name, required in _RUN_TEXTS:
        column = chunk.column(name)
        values = [None] * n if column is None and not required else _plain_texts(column, required)
        if values is None:
            return None
        columns.append(values)
    for name, whole in _RUN_NUMBERS:
        column = chunk.column(name)
        values = [None] * n if column is None else _plain_numbers(column, whole)
        if values is None:
            return None
        columns.append(values)
    retrieved = chunk.column("retrieved")
    passages = None if retrieved is None else _column_passages(retrieved)
    if passages is None:
        return None
    records = [RunRecord(row, external_id, golden_id, question, answer, [], latency, cost, prompt, completion)
               for row, external_id, golden_id, question, answer, latency, cost, prompt, completion
               in zip(range(1, n + 1), *columns, strict=True)]
    return RunChunk(records, passages)


def _plain_texts(column: pa.Array | None, required: bool) -> list | None:
    """A text column's values as `Cells.text` gives them — a text as it is, a whole number as its digits, a missing
    optional cell as None — or None unless every cell is one it takes without a word: not blank, at most
    `MAX_CELL_CHARS`, no NUL, no lone surrogate (UTF-8 is checked), and for a required one, not only invisible."""
    import numpy as np
    import pyarrow as pa

    if column is None or (required and column.null_count):
        return None
    if pa.types.is_integer(column.type):
        return [None if v is None else str(v) for v in column.to_pylist()]
    large = pa.types.is_large_string(column.type)
    if not (large or pa.types.is_string(column.type)):
        return None
    column.validate(full=True)               # (ArrowInvalid: the long way says what is wrong)
    values: list[str | None] = column.to_pylist()
    if not len(values):
        return values
    raw = _bytes_of_sized_texts(column)
    if raw is None:
        return None
    ends = _offsets(column, large)
    seen = np.concatenate(([0], np.cumsum((raw >= 0x21) & (raw <= 0x7E))))      # visible ASCII so far
    plain = seen[ends[1:] - ends[0]] - seen[ends[:-1] - ends[0]]
    for k in np.flatnonzero(plain == 0).tolist():   # no visible ASCII: a blank cell, say, or one in another script
        value = values[k]
        if value is not None and (not value.strip() or (required and not _INVISIBLE.sub("", value))):
            return None
    return values


def _plain_numbers(column: pa.Array, whole: bool) -> list | None:
    """A number column's values as `Cells.number` gives them (a float, or for `whole` an int), or None unless every
    cell is missing or a number it takes: finite, from 0 to `MAX_NUMBER`, and whole where it must be."""
    import pyarrow as pa

    kind = column.type
    floating = pa.types.is_floating(kind) and not pa.types.is_float16(kind)
    if not (floating or pa.types.is_integer(kind)):
        return None
    values = column.to_pylist()
    for value in values:
        if value is not None and not (0 <= value <= MAX_NUMBER and (not whole or not floating or value.is_integer())):
            return None          # (NaN and the infinities fail the range)
    if whole:
        return [None if v is None else int(v) for v in values]
    return [None if v is None else float(v) for v in values]


def _column_passages(values: pa.Array) -> ColumnPassages | None:
    """The passages of a Parquet `retrieved` column (an Arrow list array), checked a column at a time — or None
    unless every item is plain as `_plain_passages` has it. (numpy, not pyarrow.compute: its import and first kernels
    cost more than a chunk takes; an exception here is `column_run_records`' None.)"""
    import numpy as np
    import pyarrow as pa

    if values.null_count or (types := _plain_fields(values.type.value_type)) is None:
        return None                           # (a missing list reads as none: rare enough to go the long way)
    score_type, in_prompt_type = types
    values.validate(full=True)                # UTF-8 throughout, offsets in bounds (ArrowInvalid: the long way)
    ends = _offsets(values, pa.types.is_large_list(values.type))     # (no list is missing: checked above)
    flat = values.values.slice(int(ends[0]), int(ends[-1] - ends[0]))  # (flatten() would import pyarrow.compute)
    if flat.null_count:
        return None                           # a null item: refused the long way, naming it
    chunk_ids, texts = flat.field("chunk_id"), flat.field("text")
    if chunk_ids.null_count or texts.null_count:
        return None                           # a passage without an id goes to the corpus; one without a text
    if _bytes_of_sized_texts(texts) is None:
        return None
    scores = _column_scores(flat, score_type)
    if scores is None:
        return None
    if in_prompt_type is None or pa.types.is_null(in_prompt_type):
        in_prompt: list[bool | None] = [None] * len(flat)
    else:
        in_prompt = flat.field("in_prompt").to_pylist()
    counts = np.diff(ends).tolist()
    return ColumnPassages(counts, chunk_ids.to_pylist(), texts.to_pylist(), scores, in_prompt)


def _plain_fields(items: pa.DataType) -> tuple[pa.DataType | None, pa.DataType | None] | None:
    """A passage struct's score and in_prompt types when its fields are plain (chunk_id and text strings, each
    field named once, a score a number, in_prompt a boolean; either may be absent or null) — else None."""
    import pyarrow as pa

    if not pa.types.is_struct(items):
        return None
    names = [items.field(k).name for k in range(items.num_fields)]
    if any(names.count(name) > 1 for name in ("chunk_id", "text", "score", "in_prompt")):
        return None                           # a field named twice: which one a dict keeps is the long way's
    fields = {items.field(k).name: items.field(k).type for k in range(items.num_fields)}
    for name in ("chunk_id", "text"):
        if name not in fields or not (pa.types.is_string(fields[name]) or pa.types.is_large_string(fields[name])):
            return None
    score_type, in_prompt_type = fields.get("score"), fields.get("in_prompt")
    if score_type is not None and not (pa.types.is_floating(score_type) and not pa.types.is_float16(score_type)
                                       or pa.types.is_integer(score_type) or pa.types.is_null(score_type)):
        return None
    if in_prompt_type is not None and not (pa.types.is_boolean(in_prompt_type) or pa.types.is_null(in_prompt_type)):
        return None
    return score_type, in_prompt_type


def _column_scores(flat: pa.StructArray, score_type: pa.DataType | None) -> list[float | None] | None:
    """The passages' scores as floats (None where missing), or None when one is beyond int64's range (or NaN)."""
    import numpy as np
    import pyarrow as pa

    if score_type is None or pa.types.is_null(score_type):
        return [None] * len(flat)
    column = flat.field("score")
    scores: list[float | None] = column.to_pylist()
    if pa.types.is_integer(score_type):
        return [None if v is None else float(v) for v in scores]
    if column.null_count:
        return scores if all(v is None or -_BEYOND_INT64 < v < _BEYOND_INT64 for v in scores) else None
    if len(column):      # (as `_offsets` reads its buffer)
        floats = np.frombuffer(column.buffers()[1], dtype=score_type.to_pandas_dtype())
        if not (np.abs(floats[column.offset:column.offset + len(column)]) < _BEYOND_INT64).all():  # NaN: False
            return None
    return scores


def _bytes_of_sized_texts(texts: pa.Array) -> NDArray[np.uint8] | None:
    """A (validated) string array's bytes, from its first text's to its last's — or None if a text is over
    `MAX_CELL_CHARS` or holds a NUL. (Its bytes are checked: a text's characters are at most its bytes.)"""
    import numpy as np
    import pyarrow as pa

    ends = _offsets(texts, pa.types.is_large_string(texts.type))
    if len(texts) and int(np.diff(ends).max()) > MAX_CELL_CHARS:
        return None
    data = texts.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8)[ends[0]:ends[-1]] if data is not None else np.zeros(0, np.uint8)
    return None if (raw == 0).any() else raw


def _offsets(array: pa.Array, large: bool) -> NDArray[np.generic]:
    """An Arrow string or list array's offsets (its items' ends, one more than its length) as numpy reads its
    buffer (`to_numpy()` would import pandas)."""
    import numpy as np

    ends = np.frombuffer(array.buffers()[1], dtype=np.int64 if large else np.int32)
    return ends[array.offset:array.offset + len(array) + 1]


def _passages_native(r: dict, c: Cells, i: int) -> list[Passage]:
    # the common list is read once, by orjson alone (`_plain_passages`); any other is read again exactly and item
    # by item, through the checks that word a refusal
    quick = _plain_passages(c.listing(r, "retrieved", i, exact=False))
    if quick is not None:
        return quick
    out = []
    for n, item in enumerate(c.listing(r, "retrieved", i), start=1):
        if isinstance(item, str):
            c.check_size(item, i, f"retrieved[{n}]")
            out.append(Passage(chunk_id=None, text=item))
            continue
        if isinstance(item, dict):  # well-typed items skip the per-field checks below
            cid, text, score, in_prompt = (item.get("chunk_id"), item.get("text"), item.get("score"),
                                           item.get("in_prompt"))
            score_ok = score is None or (type(score) in (float, int) and math.isfinite(score))
            if (type(cid) is str and type(text) is str and _plain_text(text) and score_ok
                    and (in_prompt is None or type(in_prompt) is bool)):
                out.append(Passage(cid, text, None if score is None else float(score), in_prompt))
                continue
        # a passage with neither a chunk id nor a text is refused however it is spelt: `{}` in JSON, or a Parquet
        # struct whose fields are all null (it was accepted from Parquet and refused from JSONL)
        if not isinstance(item, dict) or all(c.missing(item.get(k)) for k in ("chunk_id", "text")):
            raise c.fail(f"retrieved item {n} must be an object with chunk_id and/or text, got "
                         f"{str(item)[:40]!r}", i, "retrieved")
        probe = {"chunk_id": item.get("chunk_id"), "text": item.get("text"), "score": item.get("score"),
                 "in_prompt": item.get("in_prompt")}
        col = f"retrieved[{n}]"
        in_prompt = probe["in_prompt"]
        if in_prompt is not None and not isinstance(in_prompt, bool):
            raise c.fail(f"in_prompt must be true or false, got {in_prompt!r}", i, col)
        out.append(Passage(chunk_id=_id_or_none(c, probe, "chunk_id", i, col),
                           text=_text_or_none(c, probe, i, col),
                           score=c.number(probe, "score", i, minimum=None), in_prompt=in_prompt))
    return out


def _id_or_none(c: Cells, probe: dict, key: str, i: int, col: str) -> str | None:
    value = probe.get(key)
    if c.missing(value):
        return None
    if isinstance(value, (dict, list, bool)):
        raise c.fail(f"{key} must be text or a number, got {type(value).__name__}", i, col)
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _text_or_none(c: Cells, probe: dict, i: int, col: str) -> str | None:
    value = probe.get("text")
    if c.missing(value):
        return None
    if not isinstance(value, str):
        raise c.fail(f"text must be a string, got {type(value).__name__}", i, col)
    c.check_size(value, i, col)
    return value


def _native_run(records: list[dict], c: Cells) -> list[RunRecord]:
    known = set(NATIVE_RUN.known)
    return [RunRecord(
        row=i, external_id=c.text(r, "id", i), golden_id=c.text(r, "golden_id", i),
        question=c.text(r, "question", i, required=True), answer=c.text(r, "answer", i),
        retrieved=_passages_native(r, c, i), metadata=c.extras(r, known, i), **_numbers(r, c, i))
        for i, r in enumerate(records, start=1)]


def _zip_passages(ids: list[str], texts: list[str], c: Cells, i: int, col: str) -> list[Passage]:
    if ids and texts and len(ids) != len(texts):
        raise c.fail(f"{len(ids)} context ids but {len(texts)} contexts", i, col)
    n = max(len(ids), len(texts))
    return [Passage(chunk_id=ids[k] if ids else None, text=texts[k] if texts else None) for k in range(n)]


def _ragas_run(records: list[dict], c: Cells) -> list[RunRecord]:
    known = set(RAGAS_RUN.known)
    out = []
    for i, r in enumerate(records, start=1):
        passages = _zip_passages(c.id_list(r, "retrieved_context_ids", i),
                                 c.text_list(r, "retrieved_contexts", i), c, i, "retrieved_context_ids")
        out.append(RunRecord(
            row=i, external_id=c.text(r, "id", i), golden_id=c.text(r, "golden_id", i),
            question=c.text(r, "user_input", i, required=True), answer=c.text(r, "response", i),
            retrieved=passages, metadata=c.extras(r, known, i), **_numbers(r, c, i)))
    return out


def _cookbook_run(records: list[dict], c: Cells) -> list[RunRecord]:
    known = set(COOKBOOK_RUN.known)
    out = []
    for i, r in enumerate(records, start=1):
        meta = c.extras(r, known, i)
        if not c.missing(r.get("source_doc")):
            meta["source_doc"] = c.text(r, "source_doc", i)
        out.append(RunRecord(
            row=i, external_id=c.text(r, "id", i), golden_id=None,
            question=c.text(r, "question", i, required=True), answer=c.text(r, "generated_answer", i),
            retrieved=[Passage(None, t) for t in c.text_list(r, "retrieved_docs", i)], metadata=meta))
    return out


def _experiment_run(records: list[dict], c: Cells) -> list[RunRecord]:
    """A ragas experiment's results (ragas-examples' evals.py: `question`, `model_response`, `retrieved_documents`,
    the dataset's `expected_answer` and the metric's columns, kept with the row)."""
    known = set(EXPERIMENT_RUN.known)
    return [RunRecord(row=i, external_id=c.text(r, "id", i), golden_id=None,
                      question=c.text(r, "question", i, required=True), answer=c.text(r, "model_response", i),
                      retrieved=[Passage(None, t) for t in c.text_list(r, "retrieved_documents", i)],
                      metadata=c.extras(r, known - {"expected_answer"}, i))
            for i, r in enumerate(records, start=1)]


def _deepeval_run(records: list[dict], c: Cells, names: dict[str, str] | None = None) -> list[RunRecord]:
    """DeepEval test cases (`input`, `actual_output`, `retrieval_context`, `completion_time` in seconds,
    `token_cost`) — or, with `names`, a test run's own camelCase keys."""
    n = names or {}
    key = {k: n.get(k, k) for k in ("input", "actual_output", "retrieval_context", "completion_time", "token_cost",
                                     "name")}
    known = set(DEEPEVAL_TEST_RUN.known if names else DEEPEVAL_RUN.known)
    out = []
    for i, r in enumerate(records, start=1):
        seconds = c.number(r, key["completion_time"], i)
        out.append(RunRecord(
            row=i, external_id=c.text(r, "id", i) or c.text(r, key["name"], i), golden_id=None,
            question=c.text(r, key["input"], i, required=True), answer=c.text(r, key["actual_output"], i),
            retrieved=[Passage(None, t) for t in c.text_list(r, key["retrieval_context"], i)],
            latency_ms=None if seconds is None else seconds * 1000.0, cost_usd=c.number(r, key["token_cost"], i),
            metadata=c.extras(r, known - {"expected_output", "expectedOutput"}, i)))
    return out


def _deepeval_test_run(records: list[dict], c: Cells) -> list[RunRecord]:
    return _deepeval_run(records, c, {"input": "input", "actual_output": "actualOutput",
                                      "retrieval_context": "retrievalContext", "completion_time": "completionTime",
                                      "token_cost": "tokenCost", "name": "name"})


def _open_rag_eval(records: list[dict], c: Cells) -> list[RunRecord]:
    """One row per passage; the answer sits on the first row of each (query_id, query_run) group. Each query_run
    of a query is a row of its own (id `query_6#run2`), and metrics average a question's runs (rowdata)."""
    groups: dict[tuple[str, str], RunRecord] = {}
    runs_per_query: dict[str, set[str]] = {}
    for i, r in enumerate(records, start=1):
        qid = c.text(r, "query_id", i, required=True)
        qrun = c.text(r, "query_run", i) or "1"
        question = c.text(r, "query", i, required=True)
        key = (qid, qrun)
        rec = groups.get(key)
        if rec is None:
            rec = groups[key] = RunRecord(row=i, external_id=qid, golden_id=None, question=question,
                                          answer=None, retrieved=[], metadata={"query_id": qid, "query_run": qrun})
            runs_per_query.setdefault(qid, set()).add(qrun)
        elif rec.question != question:
            raise c.fail(f"query_id {qid} has another question on row {rec.row}", i, "query")
        answer = c.text(r, "generated_answer", i)
        if answer is not None:
            if rec.answer is not None and answer != rec.answer:
                raise c.fail(f"a second, different answer for {qid} (run {qrun})", i, "generated_answer")
            rec.answer = answer
        passage_id, passage = c.text(r, "passage_id", i), c.text(r, "passage", i)
        if passage_id is not None or passage is not None:
            # "[1]", "[2]" number the passages of one query (the answer cites them): not corpus ids, so they
            # are scoped to their query; with a corpus, the passage text finds the real chunk at import
            scoped = None if passage_id is None else f"{qid}:{passage_id}"
            rec.retrieved.append(Passage(chunk_id=scoped, text=passage, scoped=passage_id is not None))
    for (qid, qrun), rec in groups.items():
        if len(runs_per_query[qid]) > 1:
            rec.external_id = f"{qid}#run{qrun}"
    return list(groups.values())


NATIVE_GOLDEN = Layout("native", "golden", ("question",),
                       ("id", "gold_answer", "gold_chunk_ids", "slice_tag", "status", "source"),
                       _native_golden, "question, gold_answer, gold_chunk_ids, slice_tag (+ id)",
                       one_of=("gold_answer", "gold_chunk_ids"))
RAGAS_GOLDEN = Layout("ragas", "golden", ("user_input",),
                      ("id", "reference", "reference_context_ids", "reference_contexts", "slice_tag"),
                      _ragas_golden, "ragas: user_input, reference, reference_context_ids")
COOKBOOK_GOLDEN = Layout("hf-cookbook", "golden", ("question", "answer", "context"),
                         ("id", "source_doc", "slice_tag", "groundedness_score", "relevance_score",
                          "standalone_score"), _cookbook_golden,
                         "HF cookbook eval set: question, answer, context, source_doc")
EXAMPLES_GOLDEN = Layout("ragas-examples", "golden", ("question", "expected_answer"), ("id", "slice_tag"),
                         _examples_golden, "ragas-examples dataset: question, expected_answer")
DEEPEVAL_GOLDEN = Layout("deepeval", "golden", ("input", "expected_output"), ("id", "slice_tag"), _deepeval_golden,
                         "DeepEval goldens: input, expected_output")
INSPECT_GOLDEN = Layout("inspect-ai", "golden", ("input", "target"), ("id", "slice_tag"), _inspect_golden,
                        "inspect-ai dataset: input (text or chat messages), target")
LANGFUSE_GOLDEN = Layout("langfuse", "golden", ("input", "expectedOutput"), ("id", "status", "slice_tag"),
                         _langfuse_golden, "Langfuse dataset items: input, expectedOutput (texts or objects)")
LANGSMITH_GOLDEN = Layout("langsmith", "golden", ("inputs", "outputs"), ("id", "slice_tag"), _langsmith_golden,
                          "LangSmith examples: inputs, outputs (objects)")
NATIVE_RUN = Layout("native", "run", ("question", "answer", "retrieved"),
                    ("id", "golden_id", "latency_ms", "cost_usd", "prompt_tokens", "completion_tokens"),
                    _native_run, "question, answer, retrieved [{chunk_id, text, score}] (+ id, golden_id, ...)")
RAGAS_RUN = Layout("ragas", "run", ("user_input", "response"),
                   ("id", "golden_id", "retrieved_contexts", "retrieved_context_ids", "reference",
                    "reference_context_ids", "reference_contexts", "latency_ms", "cost_usd", "prompt_tokens",
                    "completion_tokens"), _ragas_run,
                   "ragas: user_input, response, retrieved_contexts, retrieved_context_ids")
OPEN_RAG_EVAL = Layout("open-rag-eval", "run", ("query_id", "query", "passage_id", "passage", "generated_answer"),
                       ("query_run",), _open_rag_eval,
                       "open-rag-eval CSV: query_id, query, [query_run], passage_id, passage, generated_answer")
COOKBOOK_RUN = Layout("hf-cookbook", "run", ("question", "generated_answer", "retrieved_docs"),
                      ("id", "true_answer", "source_doc"), _cookbook_run,
                      "HF cookbook test output: question, generated_answer, retrieved_docs")

EXPERIMENT_RUN = Layout("ragas-experiment", "run", ("question", "model_response"),
                        ("id", "expected_answer", "retrieved_documents"), _experiment_run,
                        "ragas experiment results: question, model_response, retrieved_documents")

DEEPEVAL_RUN = Layout("deepeval", "run", ("input", "actual_output"),
                      ("id", "name", "expected_output", "retrieval_context", "completion_time", "token_cost"),
                      _deepeval_run, "DeepEval test cases: input, actual_output, retrieval_context")
DEEPEVAL_TEST_RUN = Layout("deepeval-test-run", "run", ("input", "actualOutput"),
                           ("id", "name", "expectedOutput", "retrievalContext", "completionTime", "tokenCost"),
                           _deepeval_test_run, "DeepEval test run: testCases of input, actualOutput, retrievalContext")

LAYOUTS: dict[str, tuple[Layout, ...]] = {
    # most specific first: detection takes the first layout whose required columns are all present
    "golden": (RAGAS_GOLDEN, COOKBOOK_GOLDEN, EXAMPLES_GOLDEN, DEEPEVAL_GOLDEN, INSPECT_GOLDEN, LANGFUSE_GOLDEN,
               LANGSMITH_GOLDEN, NATIVE_GOLDEN),
    "run": (OPEN_RAG_EVAL, RAGAS_RUN, COOKBOOK_RUN, EXPERIMENT_RUN, DEEPEVAL_RUN, DEEPEVAL_TEST_RUN, NATIVE_RUN),
}


SYNONYMS = {"question": ("query", "prompt", "input", "user_input", "q"),
            "gold_answer": ("answer", "reference", "expected", "expected_answer", "expected_output", "target",
                            "ground_truth", "truth"),
            "gold_chunk_ids": ("chunk_ids", "gold_ids", "relevant_ids", "doc_ids", "reference_context_ids"),
            "slice_tag": ("slice", "category", "tag", "type", "bucket"),
            "answer": ("response", "output", "generated_answer", "prediction", "model_response", "actual_output"),
            "retrieved": ("contexts", "passages", "retrieved_contexts", "documents", "retrieved_documents",
                          "retrieval_context"),
            "golden_id": ("gold_id", "qid", "question_id", "query_id")}


def suggest(columns: list[str], layout: Layout) -> dict[str, str]:
    """File column -> layout column, for columns the layout does not know whose name looks like one it needs."""
    unknown = [c for c in columns if c not in layout.known]
    free = [t for t in (*layout.required, *layout.optional) if t not in columns]
    out: dict[str, str] = {}
    for target in free:
        names = {target, *SYNONYMS.get(target, ())}
        match = next((c for c in unknown if c.lower().strip() in names and c not in out), None)
        if match is None and len(target) > 4:   # fuzzy only for names long enough to mean something
            close = difflib.get_close_matches(target, [c for c in unknown if c not in out], n=1, cutoff=0.8)
            match = close[0] if close else None
        if match is not None:
            out[match] = target
    return out


def parse_mapping(spec: str | None) -> dict[str, str]:
    """'question=query,gold_answer=expected' -> {'query': 'question', 'expected': 'gold_answer'}."""
    if not spec:
        return {}
    mapping = {}
    for part in spec.split(","):
        if "=" not in part:
            raise ImportFailed(f"column mapping '{part}' must look like target=source")
        target, source = (s.strip() for s in part.split("=", 1))
        if not target or not source:
            raise ImportFailed(f"column mapping '{part}' must look like target=source")
        mapping[source] = target
    return mapping


def choose_layout(kind: str, columns: list[str], forced: str | None, file: str) -> Layout:
    layouts = LAYOUTS[kind]
    present = set(columns)
    if forced:
        matches = [lay for lay in layouts if lay.name == forced]
        if not matches:
            names = ", ".join(lay.name for lay in layouts)
            raise ImportFailed(f"unknown {kind} format '{forced}'; choose one of: {names}", file=file)
        layout = matches[0]
        missing = layout.missing(present)
        if missing:
            raise ImportFailed(f"missing required column(s) for the {layout.name} {kind} format: "
                               f"{', '.join(missing)} (found: {', '.join(columns)})", file=file)
        return layout
    for layout in layouts:
        if not layout.missing(present):
            return layout
    wanted = "; ".join(lay.description for lay in layouts)
    would = _would_map(layouts, columns)
    raise ImportFailed(f"missing required columns: no {kind} format matches the columns "
                       f"{', '.join(columns)}. Expected one of: {wanted}", file=file,
                       cli_hint=(f"--map {would} would read it" if would else "Use --map target=source to rename "
                                 "columns") + ", or --format to choose a format",
                       gui_hint="Map the file's columns in the import dialog, or choose the format there")


def _would_map(layouts: tuple[Layout, ...], columns: list[str]) -> str | None:
    """The --map (target=source,...) that makes the first layout match, from the columns' names (`suggest`)."""
    for layout in layouts:
        mapping = suggest(columns, layout)
        if mapping and not layout.missing({mapping.get(c, c) for c in columns}):
            return ",".join(f"{target}={source}" for source, target in mapping.items())
    return None
