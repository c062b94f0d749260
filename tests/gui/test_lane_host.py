"""Issue 78: the lanes report through a small interface — `LaneHost` (the project, two signals, an error, a status
line) and a `TaskBar` — not the window's widgets. A host that is no window at all runs a task and a read on them."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from rageval_desktop.gui.lanes import Lanes, TaskBar


class Host(QObject):
    read_finished = Signal(str)
    task_finished = Signal(str)

    def __init__(self, project: object) -> None:
        super().__init__()
        self.project = project
        self.last_error = ""
        self.said: list[str] = []

    def show_error(self, message: str, details: str = "") -> None:
        self.said.append(f"error: {message}")

    def show_status(self, message: str, ms: int = 6000) -> None:
        self.said.append(message)


def test_a_host_that_is_no_window_runs_a_task_and_a_read(qtbot):
    host, bar = Host(object()), TaskBar()
    lanes = Lanes(host, bar)
    got: list[object] = []

    def work(ctx):
        ctx.report(1, 2, "half way", force=True)
        return 42

    with qtbot.waitSignal(host.task_finished, timeout=10_000) as ended:
        lanes.run_task("Counting", work, on_done=got.append)
        assert bar.label.text() == "Counting" and not bar.progress.isHidden() and not bar.cancel.isHidden()
        assert lanes.run_task("Another", work) is None
        assert host.said == ["error: Please wait: Counting is still running."]
    assert ended.args == ["done"] and got == [42] and bar.progress.isHidden() and bar.cancel.isHidden()
    assert (bar.progress.value(), bar.progress.maximum(), bar.progress.toolTip()) == (1, 2, "half way")
    with qtbot.waitSignal(host.read_finished, timeout=10_000) as landed:
        lanes.run_read("page", lambda ctx: "read", on_done=got.append)
    assert landed.args == ["page"] and got == [42, "read"]

    def fails(ctx):
        raise ValueError("no such thing")

    with qtbot.waitSignal(host.task_finished, timeout=10_000) as ended:
        lanes.run_task("Failing", fails)
    assert ended.args == ["failed"] and host.last_error and host.said[-1].startswith("error: ")
