"""Heavy optional parts (the offline MiniLM model, HHEM) load lazily; without their packages (the desktop bundle
leaves torch out) the error says what to install — never an ImportError traceback."""

from __future__ import annotations

import sys

import pytest

from rageval_desktop.core.base.errors import RagevalError


def test_the_offline_embedding_model_says_what_to_install(monkeypatch):
    from rageval_desktop.core.judges import embedded

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)      # import raises ImportError
    monkeypatch.setattr(embedded, "_MODELS", {})
    with pytest.raises(RagevalError, match=r"pip install torch==2\.13\.0 sentence-transformers"):
        embedded.load_model("some/model/path")


def test_hhem_says_what_to_install(monkeypatch, tmp_path):
    from rageval_desktop.core.judges import hhem

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(RagevalError, match=r"pip install torch==2\.13\.0 transformers"):
        hhem.HHEM(tmp_path, tmp_path)


def test_starting_the_cli_and_the_api_never_imports_torch():
    import subprocess

    code = ("import sys, rageval_desktop as rv; from rageval_desktop.cli import build_parser; build_parser();"
            "rv.Project; print(any(m in sys.modules for m in ('torch', 'transformers', 'sentence_transformers')))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"
