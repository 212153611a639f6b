"""Orchestration layer: runs over many abstracts (live async dispatch, Batch API mode,
Ray shards) and what they write to the warehouse."""
