"""Judges: rubrics (safe templates), output parsers, LLM and embedded scorers."""
