"""Grounding and row building off the event loop.

Turning an outcome into rows (``pipeline.outcome_batch``: assembling and grounding the
draft, the extraction id, the long-table items) is pure CPU work on (outcome, job). On a
busy event loop it delays every other request, so a :class:`RowBuilder` with workers
hands it, a chunk of outcomes at a time, to worker processes, and whoever writes the
rows (the writer thread) waits for them. Without workers it builds the rows at once, as
before. Either way the rows are the same: the same function builds them.

A worker that dies (killed, out of memory) costs nothing: the outcomes of its chunk are
kept until their rows are written, and are built again in the writing thread.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from papersift.extract.access.outcomes import Outcome, plain_draft
from papersift.warehouse.store import Batch

if TYPE_CHECKING:
    from papersift.extract.runs.pipeline import Job

# Outcomes sent to a worker at once: one pickle round trip per chunk, not per abstract.
CHUNK = 16
# At this concurrency or more, a run's rows are built in a worker process by default.
AUTO_CONCURRENCY = 16

Build = Callable[["Outcome", "Job"], Batch]
Items = list[tuple[Outcome, "Job"]]
_SIZE = struct.Struct("!Q")


class WorkerGoneError(Exception):
    """A row worker process ended before it answered."""


def default_workers(concurrency: int) -> int:
    """Worker processes for a run: none on one CPU or at low concurrency (the loop has
    time to spare, and a process costs a second to start); else one per spare CPU, at
    most 4."""
    cpus = os.cpu_count() or 1
    if cpus < 2 or concurrency < AUTO_CONCURRENCY:
        return 0
    return min(4, cpus - 1)


def collect_workers() -> int:
    """Worker processes for grounding a file of answers (a Batch result): one per CPU,
    at most 4. Nothing else needs the CPUs then: the main process only reads the file
    and writes rows (on 2 CPUs, 50,000 answers: 221 answers/s with one worker, see
    bench/README.md)."""
    cpus = os.cpu_count() or 1
    return 0 if cpus < 2 else min(4, cpus)


def build_all(build: Build, items: Sequence[tuple[Outcome, Job]]) -> Batch:
    """The rows of every outcome, in order (what a worker runs)."""
    batch = Batch()
    for outcome, job in items:
        batch.extend(build(outcome, job))
    return batch


def _send_frame(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_SIZE.pack(len(data)) + data)
    stream.flush()


def _read_frame(stream: IO[bytes]) -> Any:
    head = stream.read(_SIZE.size)
    if len(head) < _SIZE.size:
        raise EOFError
    size = _SIZE.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class _Worker:
    """One ``python -m papersift.extract.runs.rowbuild`` process: chunks go in through a
    sender thread (the event loop never waits on a full pipe), rows come back in order
    through a reader thread that completes each chunk's future.

    A plain subprocess rather than multiprocessing: a spawned multiprocessing worker
    re-imports the caller's main script, which would run again a script without a
    ``__main__`` guard; forking a process that runs threads risks deadlocks.
    """

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "papersift.extract.runs.rowbuild"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._outbox: queue.Queue[tuple[Any, Future[Batch]] | None] = queue.Queue()
        self._waiting: deque[Future[Batch]] = deque()
        self._lock = threading.Lock()
        self._gone = False
        self._threads = [threading.Thread(target=self._send_loop, daemon=True,
                                          name="row-worker-send"),
                         threading.Thread(target=self._read_loop, daemon=True,
                                          name="row-worker-read")]
        for thread in self._threads:
            thread.start()

    def submit(self, build: Build, items: Items) -> Future[Batch]:
        future: Future[Batch] = Future()
        with self._lock:
            if self._gone:
                future.set_exception(WorkerGoneError("the row worker has ended"))
                return future
            self._waiting.append(future)
        self._outbox.put(((build, items), future))
        return future

    def _send_loop(self) -> None:
        assert self.process.stdin is not None
        while (message := self._outbox.get()) is not None:
            try:
                _send_frame(self.process.stdin, message[0])
            except (OSError, ValueError):
                self._fail_all()
                return
        with contextlib.suppress(OSError):
            self.process.stdin.close()

    def _read_loop(self) -> None:
        assert self.process.stdout is not None
        while True:
            try:
                ok, value = _read_frame(self.process.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                self._fail_all()
                return
            with self._lock:
                future = self._waiting.popleft()
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def _fail_all(self) -> None:
        with self._lock:
            self._gone = True
            waiting, self._waiting = list(self._waiting), deque()
        for future in waiting:
            if not future.done():
                future.set_exception(WorkerGoneError("the row worker ended before it answered"))

    def close(self) -> None:
        self._outbox.put(None)
        for thread in self._threads:
            thread.join(timeout=60)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """A worker's loop: (build, items) in, (True, rows) or (False, error) out, until EOF."""
    while True:
        try:
            build, items = _read_frame(source)
        except EOFError:
            return
        try:
            answer: tuple[bool, Any] = (True, build_all(build, items))
        except Exception as error:  # the caller raises it, as if built there
            answer = (False, error)
        _send_frame(sink, answer)


@dataclass
class Pending:
    """Rows on their way to the warehouse: built ones, and chunks still in a worker."""

    build: Build
    ready: Batch = field(default_factory=Batch)
    building: list[tuple[Future[Batch], Items, Build]] = field(default_factory=list)
    papers: int = 0

    def rows(self) -> Batch:
        """Every row, waiting for the workers; a chunk whose worker died is built here."""
        for future, items, build in self.building:
            try:
                rows = future.result()
            except WorkerGoneError:
                rows = build_all(build, items)
            for table, built in rows.rows.items():  # checked and copied by Batch.add already
                self.ready.rows.setdefault(table, []).extend(built)
        self.building = []
        return self.ready


class RowBuilder:
    """Collects outcomes and turns them into rows, in worker processes when it has any."""

    def __init__(self, build: Build, workers: int = 0) -> None:
        self.build = build
        self.workers = workers
        self._pool: list[_Worker] = []
        self._turn = 0
        self._chunk: Items = []
        self.pending = Pending(build)

    def use(self, build: Build) -> None:
        """Build the rows of outcomes added from now on with ``build``."""
        self._send()
        self.build = build
        self.pending.build = build

    def add(self, outcome: Outcome, job: Job) -> None:
        """Queue one outcome's rows for the next write."""
        self.pending.papers += 1
        if self.workers <= 0:
            self.pending.ready.extend(self.build(outcome, job))
            return
        if outcome.draft is not None:
            outcome.draft = plain_draft(outcome.draft)
        self._chunk.append((outcome, job))
        if len(self._chunk) >= CHUNK:
            self._send()

    def _send(self) -> None:
        if not self._chunk:
            return
        items, self._chunk = self._chunk, []
        # Started on first use, and grown when ``workers`` was raised since (a Batch
        # result file after cache hits were built by the live run's workers).
        self._pool.extend(_Worker() for _ in range(self.workers - len(self._pool)))
        worker = self._pool[self._turn % len(self._pool)]
        self._turn += 1
        self.pending.building.append((worker.submit(self.build, items), items, self.build))

    def take(self) -> Pending:
        """Everything queued so far (send its rows to the writer); starts a new batch."""
        self._send()
        taken, self.pending = self.pending, Pending(self.build)
        return taken

    def close(self) -> None:
        pool, self._pool = self._pool, []
        for worker in pool:
            worker.close()


def main() -> None:
    """Serve as a row worker on stdin/stdout (started by RowBuilder)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle
    sink = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print cannot break frames
    serve(sys.stdin.buffer, sink)


if __name__ == "__main__":
    main()
