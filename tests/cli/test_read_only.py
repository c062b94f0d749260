"""Issue 74: readers that read. Every read command works on a project in a folder it cannot write, on a read-only
medium and beside a WAL a crashed writer left; none changes a byte of the file or leaves a file beside it; a
permission problem is never called damage. Before: 9 of 10 read commands failed on a healthy file with "the file is
damaged (attempt to write a readonly database)" and pointed at backups; `rageval check` changed 94 bytes; the
others left `-wal`/`-shm` files beside a committed project."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rageval_desktop.cli import main
from rageval_desktop.core.store.files import refused_because

READS = [["info"], ["metrics", "--run", "v2"], ["compare", "--baseline", "v1", "--candidate", "v2"],
         ["gate", "--baseline", "v1", "--candidate", "v2"], ["report", "--run", "v2", "--out", "{out}/r.html"],
         ["failures", "--run", "v2"], ["agreement"], ["check"], ["decisions", "--verify"]]
OUTCOMES = {"gate": (0, 1, 3)}          # the gate's own verdicts; every other read exits 0


def state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def command(words: list[str], path: Path, out: Path) -> list[str]:
    return [words[0], str(path), *(w.format(out=out) for w in words[1:])]


def test_every_read_command_leaves_the_file_and_its_folder_as_they_were(demo_file, tmp_path, capsys):
    folder = tmp_path / "checkout"
    folder.mkdir()
    path = Path(shutil.copy(demo_file, folder / "eval.rageval"))
    before = state(folder)
    for words in READS:
        code = main(command(words, path, tmp_path))
        assert code in OUTCOMES.get(words[0], (0,)), (words, capsys.readouterr().err)
        assert state(folder) == before, words            # not a byte, not a sidecar file
    assert "Traceback" not in capsys.readouterr().err


def _unshare() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("mount"):
        return False
    done = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return done.returncode == 0


needs_mounts = pytest.mark.skipif(not _unshare(), reason="a read-only medium needs root and mount namespaces")


def on_read_only_medium(folder: Path, path: Path, out: Path) -> list[tuple[list[str], int, str]]:
    """Each read command, run on `folder` bind-mounted read-only (a read-only medium: even root cannot write)."""
    rageval = Path(sys.executable).parent / "rageval"
    lines = [f"mount --bind {folder} {folder}", f"mount -o remount,bind,ro {folder}",
             f"touch {folder}/probe 2>/dev/null && echo WRITABLE"]
    for words in READS:
        args = " ".join(f"'{a}'" for a in command(words, path, out))
        lines.append(f"{rageval} {args} >/dev/null 2>{out}/err; echo \"RC $? {words[0]}\"; cat {out}/err")
    done = subprocess.run(["unshare", "-m", "bash", "-c", "\n".join(lines)], capture_output=True, text=True,
                          timeout=600)
    assert "WRITABLE" not in done.stdout, "the mount is not read-only"
    found, current = [], None
    for line in done.stdout.splitlines():
        if line.startswith("RC "):
            _, code, name = line.split(maxsplit=2)
            current = [name, int(code), ""]
            found.append(current)
        elif current is not None:
            current[2] += line + "\n"
    return [(w, c, e) for w, c, e in found]


@needs_mounts
@pytest.mark.slow
def test_read_commands_work_on_a_read_only_medium_and_say_nothing_of_damage(demo_file, tmp_path):
    folder = tmp_path / "medium"
    folder.mkdir()
    path = Path(shutil.copy(demo_file, folder / "eval.rageval"))
    before = state(folder)
    found = on_read_only_medium(folder, path, tmp_path)
    assert [name for name, _, _ in found] == [w[0] for w in READS]
    for name, code, err in found:
        assert code in OUTCOMES.get(name, (0,)), (name, code, err)
        assert "damaged" not in err and "Traceback" not in err, (name, err)
    assert state(folder) == before


@needs_mounts
@pytest.mark.slow
def test_a_wal_a_crashed_writer_left_is_read_on_a_read_only_medium(demo_file, tmp_path):
    """With a `-wal` beside the file SQLite reads it in place only where it can make its `-shm`: on a read-only
    medium the read comes from a private copy, and sees what the WAL holds."""
    folder = tmp_path / "medium"
    folder.mkdir()
    path = Path(shutil.copy(demo_file, folder / "eval.rageval"))
    script = ("import os, sys\nfrom rageval_desktop.core.store.project import Project\n"
              "p = Project.open(sys.argv[1])\nwith p.write('probe') as c:\n"
              "    c.execute(\"INSERT OR REPLACE INTO meta (key, value) VALUES ('name', 'from the wal')\")\n"
              "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=120)
    assert Path(f"{path}-wal").exists()
    before = state(folder)
    found = on_read_only_medium(folder, path, tmp_path)
    for name, code, err in found:
        assert code in OUTCOMES.get(name, (0,)), (name, code, err)
        assert "damaged" not in err, (name, err)
    assert state(folder) == before
    rageval = Path(sys.executable).parent / "rageval"
    shown = subprocess.run(["unshare", "-m", "bash", "-c", f"mount --bind {folder} {folder} && mount -o "
                            f"remount,bind,ro {folder} && {rageval} info {path} --json"],
                           capture_output=True, text=True, timeout=120)
    assert "from the wal" in shown.stdout


def test_a_permission_problem_is_said_as_one_never_as_damage(tmp_path):
    path = tmp_path / "p.rageval"
    said = str(refused_because(path, sqlite3.OperationalError("unable to open database file")))
    assert "cannot be opened here" in said and "not damaged" in said and "restore" not in said
    said = str(refused_because(path, sqlite3.OperationalError("attempt to write a readonly database")))
    assert "read-only" in said and "damaged (" not in said
    damaged = str(refused_because(path, sqlite3.DatabaseError("file is not a database")))
    assert "the file is damaged" in damaged
