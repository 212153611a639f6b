"""What the command line offers before any warehouse is opened: export formats and the
query timeout. Imports nothing, so `papersift --help` does not load DuckDB."""

FORMATS = ("csv", "parquet", "jsonl", "xlsx")
DEFAULT_TIMEOUT_S = 60.0  # seconds a `papersift sql` query may run
