"""Canonical entities: one id for the many spellings of a benchmark, method, metric or task.

Pure code over names (no model, no warehouse): normalisation and guards (normalise.py),
the shipped and user alias tables and the metric vocabulary (vocab.py), acronyms the
abstracts state (acronyms.py), and the resolver that turns decisions into entities
(resolve.py).
"""
