"""Pairwise review packs: a pair sample rated without a server, as score packs are (core.review.packs).

`export_pair_packs` writes, per reviewer, a small SQLite file (application id 'RGPP', the suffix of every review pack)
holding the pair sample's pairs as the desk shows them — the question, the reference answer, the left and the right
answer — and nothing that says which run wrote which side: that stays in the project. Every reviewer gets every pair
(the reviewers' majority decides a pair). The reviewer opens the pack in the app (`PairPack`: the Pairwise page's card
and keys; each rating its own transaction, undo withdraws) and sends it back. `import_pair_packs` turns each rating's
side into the runs' preference with the project's own record of the sides, in one transaction for all the files. A
pack is trusted for nothing but its ratings: its id must be one this project exported to that reviewer, its pairs
must hash to what was exported, every rating must name one of its pairs with a side; anything else refuses every
file and leaves the project as it was. Importing the same pack again adds nothing (a rating withdrawn in the pack
since is withdrawn in the project too).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.review.packs import (
    SUFFIX,
    PackRefused,
    cell_text,
    check_header,
    check_schema,
    checked_time,
    connect_pack,
    merge_pack,
    pack_paths,
    prepare_pack,
    project_uuid,
)
from rageval_desktop.core.review.pairwise import PairItem, PairSample, pair_items, pair_samples
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

PAIR_PACK_APPLICATION_ID = 0x52475050   # 'RGPP'
PAIR_PACK_FORMAT = 1
SIDES = ("left", "right", "tie")
MAX_RATINGS = 100_000                   # more than this is not a person rating

PAIR_PACK_SCHEMA = """
CREATE TABLE pack_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pack_pairs (
    position  INTEGER PRIMARY KEY,
    question  TEXT NOT NULL,
    reference TEXT,
    left      TEXT NOT NULL,
    right     TEXT NOT NULL
);
CREATE TABLE pack_pair_ratings (
    id            INTEGER PRIMARY KEY,
    position      INTEGER NOT NULL,
    side          TEXT,
    skipped       INTEGER NOT NULL DEFAULT 0,
    seconds_taken REAL,
    created_at    TEXT NOT NULL,
    withdrawn_at  TEXT
);
"""
COLUMNS = {"pack_meta": frozenset({"key", "value"}),
           "pack_pairs": frozenset({"position", "question", "reference", "left", "right"}),
           "pack_pair_ratings": frozenset({"id", "position", "side", "skipped", "seconds_taken", "created_at",
                                           "withdrawn_at"})}


@dataclass(frozen=True)
class PairPackInfo:
    path: str
    pack_id: str
    reviewer: str
    pairs: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def fingerprint(pairs: Sequence[tuple[int, str, str | None, str, str]]) -> str:
    return hashlib.sha256(json.dumps([list(p) for p in pairs], ensure_ascii=False).encode()).hexdigest()


def _shown(items: list[PairItem]) -> list[tuple[int, str, str | None, str, str]]:
    return [(i.position, i.question, i.reference, *i.sides()) for i in items]


def export_pair_packs(project: Project, sample_id: int, reviewers: Sequence[str],
                      out: str | Path) -> list[PairPackInfo]:
    """One pack per reviewer, each with every pair of the sample; refuses to overwrite a file (it may hold ratings)."""
    names = list(dict.fromkeys(r.strip() for r in reviewers if r and r.strip()))
    if not names:
        raise RagevalError("a pack is made for a reviewer: name at least one", cli_hint="check --reviewer")
    shown = _shown(pair_items(project, sample_id))
    paths = pack_paths(Path(out), sample_id, names)
    paths = {n: p.with_name(p.name.replace(f"sample{sample_id}-", f"pairs{sample_id}-")) for n, p in paths.items()}
    for path in paths.values():
        if path.exists():
            raise RagevalError(f"{path}: already exists (it may hold a reviewer's ratings); choose another name")
    if Path(out).suffix != SUFFIX:
        Path(out).mkdir(parents=True, exist_ok=True)
    elif not Path(out).parent.exists():
        raise RagevalError(f"{Path(out).parent}: no such folder")
    made: list[PairPackInfo] = []
    digest = fingerprint(shown)
    with project.write("export pairwise packs", changed=(Area.REVIEW,)) as conn:
        pid = project_uuid(project, conn) or str(uuid.uuid4())
        project.set_meta(conn, "project_uuid", pid)
        try:
            for name in names:
                pack_id = str(uuid.uuid4())
                _write(paths[name], shown, {"format": str(PAIR_PACK_FORMAT), "kind": "pairwise", "pack_id": pack_id,
                                            "project_uuid": pid, "project_name": project.meta("name", "") or "",
                                            "pair_sample_id": str(sample_id), "reviewer": name,
                                            "fingerprint": digest, "created_at": utcnow()})
                conn.execute("INSERT INTO pair_packs (id, sample_id, reviewer, pairs, fingerprint, file_name, "
                             "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (pack_id, sample_id, name, len(shown), digest, paths[name].name, utcnow()))
                made.append(PairPackInfo(str(paths[name]), pack_id, name, len(shown)))
            project.audit(conn, "export pairwise packs", "pair_sample", str(sample_id), reviewers=names,
                          packs=[m.pack_id for m in made])
        except BaseException:
            for info in made:            # the export is recorded with its files or not at all
                Path(info.path).unlink(missing_ok=True)
            raise
    return made


def _write(path: Path, shown: list[tuple[int, str, str | None, str, str]], meta: dict[str, str]) -> None:
    part = Path(f"{path}.part")
    part.unlink(missing_ok=True)
    out = sqlite3.connect(part, isolation_level=None)
    try:
        out.execute(f"PRAGMA application_id = {PAIR_PACK_APPLICATION_ID}")
        out.execute(f"PRAGMA user_version = {PAIR_PACK_FORMAT}")
        out.execute("BEGIN")
        for statement in PAIR_PACK_SCHEMA.split(";"):
            if statement.strip():
                out.execute(statement)
        out.executemany("INSERT INTO pack_meta (key, value) VALUES (?, ?)", meta.items())
        out.executemany("INSERT INTO pack_pairs VALUES (?, ?, ?, ?, ?)", shown)
        out.execute("COMMIT")
    finally:
        out.close()
    os.replace(part, path)


def is_pair_pack(path: str | Path) -> bool:
    """A file whose header says it is a pairwise pack (read paths write nothing: the header is read as bytes)."""
    try:
        with Path(path).open("rb") as fh:
            header = fh.read(100)
    except OSError:
        return False
    return len(header) == 100 and header.startswith(b"SQLite format 3\x00") and \
        int.from_bytes(header[68:72], "big") == PAIR_PACK_APPLICATION_ID


class PairPack:
    """An open pairwise pack: its pairs as the desk shows them (left is 'a', right is 'b' here: the pack does not
    know the runs) and the ratings saved in it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_header(self.path, PAIR_PACK_APPLICATION_ID, PAIR_PACK_FORMAT, "pairwise review pack")
        try:
            conn = connect_pack(self.path, read_only=True)
            try:
                check_schema(conn, self.path.name, COLUMNS, "pairwise review pack")
                self.meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM pack_meta")}
                rows = conn.execute("SELECT position, question, reference, left, right FROM pack_pairs "
                                    "ORDER BY position").fetchall()
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise PackRefused(f"{self.path.name}: the file is damaged ({exc})") from None
        if missing := [k for k in ("pack_id", "project_uuid", "pair_sample_id", "reviewer", "fingerprint")
                       if not self.meta.get(k)]:
            raise PackRefused(f"{self.path.name}: not a complete pairwise pack (no {', '.join(missing)})")
        if not self.meta["pair_sample_id"].isdigit():
            raise PackRefused(f"{self.path.name}: the pack's sample id is damaged")
        if any(not isinstance(p, int) for p, *_ in rows):
            raise PackRefused(f"{self.path.name}: a pair's position is damaged")
        self.pairs = [(int(p), cell_text(q) or "", cell_text(ref), cell_text(left) or "", cell_text(right) or "")
                      for p, q, ref, left, right in rows]

    @property
    def reviewer(self) -> str:
        return self.meta["reviewer"]

    def sample(self) -> PairSample:
        rated = len({p for p, (side, _) in self._standing().items() if side != "skip"})
        return PairSample(int(self.meta["pair_sample_id"]), "", "", len(self.pairs), rated,
                          self.meta.get("created_at", ""))

    def _standing(self) -> dict[int, tuple[str, int]]:
        """position -> (the side said, or 'skip'; the rating's id) of each pair's standing rating."""
        conn = connect_pack(self.path, read_only=True)
        try:
            rows = conn.execute("SELECT position, side, skipped, id FROM pack_pair_ratings WHERE withdrawn_at IS "
                                "NULL ORDER BY id").fetchall()
        finally:
            conn.close()
        return {int(p): ("skip" if skipped else str(side), int(rid)) for p, side, skipped, rid in rows}

    def items(self) -> list[PairItem]:
        """The pairs with this reviewer's standing rating of each, left as 'a' (the pack's own terms)."""
        said = {p: ({"left": "a", "right": "b"}.get(s, s), rid) for p, (s, rid) in self._standing().items()}
        return [PairItem(p, q, left, right, ref, True, *said.get(p, (None, None)))
                for p, q, ref, left, right in self.pairs]

    def rate(self, position: int, preference: str | None, seconds: float | None = None) -> int:
        """A rating saved in the pack ('a' the left answer, 'b' the right, 'tie'; None skipped): it replaces this
        reviewer's earlier one of the pair. Its id."""
        if position not in {p for p, *_ in self.pairs}:
            raise RagevalError(f"{self.path.name}: the pack has no pair {position}")
        side = None if preference is None else {"a": "left", "b": "right", "tie": "tie"}[preference]
        conn = connect_pack(self.path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            now = utcnow()
            conn.execute("UPDATE pack_pair_ratings SET withdrawn_at = ? WHERE position = ? AND withdrawn_at IS NULL",
                         (now, position))
            rid = conn.execute("INSERT INTO pack_pair_ratings (position, side, skipped, seconds_taken, created_at) "
                               "VALUES (?, ?, ?, ?, ?)", (position, side, int(side is None), seconds, now)).lastrowid
            conn.execute("COMMIT")
        finally:
            conn.close()
        return int(rid or 0)

    def withdraw(self, rating_id: int) -> None:
        conn = connect_pack(self.path)
        try:
            conn.execute("UPDATE pack_pair_ratings SET withdrawn_at = ? WHERE id = ? AND withdrawn_at IS NULL",
                         (utcnow(), rating_id))
        finally:
            conn.close()

    def ratings(self) -> list[tuple[int, int, str | None, int, object, object, object]]:
        conn = connect_pack(self.path, read_only=True)
        try:
            rows = conn.execute("SELECT id, position, side, skipped, seconds_taken, created_at, withdrawn_at FROM "
                                "pack_pair_ratings ORDER BY id LIMIT ?", (MAX_RATINGS + 1,)).fetchall()
        finally:
            conn.close()
        if len(rows) > MAX_RATINGS:
            raise PackRefused(f"{self.path.name}: more ratings than a person makes; refused")
        return rows


# --- back in the project ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prepared:
    name: str
    pack_id: str
    reviewer: str
    sample_id: int
    ratings: list[tuple[str, int, str | None, float | None, str, str | None]]   # origin, position, pref, s, at, gone


def _prepare(project: Project, path: str | Path) -> Prepared:
    pack = PairPack(path)
    name, meta = Path(path).name, pack.meta
    if meta["project_uuid"] != project_uuid(project):
        raise PackRefused(f"{name}: this pack comes from another project ({meta.get('project_name') or 'unnamed'})"
                          "; import it into the project it was exported from")
    known = project.reader().execute("SELECT sample_id, reviewer, fingerprint FROM pair_packs WHERE id = ?",
                                     (meta["pack_id"],)).fetchone()
    if known is None:
        raise PackRefused(f"{name}: this project never exported this pack")
    sample_id, reviewer, digest = known
    if sample_id is None or sample_id not in {s.id for s in pair_samples(project)}:
        raise PackRefused(f"{name}: the pair sample this pack was made from no longer exists in the project")
    if reviewer != meta["reviewer"] or fingerprint(pack.pairs) != digest:
        raise PackRefused(f"{name}: the pack was changed after it was exported (its pairs or reviewer); refused")
    left_is_a = {i.position: i.a_left for i in pair_items(project, sample_id)}
    out = []
    for rid, position, side, skipped, seconds, at, gone in pack.ratings():
        if not isinstance(rid, int) or position not in left_is_a:
            raise PackRefused(f"{name}: rating {rid} names no pair of the pack")
        if (side not in SIDES and not skipped) or skipped not in (0, 1):
            raise PackRefused(f"{name}: rating {rid} has no side (left, right or tie)")
        if seconds is not None and not isinstance(seconds, (int, float)):
            raise PackRefused(f"{name}: rating {rid} has a damaged time taken")
        pref = None if skipped else "tie" if side == "tie" else "a" if (side == "left") == left_is_a[position] else "b"
        out.append((f"pairpack:{meta['pack_id']}:{rid}", int(position), pref,
                    None if seconds is None else float(seconds), checked_time(at, name, rid),
                    None if gone is None else checked_time(gone, name, rid)))
    return Prepared(name, meta["pack_id"], reviewer, int(sample_id), out)


def import_review_packs(project: Project, paths: Sequence[str | Path]) -> list[dict[str, object]]:
    """Merge review packs of either kind — score packs (core.review.packs) and pairwise packs — all or nothing across
    the files: every file checked before any is written, all written in one transaction."""
    try:
        prepared = [_prepare(project, p) if is_pair_pack(p) else prepare_pack(project, p) for p in paths]
    except PackRefused as exc:
        if len(paths) > 1:
            raise PackRefused(f"{exc}; none of the {len(paths)} packs was imported") from None
        raise
    with project.write("import review packs", changed=(Area.RATINGS, Area.REVIEW)) as conn:
        return [_merge(conn, item) if isinstance(item, Prepared) else merge_pack(project, conn, item)
                for item in prepared]


def _merge(conn: sqlite3.Connection, item: Prepared) -> dict[str, object]:
    added = known = withdrawn = 0
    for origin, position, pref, seconds, at, gone in item.ratings:
        had = conn.execute("SELECT id, withdrawn_at FROM pair_ratings WHERE origin = ?", (origin,)).fetchone()
        if had is not None:
            known += 1
            if gone is not None and had[1] is None:
                conn.execute("UPDATE pair_ratings SET withdrawn_at = ? WHERE id = ?", (gone, had[0]))
                withdrawn += 1
            continue
        if gone is None:       # the reviewer's newest word on the pair replaces their earlier one, as at the desk
            conn.execute("UPDATE pair_ratings SET withdrawn_at = ? WHERE sample_id = ? AND position = ? AND "
                         "reviewer = ? AND withdrawn_at IS NULL", (at, item.sample_id, position, item.reviewer))
        conn.execute("INSERT INTO pair_ratings (sample_id, position, reviewer, preference, skipped, seconds_taken, "
                     "created_at, withdrawn_at, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (item.sample_id, position, item.reviewer, pref, int(pref is None), seconds, at, gone, origin))
        added += 1
    conn.execute("UPDATE pair_packs SET imported_at = ? WHERE id = ?", (utcnow(), item.pack_id))
    return {"file": item.name, "reviewer": item.reviewer, "pair_sample": item.sample_id, "added": added,
            "already_imported": known, "withdrawn_since": withdrawn, "checks": 0}
