"""Scoring stored extractions against gold: gold files, matching, field scores, errors."""
