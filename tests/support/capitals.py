"""A project of capital-city questions, made as a user would (`rageval new`, `import golden`, `import run`): the
fixtures of the judge-check, confidence, cascade and bias-battery tests, which differ only in their rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rageval_desktop.cli import main


def question(k: int) -> str:
    return f"What is the capital of Country{k}?"


def country(prompt: str) -> int:
    """The k of the last 'Country{k}?' a prompt asks about (scripted judges answer by it)."""
    return int(prompt[prompt.rfind("Country") + 7:].split("?")[0])


def capitals_project(folder: Path, rows: int, golden: Callable[[int], dict[str, Any]],
                     run: Callable[[int], dict[str, Any]]) -> str:
    """A project with `rows` golden questions (`golden(k)`'s fields beside id and question) and a run v1 answering
    each (`run(k)`'s fields beside id, golden_id and question). Returns its path."""
    lines = {"g.jsonl": [{"id": f"g{k}", "question": question(k), **golden(k)} for k in range(rows)],
             "v1.jsonl": [{"id": f"r{k}", "golden_id": f"g{k}", "question": question(k), **run(k)}
                          for k in range(rows)]}
    for name, found in lines.items():
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in found))
    path = str(folder / "c.rageval")
    assert main(["new", path]) == 0
    assert main(["import", "golden", path, str(folder / "g.jsonl")]) == 0
    assert main(["import", "run", path, str(folder / "v1.jsonl"), "--run", "v1"]) == 0
    return path


def short_capitals(folder: Path, rows: int) -> str:
    """`rows` one-line answers ("It is City{k}."), each with its one passage, all in the slice 'easy'."""
    return capitals_project(folder, rows, lambda k: {"gold_answer": f"City{k}.", "slice_tag": "easy"},
                            lambda k: {"answer": f"It is City{k}.",
                                       "retrieved": [{"chunk_id": f"c{k}", "text": f"City{k}."}]})


def unsure(k: int) -> bool:
    """The questions a scripted judge guesses on: one in three."""
    return k % 3 == 0
