"""Extractions started through the API: one worker thread runs them one at a time
through the same pipeline, cache and warehouse as `papersift run`, so the server stays
the warehouse's one writer. Runs report progress and can be cancelled; a cancelled run
ends like a Ctrl-C'd one (status ``interrupted``: what was answered is stored)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from papersift.extract.interface.app import run_inputs
from papersift.extract.interface.serve.config import ServeConfig
from papersift.extract.runs.pipeline import RunSummary
from papersift.warehouse.store import RunCounts


class _RunCancelled(KeyboardInterrupt):
    """Raised inside a run's progress callback when its job is cancelled."""


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _no_counts() -> RunCounts:
    return RunCounts(n_abstracts=0, n_extracted=0, n_cached=0, n_failed=0, prompt_tokens=0,
                     completion_tokens=0)


# The counts a job shows in the API, by their name there (RunCounts' n_NAME).
SHOWN_COUNTS = ("abstracts", "extracted", "cached", "failed")


@dataclass
class Job:
    """A run started through the API, as its progress reports it."""

    job_id: str
    inputs: list[str]
    use_cache: bool
    status: str = "queued"  # queued / running / finished / interrupted / cancelled / failed
    created: str = field(default_factory=_now)
    started: str | None = None
    finished: str | None = None
    run_id: str | None = None
    progress: RunCounts = field(default_factory=_no_counts)  # the run's counts so far
    error: str | None = None
    summary: str | None = None
    cancel_requested: bool = False

    @property
    def done(self) -> int:
        """Abstracts finished so far: extracted, from cache or failed."""
        counts = self.progress
        return counts.n_extracted + counts.n_cached + counts.n_failed

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        counts = data.pop("progress")
        data.update({name: counts[f"n_{name}"] for name in SHOWN_COUNTS}, done=self.done)
        return data


class Jobs:
    """The queue of API runs (one at a time) and the single-abstract extractions."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="papersift-run")
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self.inputs_dir = config.db.parent / f"{config.db.name}.serve-inputs"
        self.on_change: Callable[[], None] = lambda: None  # told when a run wrote rows

    # -- inputs written by the API ----------------------------------------------------

    def write_abstracts(self, abstracts: list[dict[str, Any]]) -> Path:
        """Abstracts sent in a request, as a JSONL file (it is their recorded source)."""
        self.inputs_dir.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in abstracts)
        digest = hashlib.sha256(lines.encode()).hexdigest()[:12]
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        path = self.inputs_dir / f"api-{stamp}-{digest}.jsonl"
        path.write_text(lines, encoding="utf-8")
        return path

    # -- runs ------------------------------------------------------------------------

    def submit(self, inputs: list[str], use_cache: bool = True) -> Job:
        job = Job(job_id="job_" + uuid.uuid4().hex[:12], inputs=inputs, use_cache=use_cache)
        with self._lock:
            self._jobs[job.job_id] = job
        self._executor.submit(self._run, job)
        return job

    def extract_now(self, path: Path) -> tuple[Job, Future[None]]:
        """Run one input file next in the queue; the caller waits on the future."""
        job = Job(job_id="job_" + uuid.uuid4().hex[:12], inputs=[str(path)], use_cache=True)
        with self._lock:
            self._jobs[job.job_id] = job
        return job, self._executor.submit(self._run, job)

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def all(self) -> list[Job]:
        with self._lock:
            return sorted(self._jobs.values(), key=lambda job: job.created, reverse=True)

    def cancel(self, job_id: str) -> Job | None:
        job = self.get(job_id)
        if job is not None and job.status in ("queued", "running"):
            job.cancel_requested = True
            if job.status == "queued":
                job.status = "cancelled"
                job.finished = _now()
        return job

    def shutdown(self) -> None:
        """Cancel what is queued or running and wait for the worker to stop."""
        for job in self.all():
            self.cancel(job.job_id)
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _progress(self, job: Job) -> Any:
        def on_event(event: str, summary: RunSummary) -> None:
            job.run_id = summary.run_id
            job.progress = summary.counts()
            self.on_change()
            if event == "advance" and job.cancel_requested:
                raise _RunCancelled
        return on_event

    def _run(self, job: Job) -> None:
        if job.cancel_requested:
            return
        job.status = "running"
        job.started = _now()
        settings = dataclasses.replace(self.config.run_settings, db=self.config.db,
                                       use_cache=job.use_cache)
        try:
            _, summary = run_inputs(job.inputs, settings, progress=self._progress(job),
                                    transport=self.config.transport,
                                    endpoint=self.config.endpoint)
            job.summary = summary.line()
            job.status = summary.status
        except _RunCancelled:
            job.status = "cancelled"
        except Exception as error:  # the job says why; the server keeps serving
            job.status = "failed"
            job.error = f"{type(error).__name__}: {error}"
        finally:
            job.finished = _now()
            self.on_change()
