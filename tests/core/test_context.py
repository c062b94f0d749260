"""The task context's cancel: a caller that went away (the app closing) stays gone."""

from __future__ import annotations

from rageval_desktop.core.base.context import TaskContext


def test_a_detached_cancel_is_not_undone_by_a_later_plain_cancel():
    """Was: closing the window cancelled a batch job twice — detached, then plain (the close event runs again once
    the project is closed) — and a job that looked between the two cancelled its remote batches (a flaky GUI test
    caught it)."""
    ctx = TaskContext()
    ctx.cancel(detach=True)
    ctx.cancel()
    assert ctx.cancelled and ctx.detached
    plain = TaskContext()
    plain.cancel()
    assert plain.cancelled and not plain.detached
