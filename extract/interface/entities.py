"""The library behind `papersift entities`: build, list, show, merge and split canonical
entities, and run saved queries that take parameters (`query leaderboard --benchmark`)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papersift.extract.domain.entities.normalise import KINDS, name_key
from papersift.extract.domain.entities.vocab import VocabularyError, load_vocabulary
from papersift.extract.interface.served import readable
from papersift.extract.runs.canon import CanonOptions, PassSummary, canonicalise
from papersift.warehouse import Repository, Warehouse, WarehouseError, open_repository
from papersift.warehouse import entities as store
from papersift.warehouse import entity_reads as reads
from papersift.warehouse.query import QueryResult, run_sql, saved_queries


class EntityError(WarehouseError):
    """An entity or name the user asked for is unknown or ambiguous."""


def build(db: Path, options: CanonOptions = CanonOptions()) -> PassSummary:
    """Canonicalise what is new in the warehouse (nothing, when nothing changed)."""
    try:
        with Warehouse(db, create=False) as warehouse:
            return canonicalise(warehouse, options)
    except VocabularyError as error:
        raise EntityError(str(error)) from error


def list_entities(db: Path, kind: str | None = None, merged: bool = False,
                  unknown_metrics: bool = False, limit: int = 50) -> QueryResult:
    """Entities with their spellings and how many papers use them, most used first."""
    return reads.list_entities(db, kind, merged, unknown_metrics, limit)


@dataclass(frozen=True)
class EntityRef:
    kind: str
    entity_id: str
    canonical: str
    keys: tuple[str, ...]


def _entity(repo: Repository, entity_id: str) -> EntityRef | None:
    rows = repo.run(reads.entity_keys, entity_id)
    if not rows:
        return None
    return EntityRef(rows[0][0], entity_id, rows[0][1], tuple(r[2] for r in rows))


def _by_key(repo: Repository, kind: str, key: str) -> EntityRef:
    entity_id = repo.run(reads.entity_holding, kind, key)
    entity = _entity(repo, entity_id) if entity_id else None
    if entity is None:
        raise EntityError(f"no entity holds the {kind} key {key!r}")
    return entity


def find(repo: Repository, ref: str, kind: str | None = None) -> EntityRef:
    """An entity by id (``benchmark:coco``) or by any of its spellings."""
    found = _entity(repo, ref)
    if found is not None and kind in (None, found.kind):
        return found
    matches = []
    for candidate in [kind] if kind else list(KINDS):
        try:
            matches.append(_by_key(repo, candidate, name_key(ref, candidate)))
        except EntityError:
            continue
    if not matches:
        raise EntityError(f"no entity named {ref!r}{f' of kind {kind}' if kind else ''}: "
                          "see `papersift entities list` (run `papersift entities build` "
                          "after extracting)")
    if len(matches) > 1:
        raise EntityError(f"{ref!r} names a {' and a '.join(m.kind for m in matches)}: "
                          "pass --kind")
    return matches[0]


@dataclass(frozen=True)
class EntityView:
    entity: EntityRef
    spellings: list[tuple[str, str, str, int]]  # name, key, source, papers
    decisions: list[tuple[Any, ...]]  # verdict, stage, a, b, score, detail, by
    direction: str | None
    metric_kind: str | None


def show(db: Path, ref: str, kind: str | None = None) -> EntityView:
    """An entity's spellings, and every decision (automatic or user) about its keys."""
    repo = open_repository(db, read_only=True)
    try:
        entity = find(repo, ref, kind)
        keys = list(entity.keys)
        spellings = repo.run(reads.spellings, entity.kind, keys)
        decisions = repo.run(reads.decisions_about, entity.kind, keys)
        meta = repo.run(reads.metric_meta, entity.entity_id)
    finally:
        repo.close()
    return EntityView(entity, spellings, decisions, meta[0] if meta else None,
                      meta[1] if meta else None)


def merge(db: Path, refs: Sequence[str], kind: str | None = None,
          note: str | None = None) -> tuple[EntityRef, PassSummary]:
    """Make the named entities one (a user decision: it wins and survives re-runs)."""
    if len(refs) < 2:
        raise EntityError("merge needs at least two entities or names")
    with Warehouse(db, create=False) as repo:
        found = [find(repo, ref, kind) for ref in refs]
        kinds = {entity.kind for entity in found}
        if len(kinds) > 1:
            raise EntityError(f"cannot merge entities of different kinds ({', '.join(kinds)})")
        first = found[0]
        wanted = []
        for other in found[1:]:
            if other.entity_id != first.entity_id:
                wanted.append((first.kind, first.keys[0], other.keys[0], "same", note))
        # a merge overrides the user's earlier splits between these entities
        members = [key for entity in found for key in entity.keys]
        for _, _, a, b, verdict, _, _ in repo.run(store.user_decisions):
            if verdict == "different" and a in members and b in members:
                wanted.append((first.kind, a, b, "same", note or "merge overrides split"))
        if not wanted:
            raise EntityError(f"{', '.join(refs)} are already one entity ({first.entity_id})")
        repo.run(store.add_user_decisions, wanted)
        summary = canonicalise(repo, CanonOptions(embeddings=False))
        merged = _by_key(repo, first.kind, first.keys[0])
        return merged, summary


def split(db: Path, ref: str, names: Sequence[str], kind: str | None = None,
          note: str | None = None) -> tuple[list[EntityRef], PassSummary]:
    """Take ``names`` (spellings or keys) out of an entity; without names, every key of
    the entity becomes its own entity. A user decision: it wins and survives re-runs."""
    with Warehouse(db, create=False) as repo:
        entity = find(repo, ref, kind)
        if len(entity.keys) < 2:
            raise EntityError(f"{entity.entity_id} has one spelling key; nothing to split")
        if names:
            out = {name_key(name, entity.kind) for name in names}
            unknown = sorted(out - set(entity.keys))
            if unknown:
                raise EntityError(f"not spellings of {entity.entity_id}: {', '.join(unknown)} "
                                  f"(its keys: {', '.join(entity.keys)})")
            if out == set(entity.keys):
                raise EntityError("that would take every spelling out; name fewer")
            pairs = [(a, b) for a in sorted(out) for b in entity.keys if b not in out]
        else:
            pairs = [(a, b) for i, a in enumerate(entity.keys) for b in entity.keys[i + 1:]]
        repo.run(store.add_user_decisions, [(entity.kind, a, b, "different", note)
                                            for a, b in pairs])
        summary = canonicalise(repo, CanonOptions(embeddings=False))
        parts = {_by_key(repo, entity.kind, key).entity_id for key in entity.keys}
        return [r for r in (_entity(repo, p) for p in sorted(parts)) if r], summary


def saved_query(db: Path, name: str, params: Mapping[str, str | None]) -> QueryResult:
    """Run a saved query; parameters it declares (``-- params: benchmark``) come from
    ``params`` (missing ones are NULL: no filter); ``$X_key`` is X normalised."""
    queries = saved_queries()
    if name not in queries:
        raise WarehouseError(f"no saved query {name!r}; choose from {', '.join(queries)}")
    query = queries[name]
    unknown = sorted(k for k, v in params.items() if v is not None and k not in query.params)
    if unknown:
        accepted = ", ".join(query.params) or "none"
        raise WarehouseError(f"saved query {name!r} takes no {', '.join(unknown)} "
                             f"(its parameters: {accepted})")
    values: dict[str, Any] = {}
    named: dict[str, str] = {}  # kind -> the name given
    for param in query.params:
        value = params.get(param)
        values[param] = value
        if re.search(rf"\${param}_key\b", query.sql):
            kind = param if param in KINDS else "benchmark"
            values[f"{param}_key"] = name_key(value, kind) if value else None
            if value:
                named[kind] = value
    result = run_sql(readable(db), query.sql, values)  # a served warehouse: its snapshot
    if not result.rows:
        for kind, value in named.items():
            _check_known(db, kind, value)
    return result


def _check_known(db: Path, kind: str, value: str) -> None:
    """Refuse a name no entity of ``kind`` answers to, with the closest names."""
    names = reads.names_of_kind(readable(db), kind)
    key = name_key(value, kind)
    if any(n.lower() == value.lower() or name_key(n, kind) == key for n in names):
        return  # known, just without rows here
    lowered = {n.lower(): n for n in names}
    close = [lowered[n] for n in difflib.get_close_matches(value.lower(), list(lowered), n=5,
                                                           cutoff=0.5)]
    hint = f"; close: {', '.join(close)}" if close else ""
    raise EntityError(f"no {kind} named {value!r} in this warehouse{hint} (all of them: "
                      f"papersift entities list --kind {kind})")


def vocabulary_size(alias_files: Sequence[Path] | None = None) -> dict[str, int]:
    """Curated entities per kind (shipped plus the user's files)."""
    vocabulary = load_vocabulary(alias_files)
    counts = dict.fromkeys(KINDS, 0)
    for kind, _ in vocabulary.entries:
        counts[kind] += 1
    return counts
