"""A canonicalisation pass over a warehouse: new spellings in, entities and the reasons
for every merge out. Incremental: only new spellings are normalised, scanned for stated
aliases and embedded; a pass over an unchanged warehouse (same spellings, alias tables
and user decisions) writes nothing and costs one anti-join."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from papersift.extract.domain.entities.acronyms import abbreviates, stated_pairs
from papersift.extract.domain.entities.normalise import KINDS, clean, name_key
from papersift.extract.domain.entities.resolve import Decision, Entity, Name, resolve
from papersift.extract.domain.entities.stages import (
    abstract_wins,
    alias_decisions,
    candidate_pairs,
    drop_ambiguous,
    embedding_decisions,
)
from papersift.extract.domain.entities.vocab import Vocabulary, VocabularyError, load_vocabulary
from papersift.warehouse import DatabaseError, Repository, Warehouse
from papersift.warehouse import entities as store

log = logging.getLogger(__name__)

# Cosine similarity (all-MiniLM-L6-v2) from which two guarded names are one entity;
# chosen on bench/entity_pairs.tsv (bench/canon_quality.py).
EMBED_THRESHOLD = 0.90


class Embedder(Protocol):
    """What the embedding stage needs (extract/access/embedding.py provides it)."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> Any: ...


@dataclass(frozen=True)
class CanonOptions:
    alias_files: Sequence[Path] | None = None  # None: PAPERSIFT_ALIASES
    embeddings: bool = True  # use the embedding stage when its extra is installed
    threshold: float = EMBED_THRESHOLD


@dataclass
class PassSummary:
    """What a pass did; ``up_to_date`` when nothing had changed and nothing was written."""

    up_to_date: bool
    new_names: int = 0
    decisions: int = 0
    changed_keys: int = 0
    entities: dict[str, int] = field(default_factory=dict)
    merged: dict[str, int] = field(default_factory=dict)  # entities with several keys
    embedder: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def load_embedder_or_note() -> tuple[Embedder | None, str]:
    """The offline sentence embedder, or None and why the stage is skipped."""
    try:
        from papersift.extract.access.embedding import load_embedder
    except ImportError as error:
        return None, f"embedding stage skipped: {error} (install papersift[embed])"
    try:
        embedder = load_embedder()
    except Exception as error:  # the module's own EmbeddingError: missing or wrong weights
        return None, f"embedding stage skipped: {error}"
    return embedder, embedder.model_id


def _names_by_kind(repo: Repository) -> dict[str, dict[str, Name]]:
    counts = repo.run(store.mention_counts)
    found: dict[str, dict[str, Name]] = {kind: {} for kind in KINDS}
    for kind, name, key in repo.run(store.all_names):
        entry = found[kind].setdefault(key, Name(key))
        entry.surfaces[name] = counts.get((kind, name), 0)
    return found


def _stated(repo: Repository, spellings: list[tuple[str, str]]
            ) -> tuple[list[Decision], list[tuple[str, str, str, str]]]:
    """Abstract-stated pairs touching a new spelling, and the long forms as names."""
    decisions: list[Decision] = []
    names: list[tuple[str, str, str, str]] = []
    for text, items in repo.run(store.texts_mentioning, spellings):
        pairs = stated_pairs(text)
        if not pairs:
            continue
        for item in items:
            kind, name = item.split("\t", 1)
            key = name_key(name, kind)
            for short, long in pairs:
                short_key, long_key = name_key(short, kind), name_key(long, kind)
                if key in (short_key, long_key) and short_key != long_key:
                    decisions.append(Decision(kind, short_key, long_key, "same", "abstract",
                                              None, f"the abstract states {long} ({short})"))
                    names += [(kind, short, short_key, "abstract"),
                              (kind, long, long_key, "abstract")]
    new = {(kind, name) for kind, name in spellings}
    for name, expansion in repo.run(store.method_expansions):
        if ("method", name) not in new:
            continue
        short, long = sorted((name, expansion), key=len)
        short_key, long_key = name_key(short, "method"), name_key(long, "method")
        # The pair the grounding found must pass the same abbreviation rule as a stated
        # pair: "Evolution Strategies (HaDES)" or "PageRank (PPR)" is a truncated or wider
        # name, not the short form's expansion (14 of 50 random merges on ICLR 2024).
        if short_key != long_key and abbreviates(short, long):
            decisions.append(Decision("method", short_key, long_key, "same", "abstract", None,
                                      f"grounding paired {long} ({short})"))
            names += [("method", short, short_key, "abstract"),
                      ("method", long, long_key, "abstract")]
    return decisions, names


def _embedding_stage(kind: str, names: dict[str, Name], new_keys: set[str],
                     embedder: Embedder, threshold: float) -> list[Decision]:
    texts = {key: clean(max(name.surfaces, key=lambda s: (name.surfaces[s], s)))
             for key, name in names.items() if name.surfaces}
    pairs, blocked = candidate_pairs(kind, texts, sorted(new_keys & set(texts)))
    if not pairs:
        return blocked
    keys = sorted({key for pair in pairs for key in pair})
    position = {key: i for i, key in enumerate(keys)}
    vectors = embedder.embed([texts[key] for key in keys])
    scores = [float(vectors[position[a]] @ vectors[position[b]]) for a, b in pairs]
    return [*blocked, *embedding_decisions(kind, pairs, scores, threshold)]


def _as_decision(row: tuple[Any, ...]) -> Decision:
    kind, a, b, verdict, stage, score, detail = row
    return Decision(kind, a, b, verdict, stage, score, detail or "")


def _user(repo: Repository) -> list[Decision]:
    return [Decision(kind, a, b, verdict, "user", None, note or "")
            for _, kind, a, b, verdict, note, _ in repo.run(store.user_decisions)]


def _resolve_all(names: dict[str, dict[str, Name]], decisions: Sequence[Decision],
                 user: Sequence[Decision], vocabulary: Vocabulary
                 ) -> tuple[dict[str, list[Entity]], list[str]]:
    kept, notes = drop_ambiguous(d for d in decisions if d.stage != "alias_table")
    result = {}
    for kind in KINDS:
        aliases, virtual = alias_decisions(kind, names[kind], vocabulary)
        aliases, conflicts = abstract_wins(kind, aliases, kept, vocabulary)
        notes += conflicts
        entities, _ = resolve(kind, {**virtual, **names[kind]},
                              [*aliases, *(d for d in kept if d.kind == kind)],
                              [d for d in user if d.kind == kind], vocabulary)
        result[kind] = entities
    return result, notes


def entities_now(repo: Repository, vocabulary: Vocabulary
                 ) -> dict[str, list[Entity]]:
    """Every kind's entities from the stored names and decisions (what a pass would store)."""
    stored = [_as_decision(row) for row in repo.run(store.stored_decisions)]
    return _resolve_all(_names_by_kind(repo), stored, _user(repo), vocabulary)[0]


def _assignments(resolved: dict[str, list[Entity]], vocabulary: Vocabulary
                 ) -> dict[tuple[str, str], tuple[Any, ...]]:
    rows = {}
    for kind, entities in resolved.items():
        for entity in entities:
            curated = vocabulary.lookup(kind, entity.entity_id.split(":", 1)[1])
            direction = curated.direction if curated else None
            metric_kind = curated.metric_kind if curated else None
            for key in entity.keys:
                rows[(kind, key)] = (entity.entity_id, entity.display, direction, metric_kind)
    return rows


def canonicalise(repo: Repository, options: CanonOptions = CanonOptions(),
                 embedder: Embedder | None = None) -> PassSummary:
    """One pass: skip when nothing changed, else add the new spellings, run the stages
    on them, resolve, and store the decisions and every key whose entity changed.

    With ``options.embeddings`` the embedding stage compares every key it has not
    compared before (also keys an earlier pass without embeddings added)."""
    started = time.perf_counter()
    vocabulary = load_vocabulary(options.alias_files)
    last = repo.run(store.last_pass)
    spellings = repo.run(store.new_spellings)
    user_seq = repo.run(store.user_seq)
    pending = repo.run(store.unembedded_keys) if options.embeddings else []
    unchanged = (not spellings and last.vocabulary in (vocabulary.fingerprint, None)
                 and last.user_seq == user_seq and (last.seq > 0 or user_seq == 0))
    if unchanged and not pending:
        return PassSummary(up_to_date=True, seconds=time.perf_counter() - started)
    summary = PassSummary(up_to_date=False, new_names=len(spellings))
    new_rows = [(kind, name, name_key(name, kind), "items") for kind, name in spellings]
    stated, stated_names = _stated(repo, spellings) if spellings else ([], [])
    names = _names_by_kind(repo)  # stored and new names, before the similarity stage
    for kind, name, key, _ in [*new_rows, *stated_names]:
        names[kind].setdefault(key, Name(key)).surfaces.setdefault(name, 0)
    to_embed: dict[str, set[str]] = defaultdict(set)
    for kind, key in pending:
        to_embed[kind].add(key)
    similar: list[Decision] = []
    embedded: list[tuple[str, str, str]] = []
    if options.embeddings:
        for kind, _, key, _ in [*new_rows, *stated_names]:
            to_embed[kind].add(key)
        if embedder is None:
            embedder, summary.embedder = load_embedder_or_note()
        else:
            summary.embedder = embedder.model_id
        if embedder is None:
            summary.notes.append(summary.embedder)
            if unchanged:  # only the embedding stage had work, and it cannot run
                return PassSummary(up_to_date=True, embedder=summary.embedder,
                                   seconds=time.perf_counter() - started,
                                   notes=summary.notes)
        else:
            for kind in KINDS:
                similar += _embedding_stage(kind, names[kind], to_embed[kind], embedder,
                                            options.threshold)
                embedded += [(kind, key, embedder.model_id) for key in sorted(to_embed[kind])]
    else:
        summary.embedder = "embedding stage not run in this pass"
    aliases = [d for kind in KINDS
               for d in alias_decisions(kind, names[kind], vocabulary)[0]]
    recorded = {(d[0], d[1], d[2], d[4]) for d in repo.run(store.stored_decisions)}
    fresh = [d for d in [*stated, *similar, *aliases]
             if (d.kind, d.a, d.b, d.stage) not in recorded]
    fresh = list({(d.kind, d.pair, d.stage): d for d in fresh}.values())
    stored = [_as_decision(row) for row in repo.run(store.stored_decisions)]
    resolved, notes = _resolve_all(names, [*stored, *fresh], _user(repo), vocabulary)
    summary.notes += notes
    current = repo.run(store.current_assignments)
    target = _assignments(resolved, vocabulary)
    changed = [(kind, key, *value) for (kind, key), value in sorted(target.items())
               if current.get((kind, key)) != value]
    summary.decisions, summary.changed_keys = len(fresh), len(changed)
    for kind, entities in resolved.items():
        summary.entities[kind] = len(entities)
        summary.merged[kind] = sum(1 for e in entities if len(e.keys) > 1)
    summary.seconds = time.perf_counter() - started
    repo.run(store.write_pass, store.PassRows(
        names=[*new_rows, *stated_names],
        decisions=[(d.kind, d.a, d.b, d.verdict, d.stage, d.score, d.detail) for d in fresh],
        assignments=changed, vocabulary=vocabulary.fingerprint, user_seq=user_seq,
        seconds=summary.seconds, embedder=summary.embedder, notes="; ".join(summary.notes),
        embedded=embedded))
    return summary


def entities_after_run(warehouse: Warehouse) -> PassSummary | None:
    """The pass a run ends with, so new spellings get their entities (the cheap stages;
    the embedding stage runs in `papersift entities build`). The run's rows are
    stored already: a broken alias file or a failed pass is logged (and `papersift
    entities build` shows it), never turned into a failed run."""
    try:
        return canonicalise(warehouse, CanonOptions(embeddings=False))
    except (VocabularyError, DatabaseError) as error:
        log.warning("canonical entities not updated: %s (run `papersift entities build`)",
                    error)
        return None
