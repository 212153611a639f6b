"""Canonicalisation precision and recall on hand-labelled name pairs, stage by stage.

    python -m bench.canon_quality                 # bench/entities/pairs.tsv
    python -m bench.canon_quality --thresholds 0.80 0.84 0.86 0.88 0.90

Each pair is resolved on its own, as papersift would resolve the two names: the stages
are added one at a time (normalisation, acronyms stated in the pair's context sentence,
the shipped alias table, embedding similarity when the embedding extra is installed), and
also without the alias table, to show what the table adds beyond general rules. A pair is
predicted "same" when the two names end in one entity. Hard negatives are near-twins that
are different entities (CIFAR-10/CIFAR-100, GPT-4/GPT-4o).
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast, get_args, get_type_hints

from papersift.extract.domain.entities.acronyms import stated_pairs
from papersift.extract.domain.entities.normalise import clean, name_key
from papersift.extract.domain.entities.resolve import Decision, Name, resolve
from papersift.extract.domain.entities.stages import (
    alias_decisions,
    candidate_pairs,
    embedding_decisions,
)
from papersift.extract.domain.entities.vocab import Vocabulary, load_vocabulary
from papersift.extract.runs.canon import EMBED_THRESHOLD, load_embedder_or_note

PAIRS = Path(__file__).resolve().parent / "entities" / "pairs.tsv"


@dataclass(frozen=True)
class Pair:
    """Two names of one kind, labelled by hand, with the sentence that relates them."""

    kind: str
    a: str
    b: str
    label: Literal["same", "different", "hard"]  # hard: a near-twin that is another entity
    context: str = ""  # a sentence stating the acronym, when the table gives one

    @property
    def same(self) -> bool:
        return self.label == "same"


LABELS: tuple[str, ...] = get_args(get_type_hints(Pair)["label"])


def load_pairs(path: Path = PAIRS) -> list[Pair]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    rows = list(csv.reader(lines[1:], delimiter="\t", quoting=csv.QUOTE_NONE))
    for row in rows:  # a mistyped label would silently score as "not the same"
        if len(row) not in (4, 5) or row[3] not in LABELS:
            raise SystemExit(f"{path}: not a pair (kind, a, b, {'/'.join(LABELS)}[, "
                             f"context]): {row}")
    return [Pair(row[0], row[1], row[2], cast(Any, row[3]), *row[4:]) for row in rows]


def predict(pair: Pair, stages: Sequence[str], vocabulary: Vocabulary,
            scores: dict[tuple[str, str], float], threshold: float) -> bool:
    """Whether the two names end in one entity with only ``stages`` switched on."""
    key_a, key_b = name_key(pair.a, pair.kind), name_key(pair.b, pair.kind)
    if key_a == key_b:
        return True
    names = {key_a: Name(key_a, {pair.a: 1}), key_b: Name(key_b, {pair.b: 1})}
    decisions: list[Decision] = []
    if "abstract" in stages and pair.context:
        for short, long in stated_pairs(pair.context):
            short_key, long_key = name_key(short, pair.kind), name_key(long, pair.kind)
            if {short_key, long_key} == {key_a, key_b}:
                decisions.append(Decision(pair.kind, short_key, long_key, "same", "abstract"))
    empty = Vocabulary()
    table = vocabulary if "alias_table" in stages else empty
    if "alias_table" in stages:
        aliases, virtual = alias_decisions(pair.kind, names, vocabulary)
        decisions += aliases
        names = {**virtual, **names}
    if "embedding" in stages:
        texts = {key_a: clean(pair.a), key_b: clean(pair.b)}
        candidates, _ = candidate_pairs(pair.kind, texts, [key_a, key_b])
        found = [scores[(pair.a, pair.b)] for _ in candidates]
        decisions += embedding_decisions(pair.kind, candidates, found, threshold)
    entities, _ = resolve(pair.kind, names, decisions, [], table)
    return any(key_a in e.keys and key_b in e.keys for e in entities)


def score(pairs: Sequence[Pair], stages: Sequence[str], vocabulary: Vocabulary,
          scores: dict[tuple[str, str], float], threshold: float) -> dict[str, float]:
    predicted = [predict(p, stages, vocabulary, scores, threshold) for p in pairs]
    tp = sum(1 for p, same in zip(pairs, predicted, strict=True) if same and p.same)
    fp = sum(1 for p, same in zip(pairs, predicted, strict=True) if same and not p.same)
    positives = sum(1 for p in pairs if p.same)
    hard = [same for p, same in zip(pairs, predicted, strict=True) if p.label == "hard"]
    return {"tp": tp, "fp": fp, "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / positives if positives else 0.0,
            "hard_merged": sum(hard), "hard": len(hard)}


def wrong(pairs: Sequence[Pair], stages: Sequence[str], vocabulary: Vocabulary,
          scores: dict[tuple[str, str], float], threshold: float) -> list[str]:
    lines = []
    for pair in pairs:
        same = predict(pair, stages, vocabulary, scores, threshold)
        if same != pair.same:
            kind = "false merge" if same else "missed"
            lines.append(f"  {kind:11} {pair.kind:9} {pair.a!r} / {pair.b!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print precision and recall per cumulative stage on the labelled pairs."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--thresholds", type=float, nargs="*", default=[])
    parser.add_argument("--errors", action="store_true", help="list the wrong pairs")
    parser.add_argument("--scores", type=Path,
                        help="cache the pairs' cosine scores in this JSON file (per model)")
    args = parser.parse_args(argv)
    pairs = load_pairs(args.pairs)
    vocabulary = load_vocabulary([])
    embedder, note = load_embedder_or_note()
    scores: dict[tuple[str, str], float] = {}
    cached = json.loads(args.scores.read_text()) if args.scores and args.scores.exists() else {}
    if embedder is not None and cached.get("model") == embedder.model_id:
        scores = {(a, b): s for a, b, s in cached["scores"]}
    elif embedder is not None:
        texts = sorted({clean(t) for p in pairs for t in (p.a, p.b)})
        vectors = embedder.embed(texts)
        index = {t: i for i, t in enumerate(texts)}
        for p in pairs:
            scores[(p.a, p.b)] = float(vectors[index[clean(p.a)]] @ vectors[index[clean(p.b)]])
        if args.scores:
            args.scores.write_text(json.dumps({"model": embedder.model_id, "scores": [
                [a, b, s] for (a, b), s in scores.items()]}))
    same = sum(p.same for p in pairs)
    hard = sum(p.label == "hard" for p in pairs)
    print(f"{len(pairs)} pairs: {same} true aliases, {hard} hard negatives, "
          f"{len(pairs) - same - hard} other negatives ({args.pairs.name})")
    print(f"embedder: {note}")
    ladders = [["normalise"], ["normalise", "abstract"],
               ["normalise", "abstract", "alias_table"]]
    if embedder is not None:
        ladders += [["normalise", "abstract", "embedding"],
                    ["normalise", "abstract", "alias_table", "embedding"]]
    print(f"{'stages':48} {'P':>6} {'R':>6} {'TP':>4} {'FP':>4} hard merged")
    for stages in ladders:
        result = score(pairs, stages, vocabulary, scores, EMBED_THRESHOLD)
        print(f"{' + '.join(stages):48} {result['precision']:6.3f} {result['recall']:6.3f} "
              f"{result['tp']:4} {result['fp']:4} {result['hard_merged']}/{result['hard']}")
    if embedder is not None:
        for threshold in args.thresholds:
            stages = ["normalise", "abstract", "alias_table", "embedding"]
            result = score(pairs, stages, vocabulary, scores, threshold)
            print(f"  threshold {threshold:.2f}: P {result['precision']:.3f} "
                  f"R {result['recall']:.3f} hard merged {result['hard_merged']}")
    if args.errors:
        print("wrong with every stage:")
        print("\n".join(wrong(pairs, ladders[-1], vocabulary, scores, EMBED_THRESHOLD)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
