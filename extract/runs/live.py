"""Live dispatch: the jobs go through the extractor's async client from one event loop,
``concurrency`` requests in flight, while the runner writes their rows from its writer
thread."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from papersift.extract.access.extractor import Outcome
from papersift.extract.runs.jobs import BUDGET_SPENT, Job

if TYPE_CHECKING:
    from papersift.extract.runs.runner import Runner


class LiveDispatch:
    """Sends each job as its own request; the default way of a run."""

    @property
    def params(self) -> dict[str, Any]:
        return {}

    def send(self, jobs: Iterator[Job], run: Runner) -> None:
        with run.writing_in_background():
            asyncio.run(self._dispatch(jobs, run))

    async def _dispatch(self, jobs: Iterator[Job], run: Runner) -> None:
        extractor = run.extractor
        async with extractor.session(run.gate):
            running: set[asyncio.Task[None]] = set()
            try:
                for job in jobs:
                    if run.stopped_by_budget:
                        run.record(Outcome(paper_id=job.paper_id,
                                           cache_key=extractor.key_for(job.text, job.title),
                                           failure=BUDGET_SPENT))
                        continue
                    while len(running) >= run.concurrency:
                        running = await self._settle(running, run)
                    running.add(asyncio.create_task(self._extract_one(job, run)))
                while running:
                    running = await self._settle(running, run)
            finally:
                for task in running:
                    task.cancel()
                if running:
                    await asyncio.wait(running)
                # Requests that were out at Ctrl-C: their calls and a failure are stored.
                for outcome in extractor.take_interrupted():
                    if run.waiting(outcome.paper_id):
                        run.record(outcome)

    @staticmethod
    async def _settle(running: set[asyncio.Task[None]], run: Runner) -> (
            set[asyncio.Task[None]]):
        """Wait for a task to end (or a flush to be due); raise what a task raised."""
        done, running = await asyncio.wait(running, timeout=run.flush_every_s,
                                           return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            error = task.exception()
            if error is not None:
                raise error
        run.flush()
        return running

    @staticmethod
    async def _extract_one(job: Job, run: Runner) -> None:
        outcome = await run.extractor.extract_async(job.paper_id, job.text, job.title)
        # Recorded in the same step as the answer arrives: an interrupt raised by another
        # task can never drop an answer already paid for.
        run.record(outcome)
