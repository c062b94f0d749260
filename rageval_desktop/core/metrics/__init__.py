"""Scores people act on: retrieval metrics against gold chunk ids, judge metrics on 0–100, operations."""
