"""Domain layer: pure functions of text and drafts, with no HTTP client, no LLM SDK, no
duckdb and nothing of the layers above. By concern:

- reading/: Reading input: text, JSONL, CSV and Parquet rows to papers; record checks; a
  seeded sample.
- lookup/: Finding the draft's words in the abstract: quote alignment, sentence spans, whole
  words.
- rules/: Wording rules: whose name it is, names the field has, the method decision,
  code-found items.
- assembly/: From a model's draft to a grounded extraction: names, gains, attributes,
  methods, user fields.
- review/: A reviewer's edits grounded again as a model's are; a reviewed paper as a
  few-shot example.
- evaluation/: Scoring stored extractions against gold: gold files, matching, field scores,
  errors.
- entities/: canonical entities, one id per name.

At the top: fields.py (a run's fields, the whole of grounding, rows per field: what the
layers above call); user_draft.py (the draft class of a run with user fields);
prices.py (the price table); topics.py (the topic map).
"""
