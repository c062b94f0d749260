"""The screenshot gallery: every page and dialog of the app on the demo project, at 1280x720 and 1024x768, in the
light and the dark theme, into docs/screenshots/gallery/<theme>-<size>/, with an index (gallery/README.md).

Pages are rendered by the app itself (`rageval-desktop --view PAGE --size WxH --screenshot PNG`, which waits for the
page's numbers); dialogs are opened in one window the way the menus open them, each drawn as soon as it shows.

    QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 .venv/bin/python docs/screenshots/render.py [--only light-1280x720]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "screenshots" / "gallery"
SIZES = ((1280, 720), (1024, 768))
THEMES = ("light", "dark")

# (file name, what it shows, the app's arguments)
PAGES: tuple[tuple[str, str, list[str]], ...] = (
    ("golden", "Golden set: the rows, their slices and status", []),
    ("runs", "A run's rows with the triage bar and the detail pane", ["--run", "v2"]),
    ("dashboard", "Dashboard: each slice's metrics with their intervals", ["--run", "v2", "--view", "dashboard"]),
    ("compare", "Compare: v2 against v1 per slice, with the gate's verdict", ["--view", "compare"]),
    ("failures", "Failures: rows by failure class", ["--run", "v2", "--view", "failures"]),
    ("judges", "Judges: each judge, its licence and what it would cost", ["--view", "judges"]),
    ("jobs", "Jobs: the judge jobs, their progress and what they cost", ["--view", "jobs"]),
    ("review", "Review: the blind card, its scale and keys", ["--view", "review"]),
    ("pairwise", "Pairwise: two runs' answers side by side, blind to run and judge, rated by keys",
     ["--view", "pairwise"]),
    ("audit", "Audit: judge-human agreement, verdicts and licences; whether the audit holds on v2",
     ["--run", "v2", "--view", "audit"]),
    ("team", "Team: reviewers' agreement and the disagreements to settle", ["--view", "team"]),
)

DIALOGS = ("add-judge", "rubric-editor", "import", "export-packs", "preferences", "command-palette", "shortcuts",
           "history", "golden-row", "about")


def render_pages(demo: Path, theme_dir: Path, size: tuple[int, int], target: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1", "RAGEVAL_DATA_DIR": str(theme_dir)}
    for name, _what, args in PAGES:
        subprocess.run([sys.executable, "-c", "import sys; from rageval_desktop.gui.app import main; sys.exit(main())",
                        str(demo), *args, "--size", f"{size[0]}x{size[1]}",
                        "--screenshot", str(target / f"{name}.png")], env=env, check=True, capture_output=True,
                       timeout=120)


def render_dialogs(demo: Path, size: tuple[int, int], target: Path) -> None:
    """In this process: one window on the demo; each dialog opened by the action a menu calls. A modal dialog is
    drawn when it would start its own event loop, then closed; a dialog shown without one is found and drawn."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QWidget

    from rageval_desktop.core.judges.registry import add_judge
    from rageval_desktop.core.store.project import Project
    from rageval_desktop.gui.app import make_app
    from rageval_desktop.gui.main_window import MainWindow

    project = Project.open(demo)       # an LLM judge, whose rubric the rubric editor shows (the demo has none)
    add_judge(project, "correctness-gpt", "correctness", "llm", model="gpt-4o-mini")
    project.close()
    app = make_app()
    window = MainWindow()
    window.resize(*size)
    window.show()
    opened: list[str] = []
    window.project_opened.connect(lambda p: opened.append(str(p)))
    window.open_path(demo)
    wait(app, lambda: bool(opened) and not window.rows.rows_pending)
    current = {"name": ""}

    def draw(dialog: QWidget) -> None:
        import time

        dialog.show()
        end = time.monotonic() + 1.0      # what a dialog reads on a thread (the import's preview) arrives
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)
        dialog.grab().save(str(target / f"dialog-{current['name']}.png"))

    def fake_exec(dialog: QDialog) -> int:
        draw(dialog)
        dialog.reject()
        return int(QDialog.DialogCode.Rejected.value)

    def fake_about(parent: QWidget, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, title, text, QMessageBox.StandardButton.Ok, parent)
        fake_exec(box)

    QDialog.exec = fake_exec            # type: ignore[method-assign]
    QMessageBox.exec = fake_exec        # type: ignore[method-assign]
    QMessageBox.about = fake_about      # type: ignore[method-assign,assignment]
    from rageval_desktop.core.demo import write_demo_files
    from rageval_desktop.core.judges.registry import list_judges

    run_file = next(p for p in write_demo_files(target.parent / ".files") if p.name == "outputs-v2.jsonl")
    assert window.project is not None
    judge = next((j.name for j in list_judges(window.project) if j.calls_llm), None)

    def shot(name: str, action: Callable[[], object]) -> None:
        current["name"] = name
        before = {id(w) for w in QApplication.topLevelWidgets() if w.isVisible()}
        action()
        for _ in range(20):
            app.processEvents()
        for widget in QApplication.topLevelWidgets():
            if id(widget) not in before and widget.isVisible() and isinstance(widget, QDialog):
                draw(widget)
                widget.close()

    shot("add-judge", window.judging.add_llm_judge)
    shot("rubric-editor", lambda: window.judging.rewrite_rubric(judge))
    shot("import", lambda: window.files.import_file(run_file, ask=True, kind="run", run_name="v3"))
    shot("export-packs", window.files.export_packs)
    shot("preferences", window.show_preferences)
    shot("command-palette", window.show_palette)
    shot("shortcuts", window.files.show_shortcuts)
    shot("history", window.show_history)
    shot("golden-row", lambda: window.golden.edit_golden(None))
    shot("about", window.files.show_about)
    QTimer.singleShot(0, window.close)
    wait(app, lambda: not window.isVisible() and window.closing == 0)


def wait(app: object, done: Callable[[], bool], seconds: float = 30.0) -> None:
    import time

    from PySide6.QtWidgets import QApplication

    end = time.monotonic() + seconds
    while not done() and time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def index(shown: list[str]) -> str:
    lines = ["# The screenshot gallery", "",
             "Every page and dialog on the demo project, at 1280x720 and 1024x768, light and dark. Made by",
             "`QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 .venv/bin/python docs/screenshots/render.py`.", ""]
    first = "light-1280x720" if "light-1280x720" in shown else shown[0]
    for name, what, _ in PAGES:
        lines += [f"## {what}", "", f"![{what}]({first}/{name}.png)", "",
                  "Also: " + " · ".join(f"[{v}]({v}/{name}.png)" for v in shown if v != first), ""]
    lines += ["## Dialogs", ""]
    for name in DIALOGS:
        lines += [f"- {name}: " + " · ".join(f"[{v}]({v}/dialog-{name}.png)" for v in shown)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="one variant, e.g. dark-1024x768")
    parser.add_argument("--dialogs-for", help=argparse.SUPPRESS)    # (the child process that draws dialogs)
    parser.add_argument("--index-only", action="store_true", help="write gallery/README.md from what is there")
    args = parser.parse_args()
    if args.index_only:
        (OUT / "README.md").write_text(index(sorted(p.name for p in OUT.iterdir() if p.is_dir())))
        return
    if args.dialogs_for:
        demo, width, height, target = args.dialogs_for.split("|")
        render_dialogs(Path(demo), (int(width), int(height)), Path(target))
        return
    variants = [(t, s) for t in THEMES for s in SIZES if not args.only or args.only == f"{t}-{s[0]}x{s[1]}"]
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo.rageval"
        subprocess.run([sys.executable, "-m", "rageval_desktop", "demo", str(demo)], check=True, capture_output=True)
        for theme, size in variants:
            name = f"{theme}-{size[0]}x{size[1]}"
            target = OUT / name
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            data = Path(tmp) / f"settings-{theme}"
            data.mkdir(exist_ok=True)
            (data / "settings.ini").write_text(f"[General]\ntheme={theme}\n")
            copy = Path(tmp) / name / "demo.rageval"
            copy.parent.mkdir()
            shutil.copy(demo, copy)
            render_pages(copy, data, size, target)
            env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1", "RAGEVAL_DATA_DIR": str(data)}
            subprocess.run([sys.executable, __file__, "--dialogs-for", f"{copy}|{size[0]}|{size[1]}|{target}"],
                           env=env, check=True, timeout=300)
            print(f"{name}: {len(list(target.glob('*.png')))} screenshots")
        shutil.rmtree(OUT / ".files", ignore_errors=True)
    shown = sorted(p.name for p in OUT.iterdir() if p.is_dir())
    (OUT / "README.md").write_text(index(shown))


if __name__ == "__main__":
    main()
