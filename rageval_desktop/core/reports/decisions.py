"""Decisions on record (issue 30): a gate's verdict kept with what it rested on, in a chain.

A record holds fingerprints of its inputs (the project, each run and a hash of its rows, each judge with its licence
and fingerprint, the ratings counted), the gate's rules, every verdict with its interval and n, the waivers, who and
when, and the hash of the project's previous record. Its own hash is the SHA-256 of the record's canonical JSON. It is
kept in the project (table `decisions`) and written as JSON and Markdown for a pull request; `verify` recomputes every
hash and link, and checks files against the records they claim to be."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.text import md_escape
from rageval_desktop.core.judges.fingerprint import fingerprint
from rageval_desktop.core.judges.registry import list_judges
from rageval_desktop.core.metrics.gate import GateResult, gate_markdown
from rageval_desktop.core.review.licence import licence
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project


def canonical(record: dict[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode()


def digest(record: dict[str, Any]) -> str:
    """The record's hash: of everything in it but the hash itself."""
    return hashlib.sha256(canonical({k: v for k, v in record.items() if k != "hash"})).hexdigest()


def _run_fingerprint(project: Project, name: str) -> dict[str, Any]:
    conn = project.reader()
    found = conn.execute("SELECT id FROM runs WHERE name = ?", (name,)).fetchone()
    if found is None:
        return {"name": name, "rows": 0, "rows_hash": None}
    h = hashlib.sha256()
    rows = 0
    for row in conn.execute("SELECT external_id, question, answer FROM run_rows WHERE run_id = ? ORDER BY id",
                            (found[0],)):
        h.update(canonical({"row": list(row)}))
        rows += 1
    return {"name": name, "rows": rows, "rows_hash": h.hexdigest()}


def record_gate(project: Project, result: GateResult, baseline: str, candidate: str, *, estimator: str = "mean",
                waivers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Keep a gate's decision in the project, chained to the previous record; returns the record (with its id)."""
    judges = [{"name": j.name, "metric": j.metric, "kind": j.kind, "status": j.status,
               "fingerprint": fingerprint(project, j), "licence": licence(project, j).as_dict()}
              for j in list_judges(project)]
    ratings = project.reader().execute("SELECT COUNT(*) FROM human_ratings WHERE withdrawn_at IS NULL").fetchone()[0]
    with project.write("record a decision", changed=(Area.AUDIT,)) as conn:
        ident = project.meta("project_id")
        if not ident:
            ident = uuid.uuid4().hex
            project.set_meta(conn, "project_id", ident)
        previous = conn.execute("SELECT hash FROM decisions ORDER BY id DESC LIMIT 1").fetchone()
        record = {"kind": "gate", "project": {"id": ident, "name": project.meta("name")},
                  "runs": {"baseline": _run_fingerprint(project, baseline),
                           "candidate": _run_fingerprint(project, candidate)},
                  "judges": judges, "ratings_counted": ratings, "estimator": estimator,
                  "rules": {k: v for k, v in result.as_dict().items()
                            if k in ("rule", "rule_text", "alpha", "strict", "max_slice_drop", "max_aggregate_drop",
                                     "min_slice_n", "require_significant", "adjustment")},
                  "decision": result.decision, "passed": result.passed,
                  "verdicts": {"regressions": result.regressions, "undecided": result.undecided,
                               "ungated": result.ungated},
                  "waivers": waivers or [], "who": project.actor, "when": utcnow(),
                  "previous": previous[0] if previous else None}
        record["hash"] = digest(record)
        cur = conn.execute("INSERT INTO decisions (kind, record, hash, previous, created_at) VALUES (?, ?, ?, ?, ?)",
                           ("gate", canonical(record).decode(), record["hash"], record["previous"], record["when"]))
        project.audit(conn, "record decision", "decision", str(cur.lastrowid), decision=result.decision,
                      hash=record["hash"])
    return {"id": cur.lastrowid, **record}


def write_record(record: dict[str, Any], result: GateResult, folder: str | Path) -> tuple[Path, Path]:
    """The record as `decision-<id>.json` (the record exactly, to verify) and `.md` (for a pull request)."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"decision-{record['id']}"
        body = {k: v for k, v in record.items() if k != "id"}
        json_path, md_path = stem.with_suffix(".json"), stem.with_suffix(".md")
        json_path.write_text(json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n",
                             encoding="utf-8")
        md_path.write_text(f"# Decision {record['id']}: {record['decision']}\n\n"
                           f"Recorded by {md_escape(str(record['who']))} at {record['when']}; hash `{record['hash']}`"
                           f" (previous `{record['previous'] or 'none'}`).\n\n" + gate_markdown(result),
                           encoding="utf-8")
    except OSError as exc:
        raise RagevalError(f"cannot write the decision record to {folder}: {exc.strerror or exc}") from None
    return json_path, md_path


def decisions(project: Project) -> list[dict[str, Any]]:
    return [{"id": i, **json.loads(r)} for i, r in project.reader().execute(
        "SELECT id, record FROM decisions ORDER BY id")]


def verify(project: Project, files: Sequence[str | Path] = ()) -> list[str]:
    """What fails: a stored record whose hash or link to the previous one does not hold, a file that is not the
    record it names. Empty: everything holds."""
    problems: list[str] = []
    stored = {}
    previous = None
    for i, text, hash_, prev in project.reader().execute(
            "SELECT id, record, hash, previous FROM decisions ORDER BY id"):
        record = json.loads(text)
        stored[hash_] = (i, record)
        if digest(record) != hash_ or record.get("hash") != hash_:
            problems.append(f"decision {i}: its content does not match its hash (edited)")
        if prev != previous or record.get("previous") != previous:
            problems.append(f"decision {i}: it does not follow the record before it (the chain is broken)")
        previous = hash_
    for path in files:
        name = Path(path).name
        try:
            body = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(f"{name}: cannot be read as a decision record ({exc})")
            continue
        claimed = body.get("hash") if isinstance(body, dict) else None
        if claimed not in stored:
            problems.append(f"{name}: names no decision recorded in this project")
        elif digest(body) != claimed or canonical(body) != canonical(stored[claimed][1]):
            problems.append(f"{name}: differs from decision {stored[claimed][0]} (edited)")
    return problems
