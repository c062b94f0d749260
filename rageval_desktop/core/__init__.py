"""Everything that is not UI. Never imports Qt (enforced by tests/core/test_no_qt.py and import-linter)."""
