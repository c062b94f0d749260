"""The client library is imported by one thread at a time: the job waits for the preload instead of importing beside
it (two threads importing openai at once could hand one a half-initialised pydantic module: 'cannot import name
... from partially initialized module', and the GUI's judge job failed at once)."""

from __future__ import annotations

import threading

from rageval_desktop.core.judges import llm


def test_the_client_waits_for_the_preload_and_never_imports_beside_it(monkeypatch):
    importing = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def slow_import() -> None:
        importing.set()
        release.wait(10)
        order.append("preload done")

    # a preload under way (a stand-in that takes its time)
    monkeypatch.setattr(llm, "_PRELOAD", threading.Thread(target=slow_import, daemon=True))
    llm._PRELOAD.start()
    assert importing.wait(5)

    def job() -> None:
        llm.client_library()
        order.append("client made")

    caller = threading.Thread(target=job)
    caller.start()
    caller.join(0.3)
    assert caller.is_alive() and order == []     # waiting for the preload, not importing beside it
    release.set()
    caller.join(10)
    assert order == ["preload done", "client made"]


def test_a_preload_that_failed_says_nothing_and_the_job_imports_again(monkeypatch, capsys):
    def broken() -> None:
        raise ImportError("cannot import name 'x' from partially initialized module 'y'")

    monkeypatch.setattr(llm, "_PRELOAD", None)
    monkeypatch.delitem(__import__("sys").modules, "openai", raising=False)
    import importlib

    real_import = importlib.import_module
    calls = {"n": 0}

    def flaky(name, *args, **kwargs):
        if name == "openai" and calls["n"] == 0:
            calls["n"] += 1
            broken()
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", flaky)   # what core.base.imports.import_frozen calls
    llm.preload()
    llm._PRELOAD.join(10)
    assert calls["n"] == 1                             # the preload's import failed
    assert capsys.readouterr().err == ""               # no traceback from the preload's thread
    assert llm.client_library().AsyncOpenAI is not None


def test_a_large_library_is_imported_with_the_collector_paused_and_its_objects_frozen(tmp_path, monkeypatch):
    """core.base.imports.import_frozen: no collector pass walks the library's objects while they are made, nor,
    in a command, after (gc.freeze); the collector's state is put back; a module imported already is left alone."""
    import gc
    import sys

    from rageval_desktop.core.base import imports
    from rageval_desktop.core.base.imports import import_frozen

    (tmp_path / "big_library_stand_in.py").write_text(
        "import gc\nENABLED_WHILE_IMPORTING = gc.isenabled()\nOBJECTS = [[i] for i in range(1000)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "big_library_stand_in", raising=False)
    assert gc.isenabled()
    gc.unfreeze()
    monkeypatch.setattr(imports, "_freeze", False)
    try:
        module = import_frozen("big_library_stand_in")       # the app's window: paused, not frozen
        assert module.ENABLED_WHILE_IMPORTING is False and gc.isenabled() and gc.get_freeze_count() == 0
        monkeypatch.delitem(sys.modules, "big_library_stand_in")
        imports.freeze_after()                                  # a command
        module = import_frozen("big_library_stand_in")
        assert module.ENABLED_WHILE_IMPORTING is False
        assert gc.isenabled()
        frozen = gc.get_freeze_count()
        assert frozen >= 1000                                     # its objects are in the permanent generation
        fresh = [[i] for i in range(5000)]                       # tracked, not frozen: a freeze would take them
        assert import_frozen("big_library_stand_in") is module    # imported already: nothing paused or frozen
        # Frozen objects freed meanwhile (other tests' threads) may lower the count; a freeze would add `fresh`.
        assert gc.get_freeze_count() <= frozen and len(fresh) == 5000
        gc.disable()                                              # a collector the caller paused stays paused
        monkeypatch.delitem(sys.modules, "big_library_stand_in")
        import_frozen("big_library_stand_in")
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_only_a_command_freezes_what_its_large_imports_made():
    """The command line (`rageval ...`, main reading the process's own arguments) asks for the freeze; main called
    with arguments (a test, a script driving the CLI) and the app's window do not."""
    import subprocess
    import sys

    code = ("import sys\nsys.argv = ['rageval', 'info', '/nonexistent.rageval']\n"
            "from rageval_desktop.cli import main\nfrom rageval_desktop.core.base import imports\n"
            "main(['info', '/nonexistent.rageval'])\nbefore = imports._freeze\nmain()\n"
            "print(before, imports._freeze)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "True"], out.stderr
