"""From names and merge decisions to entities: a union-find in priority order.

User decisions come first and always win: a user "same" joins two names, a user
"different" forbids any chain of merges that would put them together. Then the
automatic stages, most trusted first: the alias table, aliases the abstracts state,
the LLM, embedding similarity (highest score first). Every accepted merge is kept with
its reason, so an entity can say why each of its names belongs to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from papersift.extract.domain.entities.vocab import Vocabulary

# The order stages are applied in; earlier ones win when a user "different" forces a choice.
STAGE_ORDER = ("user", "alias_table", "abstract", "llm", "embedding")


@dataclass(frozen=True)
class Decision:
    """One verdict about two keys of one kind: 'same' or 'different', with its reason."""

    kind: str
    a: str
    b: str
    verdict: str  # same / different
    stage: str  # user / alias_table / abstract / llm / embedding / guard
    score: float | None = None
    detail: str = ""

    @property
    def pair(self) -> tuple[str, str]:
        return (self.a, self.b) if self.a <= self.b else (self.b, self.a)


@dataclass
class Name:
    """A normalised key with the surface spellings seen for it and how often."""

    key: str
    surfaces: dict[str, int] = field(default_factory=dict)

    @property
    def mentions(self) -> int:
        return sum(self.surfaces.values())


@dataclass(frozen=True)
class Entity:
    entity_id: str
    kind: str
    display: str
    keys: tuple[str, ...]
    merges: tuple[Decision, ...]  # the decisions that joined its keys


class _Forest:
    def __init__(self, keys: Iterable[str]) -> None:
        self.parent = {key: key for key in keys}
        self.apart: dict[str, set[str]] = {}

    def find(self, key: str) -> str:
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:
            self.parent[key], key = root, self.parent[key]
        return root

    def forbid(self, a: str, b: str) -> None:
        self.apart.setdefault(a, set()).add(b)
        self.apart.setdefault(b, set()).add(a)

    def union(self, a: str, b: str, members: dict[str, list[str]]) -> bool:
        root_a, root_b = self.find(a), self.find(b)
        if root_a == root_b:
            return False
        small, large = sorted((root_a, root_b), key=lambda r: len(members[r]))
        for key in members[small]:
            if any(self.find(other) == large for other in self.apart.get(key, ())):
                return False
        self.parent[small] = large
        members[large] += members.pop(small)
        return True


def _latest_user(decisions: Iterable[Decision]) -> dict[tuple[str, str], Decision]:
    latest: dict[tuple[str, str], Decision] = {}
    for decision in decisions:  # in the order they were made: a later one replaces
        latest[decision.pair] = decision
    return latest


def _priority(decision: Decision) -> tuple[int, float, str, str]:
    rank = STAGE_ORDER.index(decision.stage) if decision.stage in STAGE_ORDER else 99
    return (rank, -(decision.score or 0.0), *decision.pair)


def _display(kind: str, keys: list[str], names: Mapping[str, Name],
             vocabulary: Vocabulary) -> tuple[str, str]:
    """(display name, anchor key): the curated name if any, else the commonest spelling."""
    for key in sorted(keys):
        curated = vocabulary.lookup(kind, key)
        if curated is not None and curated.key in keys:
            return curated.name, curated.key
    # the commonest spelling; on a tie the shorter one (DPO), for tasks the longer
    # ("generative recommendation", not "GR")
    sign = 1 if kind == "task" else -1
    best_key, best_surface, best_rank = keys[0], keys[0], (0, 0, "")
    for key in keys:
        for surface, count in names[key].surfaces.items():
            rank = (count, sign * len(surface), surface)
            if rank > best_rank or best_rank == (0, 0, ""):
                best_key, best_surface, best_rank = key, surface, rank
    return best_surface, best_key


def resolve(kind: str, names: Mapping[str, Name], automatic: Iterable[Decision],
            user: Iterable[Decision], vocabulary: Vocabulary) -> tuple[list[Entity],
                                                                        list[Decision]]:
    """Entities of one kind, and the automatic 'same' decisions a user decision refused."""
    forest = _Forest(names)
    members = {key: [key] for key in names}
    latest = _latest_user(d for d in user if d.a in names and d.b in names)
    for decision in latest.values():
        if decision.verdict == "different":
            forest.forbid(decision.a, decision.b)
    same = [d for d in latest.values() if d.verdict == "same"]
    auto = [d for d in automatic if d.verdict == "same" and d.a in names and d.b in names
            and d.pair not in latest]
    accepted: dict[str, list[Decision]] = {}
    refused: list[Decision] = []
    for decision in sorted([*same, *auto], key=_priority):
        if forest.union(decision.a, decision.b, members):
            accepted.setdefault(decision.a, []).append(decision)
        elif forest.find(decision.a) != forest.find(decision.b):
            refused.append(decision)
    entities = []
    for root, keys in members.items():
        keys.sort()
        display, anchor = _display(kind, keys, names, vocabulary)
        key_set = set(keys)
        merges = tuple(d for key in keys for d in accepted.get(key, []) if d.b in key_set)
        entities.append(Entity(f"{kind}:{anchor}", kind, display, tuple(keys), merges))
        del root
    entities.sort(key=lambda e: e.entity_id)
    return entities, refused
