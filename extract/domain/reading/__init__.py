"""Reading input: text, JSONL, CSV and Parquet rows to papers; record checks; a seeded sample."""
