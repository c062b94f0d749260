"""What an import would do, before it does it (the import wizard's pages; nothing is written).

`preview()` reads the file once and answers: its columns and first rows, the layout it matches (or the one it comes
closest to, with the columns still missing), the columns that layout knows, and — when the file converts — a
summary: rows, rows linked to the golden set and not, new slices, warnings. Errors carry the GUI's wording.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.errors import ImportFailed, RagevalError
from rageval_desktop.core.base.text import normalise_question
from rageval_desktop.core.importers.cells import Cells
from rageval_desktop.core.importers.golden_import import LABELS, OPTIONAL_FIELDS, cleared_labels, kept_fields
from rageval_desktop.core.importers.layouts import LAYOUTS, Layout, choose_layout, suggest
from rageval_desktop.core.importers.readers import skipped, stream_records
from rageval_desktop.core.importers.run_reader import golden_index, link_golden
from rageval_desktop.core.store.project import Project

HEAD_ROWS = 8
CORPUS_REQUIRED = ("chunk_id", "text")
CELL_PREVIEW = 80
# names people give the columns a layout needs (lower-case), for suggestions the user can accept or change
@dataclass
class Preview:
    file: str
    kind: str
    columns: list[str]
    head: list[list[str]]
    rows: int
    layout: str | None                 # the layout the (mapped) columns match; None when none matches
    closest: str                       # the layout the file comes closest to (the one to map towards)
    missing: list[str]                 # its required columns still absent
    targets: list[tuple[str, bool]]    # (column the layout knows, required?)
    suggested: dict[str, str]          # file column -> target, where a name looks like one
    summary: dict[str, Any] = field(default_factory=dict)
    error: str | None = None           # why the file cannot be imported as it stands (GUI wording)
    fits: list[str] = field(default_factory=list)   # the kinds whose layouts its columns match as they are


def fits(columns: list[str]) -> list[str]:
    """The kinds a file with these columns is, by its columns alone (run first: a run's layouts need more), so that
    the wizard's first guess is not the file name's (two golden sets were first shown as runs)."""
    present = set(columns)
    out = [kind for kind in ("run", "golden") if any(not lay.missing(present) for lay in LAYOUTS[kind])]
    return out + (["corpus"] if all(c in present for c in CORPUS_REQUIRED) else [])


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    return text if len(text) <= CELL_PREVIEW else text[:CELL_PREVIEW - 1] + "…"


def _closest(kind: str, columns: list[str], forced: str | None) -> Layout:
    """The layout to map towards: fewest required columns missing once the suggestions are taken, then most
    columns known; the native layout on a tie."""
    layouts = LAYOUTS[kind]
    if forced:
        return next((lay for lay in layouts if lay.name == forced), layouts[-1])
    found = next((lay for lay in layouts if not lay.missing(set(columns))), None)
    if found is not None:                # a layout the file matches as it is: the import takes that one
        return found

    def cost(lay: Layout) -> tuple[int, int, bool]:
        after = {suggest(columns, lay).get(c, c) for c in columns}
        return len(lay.missing(after)), -len(lay.known & after), lay.name != "native"

    return min(layouts, key=cost)


def preview(project: Project | None, path: str | Path, kind: str, *, fmt: str | None = None,
            mapping: dict[str, str] | None = None) -> Preview:
    """`mapping`: file column -> layout column (what the wizard's drop-downs say). The whole file is read and
    checked, a chunk at a time (the columns are the first chunk's): a file of any size previews in bounded memory."""
    import itertools

    if kind not in (*LAYOUTS, "corpus"):
        raise RagevalError(f"a preview is for a golden set, a run or a corpus, not {kind!r}")
    path = Path(path)
    notes: dict[str, int] = {}
    chunks = stream_records(path, progress=notes)    # a file that cannot be read raises, with file/row/column
    first = next(chunks)
    columns = list(dict.fromkeys(key for row in first for key in row))
    head = [[_cell(r.get(c)) for c in columns] for r in first[:HEAD_ROWS]]
    kinds = fits(columns)
    if kind == "corpus":
        missing = [c for c in CORPUS_REQUIRED if c not in columns]
        rows = len(first) + sum(len(chunk) for chunk in chunks)
        return Preview(file=path.name, kind=kind, columns=columns, head=head, rows=rows,
                       layout=None if missing else "corpus", closest="corpus", missing=missing,
                       targets=[(c, True) for c in CORPUS_REQUIRED] + [(c, False) for c in ("doc_id", "position")],
                       suggested={}, summary={} if missing else {"rows": rows, "new_slices": []},
                       error=f"a corpus needs the column(s) {', '.join(missing)}" if missing else None, fits=kinds)
    mapping = {k: v for k, v in (mapping or {}).items() if v and k in columns}
    mapped_columns = [mapping.get(c, c) for c in columns]
    present = set(mapped_columns)
    closest = _closest(kind, mapped_columns, fmt)
    out = Preview(file=path.name, kind=kind, columns=columns, head=head, rows=len(first),
                  layout=None, closest=closest.name, missing=closest.missing(present),
                  targets=[(t, True) for t in closest.required] + [(t, False) for t in closest.optional],
                  suggested=suggest(columns, closest), fits=kinds)
    try:
        layout = choose_layout(kind, mapped_columns, fmt, path.name)
    except ImportFailed as exc:
        out.rows += sum(len(chunk) for chunk in chunks)
        out.error = exc.for_gui()
        return out
    out.layout = layout.name
    cells = Cells(path.name)
    tally = _Tally(project, kind)
    everything: Iterator[list[dict[str, Any]]] = itertools.chain([first], chunks)
    if layout.name == "open-rag-eval":           # one row per passage: its records span chunks
        everything = iter([[row for chunk in everything for row in chunk]])
    rows = 0
    try:
        for chunk in everything:
            cells.offset = rows
            rows += len(chunk)
            tally.add(layout.convert([{mapping.get(k, k): v for k, v in r.items()} for r in chunk], cells))
    except ImportFailed as exc:
        out.rows = rows + sum(len(chunk) for chunk in chunks)
        out.error = exc.for_gui()
        return out
    out.rows = rows
    out.summary = tally.summary() | {"warnings": [*cells.warnings, *skipped(notes)]}
    return out


class _Tally:
    """What the import would do, counted a chunk at a time."""

    def __init__(self, project: Project | None, kind: str) -> None:
        self.kind, self.records, self.linked = kind, 0, 0
        self.tags: set[str] = set()
        self.slices_have: set[str] = set()
        self.index: Any = None
        self.kept: set[str] = set()
        self.clears: dict[str, int] = {}
        self.stored: dict[str, dict[str, Any]] = {}
        self.by_question: dict[str, str] = {}
        if project is not None:
            self.slices_have = {r[0] for r in project.reader().execute("SELECT name FROM slices")}
            if kind != "golden":
                self.index = golden_index(project.reader())
            else:   # what an update would clear: the stored labels, by id and by question
                for gid, norm, answer, ids, tag in project.reader().execute(
                        "SELECT id, question_norm, gold_answer, gold_chunk_ids, slice_tag FROM golden_rows "
                        "ORDER BY created_at, id"):
                    self.stored[gid] = {"gold_answer": answer, "gold_chunk_ids": json.loads(ids), "slice_tag": tag}
                    self.by_question.setdefault(norm, gid)

    def add(self, records: list) -> None:
        self.records += len(records)
        if self.kind == "golden":
            self.tags |= {r.slice_tag for r in records if getattr(r, "slice_tag", None)}
            self.kept |= set(kept_fields(records))
            for rec in records:
                gid = rec.id or self.by_question.get(normalise_question(rec.question))
                stored = self.stored.get(gid) if gid else None
                if stored is None:
                    continue
                new = {f: getattr(rec, f) if f in rec.given else stored[f] for f in LABELS}
                if not new["gold_chunk_ids"] and rec.gold_context:
                    new["gold_chunk_ids"] = ["(from its context)"]   # the import looks the context up
                for label in cleared_labels(stored, new):
                    self.clears[label] = self.clears.get(label, 0) + 1
        elif self.index is not None:

            self.linked += sum(1 for rec in records if link_golden(rec, *self.index))

    def summary(self) -> dict[str, Any]:
        if self.kind == "golden":
            return {"rows": self.records, "new_slices": sorted(self.tags - self.slices_have),
                    "kept": [f for f in OPTIONAL_FIELDS if f in self.kept], "clears": dict(self.clears)}
        return {"rows": self.records, "linked": self.linked, "unlinked": self.records - self.linked,
                "new_slices": []}
