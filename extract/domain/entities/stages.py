"""The automatic stages that propose merges, cheapest first, as Decision rows:
the alias table, aliases stated in abstracts, and candidate pairs for embedding
similarity (found by shared rare words, then passed through the guards)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from rapidfuzz import fuzz

from papersift.extract.domain.entities.normalise import guard, tokens
from papersift.extract.domain.entities.resolve import Decision, Name
from papersift.extract.domain.entities.vocab import Vocabulary

# A word shared by more names than this says little about two names being one.
MAX_WORD_NAMES = 200
MAX_CANDIDATES = 40
# A pair the guard blocks is recorded (so `entities show` can say why it stayed apart)
# when its spellings are this close.
GUARD_RECORD_RATIO = 80.0
_STOP = {"the", "a", "an", "of", "on", "for", "in", "and", "with", "to", "via", "by",
         "dataset", "benchmark", "task", "method", "model", "learning", "data"}


def alias_decisions(kind: str, names: Mapping[str, Name],
                    vocabulary: Vocabulary) -> tuple[list[Decision], dict[str, Name]]:
    """'same' for every key the alias table lists under another key, plus the names of
    curated entities that no item spells exactly (so the entity can carry their name)."""
    decisions, virtual = [], {}
    for key, name in names.items():
        curated = vocabulary.lookup(kind, key)
        if curated is None or curated.key == key:
            continue
        surface = max(name.surfaces, key=lambda s: name.surfaces[s]) if name.surfaces else key
        decisions.append(Decision(kind, key, curated.key, "same", "alias_table", None,
                                  f"{curated.source.rsplit('/', 1)[-1]}: {surface} ⇒ "
                                  f"{curated.name}"))
        if curated.key not in names:
            virtual[curated.key] = Name(curated.key, {curated.name: 0})
    return decisions, virtual


def abstract_wins(kind: str, aliases: Sequence[Decision], stated: Iterable[Decision],
                  vocabulary: Vocabulary) -> tuple[list[Decision], list[str]]:
    """Drop alias-table merges of a short form that an abstract spells out as something
    else ("COT (conditional optimal transport)" is not the table's CoT)."""
    longs: dict[str, set[str]] = defaultdict(set)
    for decision in stated:
        if decision.kind == kind and decision.stage == "abstract":
            longs[decision.a].add(decision.b)
    kept, notes = [], []
    for decision in aliases:
        meant = longs.get(decision.a)
        if meant:
            owners = {vocabulary.lookup(kind, long) for long in meant}
            if vocabulary.lookup(kind, decision.a) not in owners:
                notes.append(f"{kind} {decision.a!r}: an abstract spells it out otherwise, "
                             "alias table not applied")
                continue
        kept.append(decision)
    return kept, notes


def drop_ambiguous(decisions: Iterable[Decision]) -> tuple[list[Decision], list[str]]:
    """Abstract-stated pairs whose short form means two things across the collection
    ("MAE" as an autoencoder in one paper, an error in another) are not merged."""
    decisions = list(decisions)
    longs: dict[tuple[str, str], set[str]] = defaultdict(set)
    for decision in decisions:
        if decision.stage == "abstract" and decision.verdict == "same":
            longs[(decision.kind, decision.a)].add(decision.b)
    ambiguous = {pair for pair, found in longs.items() if len(found) > 1}
    kept = [d for d in decisions
            if not (d.stage == "abstract" and (d.kind, d.a) in ambiguous)]
    notes = [f"{kind} {short!r} stands for {len(longs[(kind, short)])} different long forms:"
             " not merged" for kind, short in sorted(ambiguous)]
    return kept, notes


def _words(text: str, kind: str) -> set[str]:
    return {t for t in tokens(text, kind) if t not in _STOP and len(t) > 1}


def candidate_pairs(kind: str, texts: Mapping[str, str],
                    new_keys: Iterable[str]) -> tuple[list[tuple[str, str]], list[Decision]]:
    """Pairs (new key, other key) worth an embedding comparison, and the guard's
    'different' verdicts for close spellings it keeps apart.

    A pair must share a word used by at most MAX_WORD_NAMES names; each key keeps its
    MAX_CANDIDATES partners with the most shared words. The guard runs on every pair
    before any similarity is computed."""
    index: dict[str, list[str]] = defaultdict(list)
    words = {key: _words(text, kind) for key, text in texts.items()}
    for key, found in words.items():
        for word in found:
            index[word].append(key)
    pairs: set[tuple[str, str]] = set()
    blocked: list[Decision] = []
    for key in new_keys:
        shared: dict[str, int] = defaultdict(int)
        for word in words.get(key, ()):
            partners = index[word]
            if len(partners) > MAX_WORD_NAMES:
                continue
            for other in partners:
                if other != key:
                    shared[other] += 1
        best = sorted(shared, key=lambda other: (-shared[other], other))[:MAX_CANDIDATES]
        for other in best:
            pair = (key, other) if key <= other else (other, key)
            if pair in pairs:
                continue
            reason = guard(texts[pair[0]], texts[pair[1]], kind)
            if reason is None:
                pairs.add(pair)
            elif fuzz.ratio(texts[pair[0]].lower(), texts[pair[1]].lower()) >= GUARD_RECORD_RATIO:
                blocked.append(Decision(kind, *pair, "different", "guard", None, reason))
    return sorted(pairs), blocked


def embedding_decisions(kind: str, pairs: Sequence[tuple[str, str]],
                        scores: Sequence[float], threshold: float) -> list[Decision]:
    """'same' for each guarded pair whose cosine similarity reaches the threshold."""
    return [Decision(kind, a, b, "same", "embedding", round(float(score), 4),
                     f"cosine {score:.3f} ≥ {threshold:.2f}")
            for (a, b), score in zip(pairs, scores, strict=True) if score >= threshold]
