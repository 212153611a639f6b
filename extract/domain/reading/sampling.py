"""A seeded random sample of papers that does not depend on input order or chunking.

Each paper gets a rank from the hash of the seed and its id; the sample is the ``n``
lowest ranks. The same inputs and seed always give the same papers, a rerun of a sampled
run finds its answers in the cache, and a larger ``n`` keeps every paper of a smaller one.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable


def sample_rank(paper_id: str, seed: int) -> int:
    """Where a paper falls in the seed's random order."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{paper_id}".encode()).digest(), "big")


def seeded_sample(paper_ids: Iterable[str], n: int, seed: int = 0) -> set[str]:
    """The ``n`` papers of lowest rank (every paper when there are fewer), in bounded
    memory: a heap and a set of at most ``n`` entries however many ids stream past (an id
    seen twice is counted once)."""
    if n <= 0:
        return set()
    heap: list[tuple[int, str]] = []  # (-rank, id): the highest kept rank on top
    kept: set[str] = set()
    for paper_id in paper_ids:
        if paper_id in kept:
            continue
        rank = sample_rank(paper_id, seed)
        if len(heap) < n:
            heapq.heappush(heap, (-rank, paper_id))
            kept.add(paper_id)
        elif -rank > heap[0][0]:
            _, dropped = heapq.heapreplace(heap, (-rank, paper_id))
            kept.discard(dropped)
            kept.add(paper_id)
    return kept
