"""Fixtures the core tests share."""

from __future__ import annotations

import pytest


@pytest.fixture
def small(tmp_path):
    """A project of six golden rows and one run (v1) of them, open; closed after the test."""
    from tests.core.test_judging import make_project

    p = make_project(tmp_path / "small.rageval", n=6)
    yield p
    p.close()
