"""A topic map from paper vectors: areas, their number chosen from the data, labels, ids.

- Areas are spherical k-means clusters of the unit vectors (cosine), several seeded
  restarts, the tightest kept; the same input always gives the same areas.
- The number of areas comes from the mean silhouette (cosine; on a fixed sample of at
  most 2,000 papers for large collections): the most areas whose silhouette is within
  10% of the best candidate's. Every candidate's score is returned (and stored), so the
  choice can be shown and overridden. On a grown collection the previous number of
  areas is kept while it stays within that tolerance, and the previous centroids seed
  k-means.
- Labels are c-TF-IDF terms: words (and two-word phrases) frequent in one area and rare
  across areas.
- Area ids carry over from the previous map: each new area takes the id of the old area
  whose papers it holds most of (at least half of them), one to one; the rest get new ids.
- The 2-D map is the first two principal components.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
SEED = 16
SILHOUETTE_SAMPLE = 2000
MIN_CARRY_OVERLAP = 0.5
# Text vectors' silhouette falls almost steadily with k (2 areas score best on the bundled
# corpus), so the map takes the most areas whose silhouette is within 10% of the best.
SILHOUETTE_TOLERANCE = 0.10
_TOKEN = re.compile(r"[a-z][a-z0-9\-]+")
_STOP = frozenset("""
a about above across after against all along also although among an and any are as at
based be been being between both but by can could do does each either et even few for
from further given has have having here how however i if in into is it its itself just
larger less many may more most much must new no nor not novel of off on once one only
or other our ours over paper per propose proposed provide provides rather several show
shows significantly such than that the their them then there these they this those
three through thus to two under up upon us use used uses using various via was we well
were what when where whether which while who whose why will with within without would
yet existing approach approaches method methods results work framework model models
problem problems task tasks study studies often across demonstrate achieves achieve
first key specific standard state-of-the-art remain remains challenge challenges""".split())  # noqa: SIM905


@dataclass(frozen=True)
class Clustering:
    labels: IntArray  # area index of each paper (0..k-1)
    centroids: FloatArray  # (k, dim), unit length
    k: int
    scores: dict[int, float]  # mean silhouette of each candidate k
    chosen_by: str  # 'silhouette' or 'fixed'


def _normalised(x: FloatArray) -> FloatArray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out: FloatArray = (x / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


def kmeans(x: FloatArray, k: int, *, seed: int = SEED, restarts: int = 4,
           iterations: int = 60, start: FloatArray | None = None) -> tuple[IntArray, FloatArray]:
    """Spherical k-means: the labels and unit centroids of the tightest of ``restarts``
    k-means++ starts, or, given ``start`` centroids (k of them), of that one start alone:
    the nearest clustering to a previous map, so its areas stay where they were."""
    rng = np.random.default_rng(seed)
    best: tuple[float, IntArray, FloatArray] | None = None
    starts: list[FloatArray | None] = [None] * restarts
    if start is not None and len(start) == k:
        starts = [_normalised(start)]
    for initial in starts:
        centroids = _plus_plus(x, k, rng) if initial is None else initial.copy()
        labels = np.zeros(len(x), dtype=np.int64)
        for step in range(iterations):
            new = np.argmax(x @ centroids.T, axis=1).astype(np.int64)
            if step and np.array_equal(new, labels):
                break
            labels = new
            for area in range(k):
                members = x[labels == area]
                centroids[area] = members.sum(axis=0) if len(members) else \
                    x[rng.integers(len(x))]
            centroids = _normalised(centroids)
        spread = float((1.0 - (x * centroids[labels]).sum(axis=1)).sum())
        if best is None or spread < best[0]:
            best = (spread, labels, centroids)
    assert best is not None
    return best[1], best[2]


def _plus_plus(x: FloatArray, k: int, rng: np.random.Generator) -> FloatArray:
    chosen = [int(rng.integers(len(x)))]
    distance = 1.0 - x @ x[chosen[0]]
    for _ in range(1, k):
        weights = np.maximum(distance, 0.0) ** 2
        total = float(weights.sum())
        pick = int(rng.choice(len(x), p=weights / total)) if total > 0 else int(
            rng.integers(len(x)))
        chosen.append(pick)
        distance = np.minimum(distance, 1.0 - x @ x[pick])
    return x[chosen].copy()


def silhouette(x: FloatArray, labels: IntArray, *, sample: int = SILHOUETTE_SAMPLE,
               seed: int = SEED) -> float:
    """Mean silhouette with cosine distance (on a fixed sample when there are many papers)."""
    if len(set(labels.tolist())) < 2:
        return -1.0
    index = np.arange(len(x))
    if len(x) > sample:
        index = np.sort(np.random.default_rng(seed).choice(len(x), sample, replace=False))
    xs, ls = x[index], labels[index]
    distance = 1.0 - xs @ xs.T
    areas = np.unique(ls)
    onehot = (ls[:, None] == areas[None, :]).astype(np.float32)
    sizes = onehot.sum(axis=0)
    sums = distance @ onehot  # (papers, areas): summed distance to each area
    own = np.searchsorted(areas, ls)
    own_size = sizes[own]
    a = sums[np.arange(len(xs)), own] / np.maximum(own_size - 1, 1)
    means = sums / sizes[None, :]
    means[np.arange(len(xs)), own] = np.inf
    b = means.min(axis=1)
    score = np.where(own_size > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-12), 0.0)
    return float(score.mean())


def candidate_ks(n: int) -> list[int]:
    """Numbers of areas worth trying for n papers: 2 up to about 2·sqrt(n), at most 40."""
    high = max(2, min(40, round(2 * math.sqrt(n)), n - 1))
    return list(range(2, high + 1))


def cluster(vectors: FloatArray, *, k: int | None = None, seed: int = SEED,
            previous: FloatArray | None = None) -> Clustering:
    """Areas of the papers; the number chosen by silhouette unless ``k`` is given.

    ``previous``: the centroids of the last map (from its papers' current vectors). Its
    number of areas is kept while its silhouette stays within the tolerance, and its
    centroids seed one of the k-means starts, so a grown collection keeps its areas.
    """
    x = _normalised(np.asarray(vectors, dtype=np.float32))
    if len(x) < 3:
        return Clustering(np.zeros(len(x), dtype=np.int64), x[:1].copy() if len(x) else
                          np.zeros((0, x.shape[1]), np.float32), 1, {}, "fixed")
    if k is not None:
        labels, centroids = kmeans(x, min(k, len(x)), seed=seed, start=previous)
        return Clustering(labels, centroids, min(k, len(x)), {}, "fixed")
    scores: dict[int, float] = {}
    runs: dict[int, tuple[IntArray, FloatArray]] = {}
    for candidate in candidate_ks(len(x)):
        runs[candidate] = kmeans(x, candidate, seed=seed, start=previous)
        scores[candidate] = round(silhouette(x, runs[candidate][0], seed=seed), 5)
    best = max(scores.values())
    good = [c for c in scores if scores[c] >= best - SILHOUETTE_TOLERANCE * abs(best)]
    chosen = max(good)
    how = "silhouette"
    if previous is not None and len(previous) in good:
        chosen, how = len(previous), "silhouette, previous number kept"
    return Clustering(runs[chosen][0], runs[chosen][1], chosen, scores, how)


def words(text: str) -> list[str]:
    """Content words and two-word phrases of a text, lowercased (for labels)."""
    tokens = [t.strip("-") for t in _TOKEN.findall(text.lower())]
    tokens = [t for t in tokens if len(t) > 2 and t not in _STOP]
    return tokens + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]


def ctfidf_terms(documents_per_area: Sequence[Sequence[str]], top: int = 5,
                 distinct: int = 3) -> list[list[str]]:
    """For each area (its papers' texts), the terms with the highest class-based TF-IDF.

    Larger areas pick first, and a term among a larger area's first ``distinct`` terms is
    not used again in another area's first ``distinct``, so labels tell areas apart.
    """
    counts = [Counter(w for doc in docs for w in words(doc)) for docs in documents_per_area]
    frequency: Counter[str] = Counter()
    for counter in counts:
        frequency.update(counter)
    average = sum(frequency.values()) / max(len(counts), 1)
    labels: list[list[str]] = [[] for _ in counts]
    taken: set[str] = set()
    for area in sorted(range(len(counts)), key=lambda a: (-len(documents_per_area[a]), a)):
        counter = counts[area]
        total = sum(counter.values()) or 1
        scored = sorted(((count / total) * math.log(1 + average / frequency[term]), term)
                        for term, count in counter.items() if count > 1)
        picked = labels[area]
        for _, term in reversed(scored):
            if any(term in p or p in term for p in picked):
                continue  # 'causal' next to 'causal discovery' says nothing more
            if len(picked) < distinct and term in taken:
                continue
            picked.append(term)
            if len(picked) == top:
                break
        taken.update(picked[:distinct])
    return labels


def carry_ids(previous: Mapping[int, set[str]], areas: Sequence[set[str]]
              ) -> list[tuple[int, bool, float | None]]:
    """An id for each new area: (id, carried over?, share of the old area's papers kept)."""
    pairs = []
    for new_index, members in enumerate(areas):
        for old_id, old_members in previous.items():
            if old_members:
                share = len(members & old_members) / len(old_members)
                if share >= MIN_CARRY_OVERLAP:
                    pairs.append((share, len(members & old_members), old_id, new_index))
    assigned: dict[int, tuple[int, float]] = {}
    used: set[int] = set()
    for share, _, old_id, new_index in sorted(pairs, key=lambda p: (-p[0], -p[1], p[2])):
        if new_index not in assigned and old_id not in used:
            assigned[new_index] = (old_id, share)
            used.add(old_id)
    next_id = max(previous, default=0) + 1
    result: list[tuple[int, bool, float | None]] = []
    for new_index in range(len(areas)):
        if new_index in assigned:
            old_id, share = assigned[new_index]
            result.append((old_id, True, round(share, 4)))
        else:
            result.append((next_id, False, None))
            next_id += 1
    return result


def pca_2d(vectors: FloatArray) -> FloatArray:
    """The first two principal components of the vectors, scaled to [-1, 1]."""
    x = np.asarray(vectors, dtype=np.float64)
    if len(x) < 2:
        return np.zeros((len(x), 2), dtype=np.float32)
    centred = x - x.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ components[:2].T
    scale = np.abs(coords).max(axis=0)
    out: FloatArray = (coords / np.where(scale > 0, scale, 1.0)).astype(np.float32)
    return out
