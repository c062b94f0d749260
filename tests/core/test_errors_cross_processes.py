"""An error raised where a page's numbers are computed (the app's helper process) reaches the window whole: its type,
message, hints and fields. Was: WriteFailed and NeedsMigration could not be rebuilt from a pickle (their __init__
takes keyword-only arguments), and the helper's pool broke instead."""

from __future__ import annotations

import pickle

import pytest

from rageval_desktop.core.base.errors import (
    ImportFailed,
    NeedsMigration,
    NotFound,
    RagevalError,
    UnknownChoice,
    WriteFailed,
)


@pytest.mark.parametrize("error", [
    RagevalError("plain", cli_hint="use --x", gui_hint="use the box"),
    NotFound("no run named 'v9'"),
    ImportFailed("is empty", file="r.csv", row=3, column="question"),
    WriteFailed("the disk is full", kind="disk"),
    NeedsMigration("schema 7", version=7),
    UnknownChoice("no judge named 'x'"),
])
def test_an_error_pickles_whole(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert (str(back), back.args, vars(back)) == (str(error), error.args, vars(error))
    assert (back.for_cli(), back.for_gui()) == (error.for_cli(), error.for_gui())
