"""Issue 74: licences a company can ship. No GPL package at run time (krippendorff, GPL-3.0, was a required
dependency frozen into the bundle), a check of every run-time dependency's licence, and the texts collected for the
bundle with Qt's LGPL notice."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("licences", REPO / "packaging" / "licences.py")
licences = importlib.util.module_from_spec(spec)
sys.modules["licences"] = licences
spec.loader.exec_module(licences)


def test_no_run_time_dependency_is_under_a_licence_the_app_cannot_ship():
    dists = licences.runtime()
    names = {licences.key(d.name) for d in dists}
    assert {"pandas", "pyside6-essentials", "openai"} <= names and "krippendorff" not in names
    assert licences.problems(dists) == []


def test_the_check_refuses_a_gpl_package_and_an_unlisted_weak_copyleft_one():
    gpl = licences.Dist("krippendorff", "0.9.0", "GPL-3.0-or-later", licences.needs("GPL-3.0-or-later"))
    weak = licences.Dist("somelib", "1.0", "MPL-2.0", licences.needs("MPL-2.0"))
    qt = licences.Dist("PySide6-Essentials", "6.11", "LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only",
                       licences.needs("LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only"))
    found = licences.problems([gpl, weak, qt])
    assert len(found) == 2 and "strong copyleft" in found[0] and "not listed" in found[1]


@pytest.mark.parametrize(("expression", "needed"), [
    ("MIT", set()), ("Apache-2.0 OR BSD-3-Clause", set()), ("GPL-3.0-only", {"GPL"}),
    ("GPL-2.0-only OR MIT", set()), ("MPL-2.0 AND (Apache-2.0 OR MIT)", {"MPL"}),
    ("LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only", {"LGPL"}), ("(MIT AND AGPL-3.0) OR LGPL-3.0-only", {"LGPL"}),
    ("GPL-2.0-or-later WITH Classpath-exception-2.0", {"GPL"}), ("BSD-3-Clause AND 0BSD AND MIT AND Zlib", set())])
def test_an_spdx_expression_needs_what_every_choice_it_offers_needs(expression, needed):
    assert licences.needs(expression) == needed


def test_the_bundle_s_licence_folder_names_every_package_and_carries_qt_s_notice(tmp_path):
    dists = licences.runtime()
    folder = licences.collect(tmp_path / "licenses", dists)
    index = (folder / "INDEX.txt").read_text(encoding="utf-8")
    for d in dists:
        assert f"{d.name} {d.version} — " in index
    assert "LGPL" in (folder / "pyside6-essentials" / "NOTICE-rageval.txt").read_text(encoding="utf-8")
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in (folder / "LGPL-3.0.txt").read_text(encoding="utf-8")
    assert (folder / "pandas").is_dir() and any((folder / "pandas").iterdir())


def test_the_app_s_own_alpha_equals_the_krippendorff_package_s():
    """The oracle stays in the dev install: reviewers x targets with gaps, 2-5 coders, four levels."""
    krippendorff = pytest.importorskip("krippendorff")
    from rageval_desktop.core.review.agreement_stats import alpha

    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(200):
        coders, units, k = rng.integers(2, 6), rng.integers(2, 40), rng.integers(2, 6)
        data = rng.integers(1, k + 1, (coders, units)).astype(float)
        data[rng.random(data.shape) < rng.uniform(0, 0.5)] = np.nan
        for level in ("nominal", "ordinal", "interval", "ratio"):
            ours = alpha(data, level)
            try:
                theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
            except (ValueError, ZeroDivisionError):
                theirs = float("nan")
            assert np.isnan(ours) == np.isnan(theirs)
            if not np.isnan(ours):
                assert ours == pytest.approx(theirs, abs=1e-12)
                compared += 1
    assert compared > 500


def test_no_module_of_the_app_imports_krippendorff():
    hits = [p for p in (REPO / "rageval_desktop").rglob("*.py") if "import krippendorff" in p.read_text("utf-8")]
    assert hits == []
