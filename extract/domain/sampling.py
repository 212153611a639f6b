"""A seeded random sample of papers that does not depend on input order or chunking.

Each paper gets a rank from the hash of the seed and its id; the sample is the ``n``
lowest ranks. The same inputs and seed always give the same papers, a rerun of a sampled
run finds its answers in the cache, and a larger ``n`` keeps every paper of a smaller one.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable


def sample_rank(paper_id: str, seed: int) -> bytes:
    """Where a paper falls in the seed's random order."""
    return hashlib.sha256(f"{seed}:{paper_id}".encode()).digest()


def seeded_sample(paper_ids: Iterable[str], n: int, seed: int = 0) -> set[str]:
    """The ``n`` papers of lowest rank (every paper when there are fewer), in bounded
    memory: a heap of ``n`` entries however many ids stream past."""
    if n <= 0:
        return set()
    heap: list[tuple[bytes, str]] = []  # the n lowest ranks so far, as a max-heap (negated)
    seen: set[str] = set()
    for paper_id in paper_ids:
        if paper_id in seen:
            continue
        seen.add(paper_id)
        rank = bytes(255 - b for b in sample_rank(paper_id, seed))  # invert: max-heap
        if len(heap) < n:
            heapq.heappush(heap, (rank, paper_id))
        elif rank > heap[0][0]:
            heapq.heapreplace(heap, (rank, paper_id))
    return {paper_id for _, paper_id in heap}
