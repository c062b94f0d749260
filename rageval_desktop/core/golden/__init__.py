"""The golden set as code: reviewed edits with history, named versions and diffs, balance, promoted failures,
near-duplicate detection, and the corpus it points into."""
