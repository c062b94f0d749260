"""How sound a project file is, at a cost that fits the moment.

- **On every open** (`cheap_check`): the header (ours, a schema we read — `files.read_header`), the schema
  readable, the tables the app needs present, and each table's first page readable. Its cost does not grow with
  the file: a 1 GB project opens as fast as a 5 MB one.
- **On demand** (`check`: `rageval check P`, Help → Check project) and **after an unclean shutdown**: SQLite's
  `quick_check` over every page (`integrity_check` with `full`, which also compares every index with its table),
  plus the foreign-key check. It reads the whole file, so the app runs it in the background. The full check also
  tests every row against its table's CHECK rules (`broken_rules`: a stored setting still JSON, a rank still ≥ 1):
  SQLite's own integrity_check skips them on a read-only connection, and a check never opens the file to write.

An unclean shutdown is told by sessions: a process that opens a project for writing records itself in `meta`
(`session/<host>/<pid>`) and removes the record when it closes. A record whose process on this host is gone was
left by a process that crashed or was killed — its file may be half-written on a disk that lied about flushing —
so the next open checks the whole file. A passing check removes those records; a failing one leaves them, so every
open refuses the file until it is restored.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import ProjectRefused, WriteFailed
from rageval_desktop.core.base.paths import user_state_dir
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.files import BUSY_TIMEOUT_MS, connect_read_only, read_header, restore_hint
from rageval_desktop.core.store.owners import host, pid_alive
from rageval_desktop.core.store.schema import SESSION_KEYS

if TYPE_CHECKING:
    from rageval_desktop.core.store.project import Project

SESSION_PREFIX = "session/"
LAST_CHECK_KEY = "integrity_checked_at"
REQUIRED_TABLES = ("meta", "slices", "golden_rows", "golden_edits", "corpus_chunks", "runs", "run_rows",
                   "retrieved_passages", "rubrics", "judges", "jobs", "judgments", "review_samples",
                   "review_sample_rows", "human_ratings", "audit_log")
SESSION_TIMEOUT_MS = 200   # registering a session never waits long for another process's write


@dataclass
class CheckReport:
    path: str
    ok: bool
    kind: str                       # "quick_check" | "integrity_check"
    problems: list[str] = field(default_factory=list)
    foreign_key_problems: int = 0
    seconds: float = 0.0
    megabytes: float = 0.0
    reason: str = "asked"           # "asked" | "unclean shutdown"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        if self.ok:
            extra = f"; {self.foreign_key_problems} broken reference(s)" if self.foreign_key_problems else ""
            return (f"{self.path}: sound ({self.kind} of {self.megabytes:,.1f} MB in {self.seconds:.2f} s found no "
                    f"damage{extra})")
        shown = "; ".join(self.problems[:3]) + (f"; … {len(self.problems) - 3} more" if len(self.problems) > 3 else "")
        return f"{self.path}: the file is damaged ({self.kind}: {shown})"


def cheap_check(conn: sqlite3.Connection, path: Path, hint: str) -> None:
    """What every open checks; never reads more than the schema and one page per table."""
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in REQUIRED_TABLES if t not in names]
        if missing:
            raise ProjectRefused(f"{path}: the file is damaged (missing table(s): {', '.join(missing)}); {hint}")
        for table in REQUIRED_TABLES:
            try:
                conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchall()
            except UnicodeDecodeError:      # SQLite keeps any bytes as text; a flipped bit made these not UTF-8
                raise ProjectRefused(f"{path}: the file is damaged (text in table {table} that is not UTF-8); "
                                     f"{hint}") from None
    except sqlite3.DatabaseError as exc:
        raise ProjectRefused(f"{path}: the file is damaged ({exc}); {hint}") from None


def check(path: str | Path, *, full: bool = False, reason: str = "asked") -> CheckReport:
    """Read every page (read-only; nothing is written, no sidecar files are made where none were)."""

    path = Path(path)
    read_header(path)
    kind = "integrity_check" if full else "quick_check"
    began = time.perf_counter()
    report = CheckReport(str(path), False, kind, reason=reason, megabytes=path.stat().st_size / 1e6)
    try:
        conn = connect_read_only(path)
    except sqlite3.Error as exc:
        report.problems = [f"cannot be opened: {exc}"]
        return report
    rules = _RulesScan(path) if full else None    # read beside the pages' check, on a core of its own
    try:
        report.problems = [r[0] for r in conn.execute(f"PRAGMA {kind}").fetchall() if r[0] != "ok"]
        if rules is not None and not report.problems:     # (integrity_check found the missing values itself)
            report.problems = rules.result()
        if not report.problems:
            report.foreign_key_problems = len(conn.execute("PRAGMA foreign_key_check").fetchall())
    except sqlite3.DatabaseError as exc:
        report.problems = [str(exc)]
    finally:
        if rules is not None:
            rules.stop()
        conn.close()
    report.ok = not report.problems
    report.seconds = time.perf_counter() - began
    return report


class _RulesScan:
    """`broken_rules` on a connection and a thread of its own, while `integrity_check` reads the pages: SQLite lets
    go of the interpreter as it steps, so the two take what one took in turn (a 1.7 GB project: 27 s in turn)."""

    def __init__(self, path: Path) -> None:
        self.found: list[str] = []
        self.error: sqlite3.Error | None = None
        self.conn: sqlite3.Connection | None = None
        self.thread: threading.Thread | None = None
        self.stopping = False
        try:
            self.conn = connect_read_only(path)
        except sqlite3.Error as exc:
            self.error = exc
            return
        self.conn.set_progress_handler(lambda: self.stopping, 100_000)    # every statement ends once stopped
        self.thread = threading.Thread(target=self._scan, name="rules-scan", daemon=True)
        self.thread.start()

    def _scan(self) -> None:
        assert self.conn is not None
        try:
            self.found = broken_rules(self.conn, required=False)
        except sqlite3.Error as exc:
            self.error = exc

    def result(self) -> list[str]:
        """The rows that break the rules (raises the scan's own failure: a malformed page on its way)."""
        if self.thread is not None:
            self.thread.join()
        if self.error is not None:
            raise self.error
        return self.found

    def stop(self) -> None:
        """Interrupt the scan if it still runs (the pages' check found damage first), and close its connection."""
        if self.conn is None:
            return
        if self.thread is not None and self.thread.is_alive():
            self.stopping = True
            self.thread.join()
        self.conn.close()


# --- sessions --------------------------------------------------------------------------------------------------
def session_key() -> str:
    return f"{SESSION_PREFIX}{host()}/{os.getpid()}"


def dead_sessions(conn: sqlite3.Connection) -> list[str]:
    """Sessions on this host whose process is gone (another host's sessions cannot be told apart from live ones)."""
    here = f"{SESSION_PREFIX}{host()}/"
    out = []
    for (key,) in conn.execute(f"SELECT key FROM meta WHERE {SESSION_KEYS}"):
        if key.startswith(here):
            try:
                pid = int(key[len(here):])
            except ValueError:
                continue
            if pid != os.getpid() and not pid_alive(pid):
                out.append(key)
    return out


def _quick_write(conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> bool:
    """One small statement, waiting at most SESSION_TIMEOUT_MS for another process's write; False if it could not."""

    try:
        conn.execute(f"PRAGMA busy_timeout = {SESSION_TIMEOUT_MS}")
        try:
            conn.execute(sql, params)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    except sqlite3.Error:
        return False
    return True


def begin_session(conn: sqlite3.Connection, started_at: str) -> bool:
    """On the writer connection, outside any transaction: record this process as having the file open."""
    return _quick_write(conn, "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
                              "value = excluded.value", (session_key(), started_at))


def end_session(conn: sqlite3.Connection) -> bool:
    return _quick_write(conn, "DELETE FROM meta WHERE key = ?", (session_key(),))


def check_after_unclean_shutdown(project: Project) -> CheckReport | None:
    """The full check when a dead session says the last close was not clean (None when it was). A passing check is
    recorded and the dead sessions go; a failing one changes nothing.

    A read-only open cannot record its pass in the file, so it is remembered beside the user's settings, for the file
    as it is (size, modification time, the dead sessions): the next read-only open of the unchanged file does not
    read every page again."""
    dead = dead_sessions(project.reader())
    if not dead:
        return None
    state = _file_state(project.path, dead) if project.read_only else None
    if state is not None and state in _passed_read_only():
        return None
    report = check_project(project, reason="unclean shutdown")
    if report.ok and state is not None:
        _remember_read_only_pass(state)
    return report


def _file_state(path: Path, dead: list[str]) -> str:
    stat = Path(path).stat()
    wal = Path(f"{path}-wal")
    wal_size = wal.stat().st_size if wal.exists() else 0
    return json.dumps([str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns, wal_size, sorted(dead)])


def _passed_file() -> Path:

    return user_state_dir() / "read-only-checks.json"


def _passed_read_only() -> list[str]:
    try:
        found = json.loads(_passed_file().read_text(encoding="utf-8"))
        return found if isinstance(found, list) else []
    except (OSError, ValueError):
        return []


def _remember_read_only_pass(state: str) -> None:
    try:
        _passed_file().write_text(json.dumps([*_passed_read_only()[-49:], state]), encoding="utf-8")
    except OSError:
        pass   # only slower: the next read-only open checks again


def check_project(project: Project, *, full: bool = False, reason: str = "asked") -> CheckReport:
    """Every page of an open project's file (its own read-only connection); a passing check is recorded."""
    report = check(project.path, full=full, reason=reason)
    if report.ok and not project.read_only:
        record(project, report)
    return report


def record(project: Project, report: CheckReport, dead: list[str] | None = None) -> None:
    """A passing check: when, and the dead sessions it cleared."""

    dead = dead_sessions(project.reader()) if dead is None else dead
    try:
        with project.write("record integrity check", changed=(Area.SETTINGS,)) as conn:
            conn.executemany("DELETE FROM meta WHERE key = ?", [(k,) for k in dead])
            project.set_meta(conn, LAST_CHECK_KEY, utcnow())
    except WriteFailed:
        pass  # another process is writing; the next open checks again, which is only slower


def table_rules(sql: str) -> list[str]:
    """The CHECK rules of a CREATE TABLE statement, as SQL expressions (column and table rules alike)."""
    rules, i, n = [], 0, len(sql)
    while i < n:
        skipped = _past_quote(sql, i)
        if skipped is not None:
            i = skipped
            continue
        if sql[i:i + 5].upper() == "CHECK" and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            j = i + 5
            while j < n and sql[j].isspace():
                j += 1
            if j < n and sql[j] == "(":
                end = _closing(sql, j)
                if end is None:
                    break
                rules.append(sql[j + 1:end].strip())
                i = end + 1
                continue
        i += 1
    return rules


def _past_quote(sql: str, i: int) -> int | None:
    """Where a literal, a quoted name or a comment starting at `i` ends (the index after it; the text's length when
    it never does), or None when none starts there."""
    if sql[i] in "'\"`[":
        end = sql.find("]" if sql[i] == "[" else sql[i], i + 1)
    elif sql.startswith("--", i):
        end = sql.find("\n", i)
    else:
        return None
    return len(sql) if end < 0 else end + 1


def _closing(sql: str, start: int) -> int | None:
    """The index of the parenthesis that closes the one at `start` (quotes and comments skipped)."""
    depth, i = 0, start
    while i < len(sql):
        skipped = _past_quote(sql, i)
        if skipped is not None:
            i = skipped
            continue
        depth += (sql[i] == "(") - (sql[i] == ")")
        if depth == 0:
            return i
        i += 1
    return None


def broken_rules(conn: sqlite3.Connection, *, json_only: bool = False, required: bool = True) -> list[str]:
    """Rows that break their table's CHECK rules, in SQLite's words ("CHECK constraint failed in runs"), with the
    rule and how many rows — and values of another type than their column's (a text stored as bytes, a score stored
    as a word) or, with `required`, missing where the column requires one: damage inside sound pages (a flipped bit
    in a record, a tool that ignored the rules), which `integrity_check` finds only on a connection that may write
    (it finds missing values itself). `json_only`: only the rules that a stored value is JSON. A rule that cannot be
    evaluated is left out. A sound table is read once, asking whether any row breaks any rule (a 2M-row project: 11
    s, where one sum per rule took 24); only a table with such rows is read again, to count them rule by rule."""
    problems = []
    for table, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL "
                                   "AND name NOT LIKE 'sqlite_%'").fetchall():
        quoted = '"' + table.replace('"', '""') + '"'
        rules = [r for r in table_rules(sql) if not json_only or "json_valid(" in r.lower().replace(" ", "")]
        broken = [f"NOT ({r})" for r in rules]
        labels = [f"CHECK constraint failed in {table} ({r})" for r in rules]
        if not json_only:     # a value of another type than its column's, or none where one is required (a flipped
            for column, declared, needed in _typed_columns(conn, quoted):     # bit in a record's header)
                name = '"' + column.replace('"', '""') + '"'
                if declared in _WRONG_TYPE:
                    broken.append(f"typeof({name}) IN ({_WRONG_TYPE[declared][0]})")
                    labels.append(f"a value of the wrong type in {table} ({column}: {_WRONG_TYPE[declared][1]})")
                if needed and required:     # (not `IS NULL`: SQLite takes a NOT NULL column's word for it)
                    broken.append(f"typeof({name}) = 'null'")
                    labels.append(f"a missing value in {table} ({column}: required)")
        if not broken:
            continue
        try:
            if not conn.execute(f"SELECT EXISTS (SELECT 1 FROM {quoted} WHERE {' OR '.join(broken)})").fetchone()[0]:
                continue
            counts = conn.execute("SELECT " + ", ".join(f"SUM(CASE WHEN {b} THEN 1 ELSE 0 END)" for b in broken)
                                  + f" FROM {quoted}").fetchone()
        except sqlite3.Error:   # a rule this SQLite cannot evaluate: the others, one at a time
            counts = [_count_broken(conn, quoted, b) for b in broken]
        problems += [f"{label}: {bad:,} row(s)" for label, bad in zip(labels, counts, strict=True) if bad]
    return problems


# a value of another type than its column's (on typeof), in words: a text read back as bytes, a number read back as
# text or bytes (a REAL column keeps whole numbers as integers; any column may be empty unless it is NOT NULL)
_WRONG_TYPE = {"TEXT": ("'blob'", "not text"), "INTEGER": ("'text', 'blob'", "not a whole number"),
               "REAL": ("'text', 'blob'", "not a number")}


def _typed_columns(conn: sqlite3.Connection, quoted: str) -> list[tuple[str, str, bool]]:
    """(name, declared type, NOT NULL) of each column."""
    try:
        return [(str(name), str(declared).upper(), bool(notnull)) for _, name, declared, notnull, *_ in
                conn.execute(f"PRAGMA table_info({quoted})").fetchall()]
    except sqlite3.Error:
        return []


def _count_broken(conn: sqlite3.Connection, quoted: str, broken: str) -> int:
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {quoted} WHERE {broken}").fetchone()[0])
    except sqlite3.Error:
        return 0


def read_damage(path: str | Path, exc: BaseException) -> str | None:
    """An SQLite error met while reading a project that means its file is damaged, in words with what to do (None:
    another failure). Text a flipped bit left not UTF-8 is damage `rageval check` cannot see (it reads pages, not
    text): only the restore is suggested for it."""
    if not isinstance(exc, sqlite3.Error):
        return None
    said = " ".join(str(exc).split())
    low = said.lower()
    restore = _restore(path)
    if "could not decode to utf-8" in low:
        return f"{path}: the project file is damaged: it holds text that is not UTF-8 ({said}); {restore}"
    if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in low or "not a database" in low):
        return (f"{path}: the project file is damaged ({said}); see what is damaged with: rageval check {path} (in "
                f"the app: Help → Check Project) — then {restore}")
    return None


DAMAGE_READ_S = 2.0    # what finding the damage behind a failure may take: the tables it has not read by then, unread


def _restore(path: str | Path) -> str:
    return (f"restore a backup (rageval backups {path}; rageval restore {path} BACKUP; in the app: File → Restore "
            "from Backup…)")


def bytes_damage(path: str | Path) -> str:
    """A value read back as bytes where the schema stores text (a flipped bit in a record's header), in words."""
    return (f"{path}: the project file is damaged: a value that should be text is stored as bytes; see what is "
            f"damaged with: rageval check {path} — then {_restore(path)}")


def failure_damage(path: str | Path, exc: BaseException) -> str | None:
    """Whether an unexpected failure reading a project was its file's damage (`read_damage`, else `damage_behind`),
    in words with what to do; None: a bug."""
    return read_damage(path, exc) or damage_behind(path)


def damage_behind(path: str | Path, seconds: float = DAMAGE_READ_S) -> str | None:
    """Whether a failure reading a project was damage in its file, not a bug: the values `broken_rules` finds that
    break the file's rules (a setting no longer JSON, a text stored as bytes, a score stored as a word), worded with
    how to restore — or, when there are none, what SQLite's page check finds (an index whose entries differ from
    their rows), or a malformed page met on the way (read-only; None when the file is sound, cannot be opened, or the
    time runs out). Asked after an
    unexpected error only, for at most `seconds` (every row of every table is `rageval check`'s work: 14 s at
    2M run rows)."""
    try:
        conn = connect_read_only(Path(path))
    except sqlite3.Error:
        return None
    deadline = time.monotonic() + seconds
    conn.set_progress_handler(lambda: time.monotonic() > deadline, 100_000)
    try:
        found = broken_rules(conn)
        # a value read through a damaged index breaks no table's rule: the pages' check finds it, if there is time
        pages = [] if found else [r[0] for r in conn.execute("PRAGMA integrity_check(5)") if r[0] != "ok"]
    except sqlite3.Error as exc:     # a malformed page on the way is the damage (out of time: None, not known)
        return read_damage(path, exc)
    finally:
        conn.close()
    if pages:
        said = " ".join("; ".join(pages).split())
        return f"{path}: the project file is damaged (integrity_check: {said[:400]}); {restore_hint(Path(path))}"
    if not found:
        return None
    more = f"; … {len(found) - 3} more" if len(found) > 3 else ""
    return (f"{path}: the project file is damaged: {'; '.join(found[:3])}{more} (values that break the file's "
            f"rules); {restore_hint(Path(path))}")


def damaged_message(report: CheckReport, hint: str) -> str:
    why = " after an unclean shutdown" if report.reason == "unclean shutdown" else ""
    return f"{report.summary()}{why}; {hint}"
