"""The runs layer in one import: ingest into the warehouse, then extract with one
:class:`Runner` from an asyncio event loop with ``concurrency`` abstracts in flight,
storing the rows in batches, one write at a time.

Every abstract of a run ends as an extraction (new or from cache) or as a failure row with
its reason. The parts live in their own modules: ingested.py (ingest rows), jobs.py (the
work list), rows.py (outcomes as rows), runner.py (the runner and its summary), live.py
(live dispatch); batch.py and distributed.py add the Batch API and Ray shards.
"""

from __future__ import annotations

from papersift.extract.runs.ingested import IngestReport, ingest_batch, ingest_into
from papersift.extract.runs.jobs import (
    BUDGET_SPENT,
    MIN_WORDS,
    UNKNOWN_FAILURE,
    Job,
    jobs_for_stored,
    jobs_from,
    too_short,
)
from papersift.extract.runs.live import LiveDispatch
from papersift.extract.runs.rows import (
    cached_outcome,
    extraction_id_for,
    extraction_rows,
    new_run_id,
    outcome_batch,
    papersift_version,
    valid_cached_outcome,
)
from papersift.extract.runs.runner import (
    FLUSH_EVERY_PAPERS,
    FLUSH_EVERY_SECONDS,
    Dispatch,
    Progress,
    Runner,
    RunStore,
    RunSummary,
    WarehouseStore,
)

__all__ = [
    "BUDGET_SPENT", "FLUSH_EVERY_PAPERS", "FLUSH_EVERY_SECONDS", "MIN_WORDS",
    "UNKNOWN_FAILURE", "Dispatch", "IngestReport", "Job", "LiveDispatch", "Progress",
    "RunStore", "RunSummary", "Runner", "WarehouseStore", "cached_outcome",
    "extraction_id_for", "extraction_rows", "ingest_batch", "ingest_into", "jobs_for_stored",
    "jobs_from", "new_run_id", "outcome_batch", "papersift_version", "too_short",
    "valid_cached_outcome",
]
