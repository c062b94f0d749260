"""Secrets a project took before it refused them: a judge's settings once accepted `--param api_key=sk-…` (or a
plug-in kind's copy of a key) and stored it in plain text. A project opened for writing has them removed, in a
write of its own, recorded in the audit log by the settings' names (never their values) and said to the person
opening it; a read-only open leaves the file as it is, and every display hides them (`secret_shapes.shown`).
Backups made before keep what they held: the note says how many there are.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rageval_desktop.core.base.secret_shapes import stored_secrets, without_secrets
from rageval_desktop.core.store import backup as backups
from rageval_desktop.core.store.changes import Area

if TYPE_CHECKING:
    import sqlite3

    from rageval_desktop.core.store.project import Project


def judges_holding_secrets(conn: sqlite3.Connection) -> list[tuple[int, str, list[str]]]:
    """(id, name, the settings that hold a secret) of each judge whose stored settings hold one."""
    found = []
    for judge_id, name, params in conn.execute("SELECT id, name, params FROM judges ORDER BY id"):
        try:
            settings = json.loads(params or "{}")
        except (TypeError, ValueError):      # damage, which `rageval check` names
            continue
        held = stored_secrets(settings)
        if held:
            found.append((judge_id, name, held))
    return found


def secrets_note(found: list[tuple[int, str, list[str]]]) -> str:
    return "; ".join(f"judge '{name}' ({', '.join(held)})" for _, name, held in found)


def held_secrets(project: Project) -> list[str]:
    """For a read-only open (which writes nothing): what the judges' settings hold, to be said."""
    import sqlite3

    try:
        found = judges_holding_secrets(project.reader())
    except sqlite3.Error:       # a damaged or partial file: opening and reading it say why
        return []
    return [f"secrets are stored in judges' settings: {secrets_note(found)} — hidden in everything shown; opening "
            "the project to write removes them"] if found else []


def remove_stored_secrets(project: Project) -> list[str]:
    """Remove every secret the judges' settings hold (writes only when there is one); what was done, to be said."""
    if not judges_holding_secrets(project.reader()):
        return []
    project.pragma("secure_delete = ON")     # the old settings' bytes are overwritten, not left in free space
    try:
        with project.write("remove stored secrets", changed=(Area.JUDGES,)) as conn:
            found = judges_holding_secrets(conn)
            for judge_id, name, held in found:
                settings = json.loads(conn.execute("SELECT params FROM judges WHERE id = ?",
                                                   (judge_id,)).fetchone()[0])
                conn.execute("UPDATE judges SET params = ? WHERE id = ?",
                             (json.dumps(without_secrets(settings)), judge_id))
                project.audit(conn, "remove stored secret", "judge", name, settings=held)
    finally:
        project.pragma("secure_delete = OFF")
    kept = backups.list_backups(project.path)
    return [f"removed secrets stored in judges' settings: {secrets_note(found)}. A judge reaches its key by the name "
            "of an environment variable or a keyring entry: edit the judge to name one"
            + (f". The {len(kept)} backup(s) made before, in {kept[0].parent}, still hold them: delete those you do "
               "not need" if kept else "")]
