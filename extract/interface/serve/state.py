"""The running server's state: its config, the warehouse it holds (a Repository), the
CSRF secret its pages carry and the queue of API runs."""

from __future__ import annotations

import os
import secrets
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from papersift.extract.interface.serve import review
from papersift.extract.interface.serve.config import ServeConfig, ServeError
from papersift.extract.interface.serve.jobs import Jobs
from papersift.warehouse.db import snapshot_file
from papersift.warehouse.repository import Repository, open_repository
from papersift.warehouse.review_reads import has_corrections
from papersift.warehouse.store import WRITE_LOCK

P = ParamSpec("P")
T = TypeVar("T")


@dataclass
class ServerState:
    config: ServeConfig
    warehouse: Repository
    jobs: Jobs
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    # What pages read is cached until the warehouse changes. Only this process writes
    # it (it holds the file), so every change passes through changed().
    generation: int = 0
    _cache: dict[Any, Any] = field(default_factory=dict)
    _cache_lock: threading.Lock = field(default_factory=threading.Lock)
    _snapshot_key: tuple[int, int, int] | None = None  # what the published copy holds

    def changed(self, paper_id: str | None = None) -> None:
        """The warehouse was written: drop the cache; a correction of one paper keeps
        the other papers' cards (a run's progress drops everything)."""
        with self._cache_lock:
            self.generation += 1
            if paper_id is None:
                self._cache.clear()
                return
            kept = {key: value for key, value in self._cache.items()
                    if isinstance(key, tuple) and key[0] == "card" and key[1] != paper_id}
            self._cache = kept

    def cached(self, key: Any, compute: Callable[[], T]) -> T:
        """``compute()``, or its result from before if nothing was written since."""
        with self._cache_lock:
            generation = self.generation
            if key in self._cache:
                return self._cache[key]  # type: ignore[no-any-return]
        value = compute()
        with self._cache_lock:
            if self.generation == generation:
                self._cache[key] = value
        return value

    @classmethod
    def open(cls, config: ServeConfig) -> ServerState:
        """Hold the warehouse read-write (migrating it), so this process is its writer;
        a read-only server opens it read-only (it never writes)."""
        warehouse = open_repository(config.db, read_only=config.read_only)
        if not warehouse.run(has_corrections):
            warehouse.close()
            raise ServeError(f"{config.db} predates corrections: serve it once without "
                             "--read-only (that adds the table), then read-only")
        state = cls(config=config, warehouse=warehouse, jobs=Jobs(config))
        state.jobs.on_change = state.changed
        return state

    def counts(self) -> dict[str, int]:
        return self.cached("counts", lambda: self.read(review.counts))

    def find(self, *, q: str | None = None, show: str = "all", limit: int = 20,
             offset: int = 0) -> tuple[int, list[str]]:
        """review.find_papers, cached."""
        return self.cached(("find", q, show, limit, offset), lambda: self.read(
            review.find_papers, q=q, show=show, limit=limit, offset=offset))

    def cards(self, paper_ids: list[str]) -> list[review.ReviewCard]:
        """review.load_cards, each paper's card cached."""
        with self._cache_lock:
            generation = self.generation
            have = {pid: self._cache[("card", pid)] for pid in paper_ids
                    if ("card", pid) in self._cache}
        missing = [pid for pid in paper_ids if pid not in have]
        if missing:
            with self.cursor() as repo:
                loaded = review.load_cards(repo, missing)
            with self._cache_lock:
                if self.generation == generation:
                    self._cache.update((("card", c.paper_id), c) for c in loaded)
            have.update((card.paper_id, card) for card in loaded)
        return [have[pid] for pid in paper_ids if pid in have]

    def read(self, query: Callable[Concatenate[Any, P], T], /,
             *args: P.args, **kwargs: P.kwargs) -> T:
        """A warehouse query function on a cursor of its own (Repository.run)."""
        with self.cursor() as repo:
            return repo.run(query, *args, **kwargs)

    @contextmanager
    def cursor(self) -> Iterator[Repository]:
        """A connection of its own for one request, used under the process's one
        database lock (store.WRITE_LOCK, which a run's batches and corrections take too)
        and closed before the lock is let go. So no thread ever waits for the lock with
        a result open, which is what a CHECKPOINT waits for (issue 28: 60 reviewers
        hung the server when one thread's CHECKPOINT waited on a scan another thread
        kept open while it waited for the lock). Never wait for anything else inside."""
        with WRITE_LOCK, self.warehouse.cursor() as cursor:
            yield cursor

    def snapshot(self) -> Path:
        """A read-only copy of the warehouse as it is now, for the readers this server's
        write lock shuts out (`papersift sql`): checkpointed, then copied and renamed
        into place under the database lock, so no write lands in the middle of it;
        copied again only when the warehouse changed since."""
        target = snapshot_file(self.config.db)
        with self.cursor() as repo:  # holds the database lock to the end
            repo.checkpoint()
            stat = self.config.db.stat()
            key = (self.generation, stat.st_mtime_ns, stat.st_size)
            if key == self._snapshot_key and target.exists():
                return target
            partial = target.with_name(target.name + ".partial")
            shutil.copyfile(self.config.db, partial)
            os.replace(partial, target)
            self._snapshot_key = key
        return target

    def close(self) -> None:
        self.jobs.shutdown()
        self.warehouse.close()
        if self._snapshot_key is not None:
            snapshot_file(self.config.db).unlink(missing_ok=True)
