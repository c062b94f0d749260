"""Review packs: a team reviews without a server.

`export_packs` writes, per reviewer, a small SQLite file of its own kind (application id 'RGPK') holding exactly
what that reviewer rates: the sample's targets assigned to them (with `overlap` K, each row goes to K reviewers,
round robin, so the load is even), the rows' questions, answers, reference answers and passages, the metric's
human scale and the project's guidelines. No judge verdicts, no latency or cost, no other runs, no keys.

The reviewer opens the pack in the app (`Pack`: the same review card; each rating its own transaction, undo
withdraws) and sends the file back. `import_pack` merges the ratings with their provenance — reviewer, the time
each was made, `origin` 'pack:<id>:<n>' — in one transaction. A pack is trusted for nothing but its ratings:
its id must be one this project exported, its targets must hash to what was exported, every rating must name one
of them on the metric's scale; anything else refuses the whole pack and leaves the project as it was. Importing
the same pack again adds nothing (a rating withdrawn since is withdrawn in the project too).

Reviewers are checked in packs as at the desk (core.review.quality): each pack hides gold items (targets settled
without its reviewer) and retests (targets the reviewer rated before, outside this sample) among the sample's
targets, at the project's check rates. Which positions are checks, and what they expect, stays in the project
(`review_pack_checks`), never in the file: the reviewer cannot tell them apart. On import their answers become the
reviewer's checks (one per position, the latest answer), never ratings: no audit, metric or sample counts them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import re
import sqlite3
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.vocab import METRICS
from rageval_desktop.core.review import quality
from rageval_desktop.core.review.guidelines import HumanRubric, ScalePoint, guidelines, human_rubric
from rageval_desktop.core.review.ratings import Rating, apply_holds, check_score
from rageval_desktop.core.review.sampling import Sample, get_sample
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project, inserted_id
from rageval_desktop.core.store.queries import Passage, RowDetail

PACK_APPLICATION_ID = 0x5247504B   # 'RGPK'
PACK_FORMAT = 1
SUFFIX = ".ragevalpack"
MAX_PACK_BYTES = 512 * 1024 * 1024
MAX_COMMENT = 10_000
MAX_RATINGS_PER_TARGET = 100       # re-ratings kept in a pack's history; more than this is not a person rating

PACK_SCHEMA = """
CREATE TABLE pack_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pack_rows (
    run_row_id     INTEGER PRIMARY KEY,
    external_id    TEXT,
    question       TEXT NOT NULL,
    answer         TEXT,
    gold_answer    TEXT,
    gold_chunk_ids TEXT NOT NULL DEFAULT '[]',
    slice_tag      TEXT,
    golden_id      TEXT
);
CREATE TABLE pack_passages (
    run_row_id INTEGER NOT NULL,
    rank       INTEGER NOT NULL,
    chunk_id   TEXT,
    text       TEXT NOT NULL,
    PRIMARY KEY (run_row_id, rank)
);
CREATE TABLE pack_targets (
    position   INTEGER PRIMARY KEY,
    run_row_id INTEGER NOT NULL,
    item       INTEGER NOT NULL,
    item_key   TEXT
);
CREATE TABLE pack_ratings (
    id            INTEGER PRIMARY KEY,
    position      INTEGER NOT NULL,
    score         REAL,
    skipped       INTEGER NOT NULL DEFAULT 0,
    comment       TEXT,
    seconds_taken REAL,
    created_at    TEXT NOT NULL,
    withdrawn_at  TEXT
);
"""
TABLES = ("pack_meta", "pack_rows", "pack_passages", "pack_targets", "pack_ratings")


class PackRefused(RagevalError):
    """The file is not a pack this project can take; nothing was changed."""


@dataclass(frozen=True)
class PackInfo:
    path: str
    pack_id: str
    reviewer: str
    targets: int
    rows: int
    checks: int = 0          # of the targets, hidden gold items and retests (the lead knows; the reviewer does not)
    gold: int = 0            # of the checks, gold items
    retests: int = 0         # of the checks, retests

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "pack_id": self.pack_id, "reviewer": self.reviewer, "targets": self.targets,
                "rows": self.rows, "checks": self.checks, "gold": self.gold, "retests": self.retests}

    def hidden(self) -> str:
        """The checks hidden among its targets, in words (empty when none)."""
        if not self.checks:
            return ""
        parts = [f"{n} {what}{'' if n == 1 else 's'}" for n, what in ((self.gold, "gold item"),
                                                                    (self.retests, "retest")) if n]
        return " and ".join(parts) + " hidden among them"


def project_uuid(project: Project, conn: sqlite3.Connection | None = None) -> str | None:
    """The project's own random id (made at its first pack export): a pack names the project it came from."""
    if conn is not None:
        found = conn.execute("SELECT value FROM meta WHERE key = 'project_uuid'").fetchone()
        return found[0] if found else None
    return project.meta("project_uuid")


def assign(rows: Sequence[int], reviewers: Sequence[str], overlap: int) -> dict[str, list[int]]:
    """Rows per reviewer: row i goes to reviewers (i*K + j) mod R for j < K — K different reviewers per row, and
    every reviewer within one row of the same load."""
    if not reviewers:
        raise RagevalError("name at least one reviewer")
    if len(set(reviewers)) != len(reviewers):
        raise RagevalError("a reviewer is named twice")
    if not 1 <= overlap <= len(reviewers):
        raise RagevalError(f"each row can go to 1 to {len(reviewers)} of the {len(reviewers)} reviewer(s) named, "
                           f"not {overlap}", cli_hint="check --overlap")
    out: dict[str, list[int]] = {name: [] for name in reviewers}
    for i, row in enumerate(rows):
        for j in range(overlap):
            out[reviewers[(i * overlap + j) % len(reviewers)]].append(row)
    return out


@functools.cache
def _columns() -> dict[str, frozenset[str]]:
    """Each table's columns, as the pack's schema makes them."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(PACK_SCHEMA)
        return {t: frozenset(r[1] for r in conn.execute(f"PRAGMA table_info({t})")) for t in TABLES}
    finally:
        conn.close()


def fingerprint(found: Sequence[tuple[int, int, str | None]]) -> str:
    return hashlib.sha256(json.dumps([list(t) for t in found], ensure_ascii=False).encode()).hexdigest()


def _safe_name(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "reviewer"


def pack_paths(out: Path, sample_id: int, reviewers: Sequence[str]) -> dict[str, Path]:
    """One reviewer and a file name: that file. Otherwise `out` is a folder (made if missing), one
    `sample<S>-<name>.ragevalpack` per reviewer."""
    if len(reviewers) == 1 and out.suffix == SUFFIX:
        return {reviewers[0]: out}
    if out.suffix == SUFFIX:
        raise RagevalError(f"{len(reviewers)} reviewers' packs go in a folder, not in the one file {out.name}",
                           cli_hint="give a folder with --out")
    return {name: out / f"sample{sample_id}-{_safe_name(name)}{SUFFIX}" for name in reviewers}


def export_packs(project: Project, sample_id: int, reviewers: Sequence[str], out: str | Path,
                 overlap: int = 1) -> list[PackInfo]:
    """Write one pack per reviewer (see the module's doc); refuses to overwrite a file (it may hold ratings)."""
    reviewers = [r.strip() for r in reviewers if r and r.strip()]
    sample = get_sample(project, sample_id)
    order = list(dict.fromkeys(sample.row_ids))
    given = assign(order, reviewers, overlap)
    paths = pack_paths(Path(out), sample_id, reviewers)
    for path in paths.values():
        if path.exists():
            raise RagevalError(f"{path}: already exists (it may hold a reviewer's ratings); choose another name")
    if Path(out).suffix == SUFFIX:
        if not Path(out).parent.exists():
            raise RagevalError(f"{Path(out).parent}: no such folder")
    else:
        Path(out).mkdir(parents=True, exist_ok=True)
    made: list[tuple[PackInfo, str]] = []
    with project.write("export review packs", changed=(Area.REVIEW,)) as conn:
        pid = project_uuid(project, conn)
        if pid is None:
            pid = str(uuid.uuid4())
            project.set_meta(conn, "project_uuid", pid)
        try:
            for name in reviewers:
                mine = set(given[name])
                chosen = [(r, i, k) for r, i, k in zip(sample.row_ids, sample.items, sample.keys, strict=True)
                          if r in mine]
                chosen, checks = hide_checks(project, sample, name, chosen)
                pack_id = str(uuid.uuid4())
                local = own_ids(chosen)
                digest = fingerprint([(local[r], i, k) for r, i, k in chosen])
                _write_pack(project, conn, paths[name], sample, name, chosen, pack_id, pid, digest, local)
                conn.execute("INSERT INTO review_packs (id, sample_id, reviewer, targets, fingerprint, file_name, "
                             "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (pack_id, sample.id, name, len(chosen), digest, paths[name].name, utcnow()))
                conn.executemany("INSERT INTO review_pack_rows (pack_id, local_id, run_row_id) VALUES (?, ?, ?)",
                                 [(pack_id, mine_id, row) for row, mine_id in local.items()])
                conn.executemany("INSERT INTO review_pack_checks (pack_id, position, kind, expected) VALUES "
                                 "(?, ?, ?, ?)", [(pack_id, pos, c.kind, c.expected) for pos, c in checks.items()])
                gold = sum(1 for c in checks.values() if c.kind == "gold")
                made.append((PackInfo(str(paths[name]), pack_id, name, len(chosen), len({r for r, _, _ in chosen}),
                                      len(checks), gold, len(checks) - gold), digest))
            project.audit(conn, "export review packs", "review_sample", str(sample.id), reviewers=reviewers,
                          overlap=overlap, packs=[p.pack_id for p, _ in made])
        except BaseException:
            for info, _ in made:          # the export is recorded with its files or not at all
                Path(info.path).unlink(missing_ok=True)
            for path in paths.values():
                Path(f"{path}.part").unlink(missing_ok=True)
            raise
    return [info for info, _ in made]


def expected_checks(targets: int, reviewers: int, overlap: int, gold_rate: float, retest_rate: float
                    ) -> tuple[int, int, int]:
    """Before an export: about how many targets each reviewer's pack holds, and how many gold items and retests
    `hide_checks` adds to each at most (fewer when the project has fewer to offer)."""
    each = -(-targets * overlap // max(1, reviewers))       # the most loaded reviewer's share (`assign`)
    return each, round(each * gold_rate), round(each * retest_rate)


def own_ids(chosen: Sequence[tuple[int, int, str | None]]) -> dict[int, int]:
    """A pack's own id for each of its rows, drawn at random from 1 to 2^31 - 1: the project's ids would tell a
    retest (a row of another run, rated before) or a gold item from the sample's targets by where it falls."""
    draw = random.SystemRandom()
    rows = list(dict.fromkeys(r for r, _, _ in chosen))
    ids: set[int] = set()
    while len(ids) < len(rows):
        ids.add(draw.randrange(1, 2 ** 31))
    shuffled = list(ids)
    draw.shuffle(shuffled)
    return dict(zip(rows, shuffled, strict=True))


def hide_checks(project: Project, sample: Sample, reviewer: str, chosen: list[tuple[int, int, str | None]]
                ) -> tuple[list[tuple[int, int, str | None]], dict[int, quality.Check]]:
    """The reviewer's targets with checks mixed in at random places, as the desk mixes them (core.review.quality):
    about gold_rate × targets gold items — settled without them, rows of the sample's run first — and retest_rate ×
    targets of their own earlier ratings of the metric outside this sample. Returns the targets in the pack's order
    and the checks by position. Deterministic per sample and reviewer."""
    conf = quality.settings(project)
    taken = {(r, i) for r, i, _ in chosen}
    rng = random.Random(zlib.crc32(f"pack/{sample.id}/{reviewer}".encode()))
    checks: list[quality.Check] = []
    want = round(len(chosen) * conf.gold_rate)
    if want:
        pool = [c for c in quality.gold_items(project, sample.metric, reviewer) if (c.row_id, c.item) not in taken]
        ids = sorted({c.row_id for c in pool})
        here = {r for (r,) in project.reader().execute(
            f"SELECT rr.id FROM run_rows rr JOIN runs r ON r.id = rr.run_id WHERE r.name = ? AND rr.id IN "
            f"({','.join('?' * len(ids))})", (sample.run, *ids))} if ids else set()
        pool = [c for c in pool if c.row_id in here] or pool
        checks += rng.sample(pool, min(want, len(pool)))
    want = round(len(chosen) * conf.retest_rate)
    if want:
        latest: dict[tuple[int, int], tuple[str | None, float]] = {}
        for row, item, key, score in project.reader().execute(
                "SELECT run_row_id, passage_rank, item_key, score FROM human_ratings WHERE reviewer = ? AND metric = ? "
                "AND skipped = 0 AND withdrawn_at IS NULL AND (sample_id IS NULL OR sample_id != ?) ORDER BY id",
                (reviewer, sample.metric, sample.id)):
            latest[(int(row), int(item))] = (key, float(score))
        pool = [quality.Check("retest", r, sample.metric, i, k, v) for (r, i), (k, v) in sorted(latest.items())
                if (r, i) not in taken]
        checks += rng.sample(pool, min(want, len(pool)))
    out = list(chosen)
    for c in checks:
        out.insert(rng.randrange(len(out) + 1), (c.row_id, c.item, c.item_key))
    where = {(r, i): pos for pos, (r, i, _) in enumerate(out)}
    return out, {where[(c.row_id, c.item)]: c for c in checks}


def _write_pack(project: Project, conn: sqlite3.Connection, path: Path, sample: Sample, reviewer: str,
                chosen: list[tuple[int, int, str | None]], pack_id: str, pid: str, digest: str,
                local: dict[int, int]) -> None:
    """The pack file, its rows named by `local` (the pack's own ids, `own_ids`)."""
    scale = human_rubric(sample.metric)
    part = Path(f"{path}.part")
    part.unlink(missing_ok=True)
    out = sqlite3.connect(part, isolation_level=None)
    try:
        out.execute(f"PRAGMA application_id = {PACK_APPLICATION_ID}")
        out.execute(f"PRAGMA user_version = {PACK_FORMAT}")
        out.execute("BEGIN")
        for statement in PACK_SCHEMA.split(";"):
            if statement.strip():
                out.execute(statement)
        meta = {"format": str(PACK_FORMAT), "pack_id": pack_id, "project_uuid": pid,
                "project_name": project.meta("name", "") or "", "sample_id": str(sample.id), "run": sample.run,
                "metric": sample.metric, "unit": sample.unit, "reviewer": reviewer, "fingerprint": digest,
                "criterion": scale.criterion, "guidelines": guidelines(project, sample.metric),
                "scale": json.dumps([{"score": p.score, "key": p.key, "label": p.label, "anchor": p.anchor}
                                     for p in scale.points], ensure_ascii=False),
                "created_at": utcnow()}
        out.executemany("INSERT INTO pack_meta (key, value) VALUES (?, ?)", meta.items())
        rows = sorted({r for r, _, _ in chosen})
        for start in range(0, len(rows), 500):
            chunk = rows[start:start + 500]
            marks = ",".join("?" * len(chunk))
            out.executemany("INSERT INTO pack_rows VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (
                (local[row[0]], *row[1:]) for row in conn.execute(
                    f"SELECT rr.id, rr.external_id, rr.question, rr.answer, g.gold_answer, "
                    f"COALESCE(g.gold_chunk_ids, '[]'), g.slice_tag, g.id FROM run_rows rr LEFT JOIN golden_rows g "
                    f"ON g.id = rr.golden_id WHERE rr.id IN ({marks})", chunk)))
            out.executemany("INSERT INTO pack_passages VALUES (?, ?, ?, ?)", (
                (local[row[0]], *row[1:]) for row in conn.execute(
                    f"SELECT p.run_row_id, p.rank, p.chunk_id, COALESCE(p.text, c.text, '') FROM retrieved_passages "
                    f"p LEFT JOIN corpus_chunks c ON c.chunk_id = p.chunk_id WHERE p.run_row_id IN ({marks})",
                    chunk)))
        out.executemany("INSERT INTO pack_targets VALUES (?, ?, ?, ?)",
                        [(i, local[r], item, key) for i, (r, item, key) in enumerate(chosen)])
        out.execute("COMMIT")
    finally:
        out.close()
    os.replace(part, path)


# --- the reviewer's side ------------------------------------------------------------------------------------
def check_header(path: Path, application_id: int = PACK_APPLICATION_ID, newest: int = PACK_FORMAT,
                 what: str = "review pack") -> None:
    """A pack's first 100 bytes (read as bytes: nothing is written) say it is an SQLite file of its kind, of a format
    this app reads, and not too large; PackRefused naming the file otherwise."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise PackRefused(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
    if size > MAX_PACK_BYTES:
        raise PackRefused(f"{path.name}: {size:,} bytes is far more than a review pack holds; refused")
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise PackRefused(f"{path.name}: not a {what} (not an SQLite file)")
    if int.from_bytes(header[68:72], "big") != application_id:
        raise PackRefused(f"{path.name}: not a {what} (an SQLite file of another kind)")
    if int.from_bytes(header[60:64], "big") > newest:
        raise PackRefused(f"{path.name}: made by a newer RAGEval Desktop; update the app to open it")


def connect_pack(path: Path, read_only: bool = False) -> sqlite3.Connection:
    uri = f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rw'}"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5.0, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def check_schema(conn: sqlite3.Connection, name: str, columns: dict[str, frozenset[str]],
                 what: str = "review pack") -> None:
    """Every page sound, every table and column the pack's kind has: a damaged or edited schema is named, not a
    traceback."""
    if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
        raise PackRefused(f"{name}: the file is damaged")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if missing := [t for t in columns if t not in names]:
        raise PackRefused(f"{name}: not a complete {what} (no {', '.join(missing)})")
    for table, wanted in columns.items():
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if lacking := sorted(wanted - have):
            raise PackRefused(f"{name}: not a complete {what} ({table} has no {', '.join(lacking)})")


class Pack:
    """An open review pack: what the review screen needs (targets, rows, scale, guidelines) and the ratings."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_header(self.path)
        try:
            conn = connect_pack(self.path, read_only=True)
            try:
                check_schema(conn, self.path.name, _columns())
                self.meta: dict[str, str] = dict(conn.execute("SELECT key, value FROM pack_meta"))  # (checked:)
                if any(not isinstance(k, str) or not isinstance(v, str) for k, v in self.meta.items()):
                    raise PackRefused(f"{self.path.name}: the pack's settings are damaged (not text)")
                self.targets = conn.execute("SELECT position, run_row_id, item, item_key FROM pack_targets "
                                            "ORDER BY position").fetchall()
                self._where = {(r, i): (p, k) for p, r, i, k in self.targets}   # (row, item) -> (position, key)
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise PackRefused(f"{self.path.name}: the file is damaged ({exc})") from None
        needed = ("format", "pack_id", "project_uuid", "sample_id", "metric", "reviewer", "scale", "fingerprint")
        if missing := [k for k in needed if not self.meta.get(k)]:
            raise PackRefused(f"{self.path.name}: not a complete review pack (no {', '.join(missing)})")
        if self.meta["metric"] not in METRICS:
            raise PackRefused(f"{self.path.name}: unknown metric '{self.meta['metric'][:40]}'")
        if not self.meta["sample_id"].isdigit():
            raise PackRefused(f"{self.path.name}: the pack's sample id is damaged")
        try:
            points = [ScalePoint(float(p["score"]), str(p["key"]), str(p["label"]), str(p["anchor"]))
                      for p in json.loads(self.meta["scale"])]
        except (ValueError, TypeError, KeyError):
            raise PackRefused(f"{self.path.name}: the pack's scale is damaged") from None
        self.scale = HumanRubric(self.metric, self.meta.get("criterion", ""), tuple(points))

    @property
    def metric(self) -> str:
        return self.meta["metric"]

    @property
    def reviewer(self) -> str:
        return self.meta["reviewer"]

    @property
    def pack_id(self) -> str:
        return self.meta["pack_id"]

    def sample(self) -> Sample:
        """The pack's targets as a sample (its id is the project's sample id)."""
        return Sample(int(self.meta["sample_id"]), self.meta.get("run", ""), self.metric, 0,
                      [r for _, r, _, _ in self.targets], [i for _, _, i, _ in self.targets],
                      [k for _, _, _, k in self.targets])

    def guidelines(self) -> str:
        return self.meta.get("guidelines", "")

    def detail(self, row_id: int) -> RowDetail:
        conn = connect_pack(self.path, read_only=True)
        try:
            row = conn.execute("SELECT external_id, question, answer, gold_answer, gold_chunk_ids, slice_tag, "
                               "golden_id FROM pack_rows WHERE run_row_id = ?", (row_id,)).fetchone()
            if row is None:
                raise PackRefused(f"{self.path.name}: row {row_id} is not in the pack")
            ext, question, answer, gold_answer, gold_ids, slice_tag, gid = (cell_text(v) for v in row)
            try:
                gold = [str(g) for g in json.loads(gold_ids or "[]")]
            except (ValueError, TypeError):
                gold = []
            passages = [Passage(rank if isinstance(rank, int) else k, cell_text(cid), cell_text(text) or "", None,
                                cell_text(cid) in gold)
                        for k, (rank, cid, text) in enumerate(conn.execute(
                            "SELECT rank, chunk_id, text FROM pack_passages WHERE run_row_id = ? ORDER BY rank",
                            (row_id,)), start=1)]
        finally:
            conn.close()
        return RowDetail(title=f"{self.meta.get('run', '')} · {ext}", question=question or "", answer=answer,
                         gold_answer=gold_answer, gold_chunk_ids=gold, slice_tag=slice_tag, passages=passages,
                         facts={"golden row": gid or "unlinked"})

    def rate(self, row_id: int, item: int, score: float | None, *, skipped: bool = False,
             comment: str | None = None, seconds: float | None = None) -> Rating:
        if not skipped:
            if score is None:
                raise RagevalError("a rating needs a score (or skip the row)")
            score = check_score(self.metric, score)
        if (row_id, item) not in self._where:
            raise RagevalError(f"row {row_id} (item {item}) is not in this pack")
        position, key = self._where[row_id, item]
        conn = connect_pack(self.path)
        try:
            cur = conn.execute("INSERT INTO pack_ratings (position, score, skipped, comment, seconds_taken, "
                               "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                               (position, None if skipped else score, int(skipped), comment, seconds, utcnow()))
        except sqlite3.OperationalError as exc:
            raise RagevalError(f"{self.path.name}: the rating could not be saved ({exc})") from None
        finally:
            conn.close()
        return Rating(inserted_id(cur), row_id, self.metric, self.reviewer, None if skipped else score, skipped, item,
                      key)

    def withdraw(self, rating_id: int) -> None:
        conn = connect_pack(self.path)
        try:
            cur = conn.execute("UPDATE pack_ratings SET withdrawn_at = ? WHERE id = ? AND withdrawn_at IS NULL",
                               (utcnow(), rating_id))
        finally:
            conn.close()
        if cur.rowcount == 0:
            raise RagevalError(f"no rating {rating_id} to undo")

    def my_ratings(self) -> dict[tuple[int, int], float | None]:
        where = {p: (r, i) for p, r, i, _ in self.targets}
        conn = connect_pack(self.path, read_only=True)
        try:
            return {where[p]: s for p, s in conn.execute(
                "SELECT position, score FROM pack_ratings WHERE withdrawn_at IS NULL ORDER BY id") if p in where}
        finally:
            conn.close()

    def ratings(self) -> list[tuple]:
        conn = connect_pack(self.path, read_only=True)
        try:
            return conn.execute("SELECT id, position, score, skipped, comment, seconds_taken, created_at, "
                                "withdrawn_at FROM pack_ratings ORDER BY id").fetchall()
        except sqlite3.DatabaseError as exc:
            raise PackRefused(f"{self.path.name}: the file is damaged ({exc})") from None
        finally:
            conn.close()


def cell_text(value: object) -> str | None:
    """A pack cell as text (a pack is a file anyone can edit: a number or bytes where text belongs is shown, not
    obeyed or crashed on)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# --- back in the project ------------------------------------------------------------------------------------
def checked_time(value: Any, name: str, rid: int) -> str:
    try:
        datetime.fromisoformat(str(value))
    except ValueError:
        raise PackRefused(f"{name}: rating {rid} has no valid time ({str(value)[:40]!r})") from None
    return str(value)


def import_pack(project: Project, path: str | Path) -> dict[str, Any]:
    """Merge a pack's ratings into the project, all or nothing (see the module's doc)."""
    return import_packs(project, [path])[0]


def import_packs(project: Project, paths: list[str | Path]) -> list[dict[str, Any]]:
    """Merge several packs, all or nothing across the files: every pack is checked before any is written, and
    all are written in one transaction (was: `pack import P good bad` merged the good one, then failed on the bad
    one without saying the first was in)."""
    try:
        prepared = [prepare_pack(project, path) for path in paths]
    except PackRefused as exc:
        if len(paths) > 1:
            raise PackRefused(f"{exc}; none of the {len(paths)} packs was imported") from None
        raise
    with project.write("import review packs", changed=(Area.RATINGS, Area.REVIEW)) as conn:
        return [merge_pack(project, conn, item) for item in prepared]


def prepare_pack(project: Project, path: str | Path) -> dict[str, Any]:
    """A pack read and checked, its rows ready to insert; PackRefused (naming the file) when anything is off."""
    path = Path(path)
    pack = Pack(path)
    name = path.name
    meta = pack.meta
    mine = project_uuid(project)
    if mine is None or meta["project_uuid"] != mine:
        raise PackRefused(f"{name}: this pack comes from another project ({meta.get('project_name') or 'unnamed'})"
                          "; import it into the project it was exported from")
    known = project.reader().execute("SELECT sample_id, reviewer, fingerprint FROM review_packs WHERE id = ?",
                                     (meta["pack_id"],)).fetchone()
    if known is None:
        raise PackRefused(f"{name}: this project never exported this pack")
    sample_id, reviewer, digest = known
    if sample_id is None or not project.reader().execute("SELECT 1 FROM review_samples WHERE id = ?",
                                                         (sample_id,)).fetchone():
        raise PackRefused(f"{name}: the sample this pack was made from no longer exists in the project")
    try:
        targets = fingerprint([(r, i, k) for _, r, i, k in pack.targets])
    except (TypeError, ValueError):     # a value no export writes (bytes): changed after export
        targets = None
    if (str(sample_id), reviewer, digest) != (meta["sample_id"], meta["reviewer"], meta["fingerprint"]) or \
            targets != digest:
        raise PackRefused(f"{name}: the pack was changed after export (its targets, reviewer or sample differ "
                          "from what was exported); refused")
    metric = project.reader().execute("SELECT metric FROM review_samples WHERE id = ?", (sample_id,)).fetchone()[0]
    # the pack's own row ids back to the project's (a pack exported before they existed names the project's)
    real = dict(project.reader().execute("SELECT local_id, run_row_id FROM review_pack_rows WHERE pack_id = ?",
                                         (meta["pack_id"],)))
    where = {p: (real[r] if real else r, i, k) for p, r, i, k in pack.targets}
    found = pack.ratings()
    if len(found) > MAX_RATINGS_PER_TARGET * max(len(where), 1):
        raise PackRefused(f"{name}: {len(found):,} ratings for {len(where)} targets; refused")
    hidden = {int(pos): (kind, float(expected)) for pos, kind, expected in project.reader().execute(
        "SELECT position, kind, expected FROM review_pack_checks WHERE pack_id = ?", (meta["pack_id"],))}
    rows: list[tuple] = []
    withdrawn: list[tuple[str, str]] = []
    answers: dict[int, tuple] = {}
    for rid, position, score, skipped, comment, seconds, created, gone in found:
        if position not in where:
            raise PackRefused(f"{name}: rating {rid} names no target of the pack (position {position})")
        if skipped not in (0, 1):
            raise PackRefused(f"{name}: rating {rid}: skipped must be 0 or 1")
        if not skipped:
            if not isinstance(score, int | float):
                raise PackRefused(f"{name}: rating {rid} has no score")
            try:
                check_score(metric, float(score))
            except RagevalError as exc:
                raise PackRefused(f"{name}: rating {rid}: {exc}") from None
        if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT):
            raise PackRefused(f"{name}: rating {rid}: the comment is not text of at most {MAX_COMMENT:,} characters")
        if seconds is not None and (not isinstance(seconds, int | float) or seconds < 0):
            raise PackRefused(f"{name}: rating {rid}: seconds taken must be a number >= 0")
        row, item, key = where[position]
        created = checked_time(created, name, rid)
        if position in hidden:    # a check: its latest answer standing (an undone re-rating: the one before)
            kind, expected = hidden[position]
            if gone and position in answers and answers[position][11] is None:
                continue
            answers[position] = (reviewer, metric, row, item, key, kind, expected, None if skipped else float(score),
                                 seconds, sample_id, created, checked_time(gone, name, rid) if gone else None,
                                 f"pack:{meta['pack_id']}:pos{position}")
            continue
        origin = f"pack:{meta['pack_id']}:{rid}"
        rows.append((row, metric, item, key, reviewer, None if skipped else float(score), int(skipped), comment,
                     seconds, sample_id, created, checked_time(gone, name, rid) if gone else None, origin))
        if gone:
            withdrawn.append((checked_time(gone, name, rid), origin))
    return {"name": name, "meta": meta, "reviewer": reviewer, "sample_id": sample_id, "found": len(found),
            "rows": rows, "withdrawn": withdrawn, "checks": list(answers.values())}


def merge_pack(project: Project, conn: sqlite3.Connection, item: dict[str, Any]) -> dict[str, Any]:
    name, meta, reviewer, sample_id = item["name"], item["meta"], item["reviewer"], item["sample_id"]
    rows, withdrawn = item["rows"], item["withdrawn"]
    # the rows these statements changed (a cursor's rowcount; the connection's total_changes also counts what the
    # counting triggers change)
    added = conn.executemany(
        "INSERT OR IGNORE INTO human_ratings (run_row_id, metric, passage_rank, item_key, reviewer, score, "
        "skipped, comment, seconds_taken, sample_id, created_at, withdrawn_at, origin) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows).rowcount if rows else 0
    undone = conn.executemany("UPDATE human_ratings SET withdrawn_at = ? WHERE origin = ? AND withdrawn_at IS NULL",
                              withdrawn).rowcount if withdrawn else 0
    checked = 0
    for answer in item["checks"]:     # one check per position: a re-rating or a withdrawal since replaces it
        before = conn.execute("SELECT score, withdrawn_at FROM reviewer_checks WHERE origin = ?",
                              (answer[-1],)).fetchone()
        if before is not None and (before[0], before[1]) == (answer[7], answer[11]):
            continue
        conn.execute("INSERT INTO reviewer_checks (reviewer, metric, run_row_id, item, item_key, kind, expected, "
                     "score, seconds_taken, sample_id, created_at, withdrawn_at, origin) VALUES "
                     f"({', '.join('?' * 13)}) ON CONFLICT (origin) WHERE origin IS NOT NULL DO UPDATE SET "
                     "score = excluded.score, seconds_taken = excluded.seconds_taken, "
                     "created_at = excluded.created_at, withdrawn_at = excluded.withdrawn_at", answer)
        checked += 1
    apply_holds(conn, reviewer=reviewer)     # a reviewer set aside stays set aside, their pack's ratings too
    conn.execute("UPDATE review_packs SET imported_at = ? WHERE id = ?", (utcnow(), meta["pack_id"]))
    project.audit(conn, "import review pack", "review_sample", str(sample_id), pack=meta["pack_id"],
                  reviewer=reviewer, file=name, added=added, withdrawn=undone, checks=checked)
    return {"file": name, "pack_id": meta["pack_id"], "reviewer": reviewer, "sample_id": sample_id,
            "ratings_in_pack": item["found"], "added": added,
            "already_imported": len(rows) - added, "withdrawn_since": undone,
            "checks": len(item["checks"]), "checks_changed": checked}


def list_packs(project: Project) -> list[dict[str, Any]]:
    return [{"pack_id": i, "sample_id": s, "reviewer": r, "targets": n, "file": f, "created_at": c,
             "imported_at": imp}
            for i, s, r, n, f, c, imp in project.reader().execute(
                "SELECT id, sample_id, reviewer, targets, file_name, created_at, imported_at FROM review_packs "
                "ORDER BY created_at, reviewer")]
