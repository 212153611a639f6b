"""The context rules of assemble/18 (extract/domain/rules/context_rules.py), on invented
sentences (hand-written, not from any paper): the abstract's background, a name used as
the kind of a method, settings, models the paper trains, kinds and sizes of benchmarks,
a benchmark named directly or in apposition, and an acronym 'defined' by another one."""

from __future__ import annotations

from papersift.extract.domain.assembly.assemble import assemble
from papersift.extract.domain.lookup.assemble_spans import sentence_spans
from papersift.extract.domain.rules.context_rules import (
    a_kind_of_benchmarks,
    a_size,
    background_end,
    names_a_kind,
    resources_in_apposition,
)
from papersift.extract.domain.rules.method_decision import load_weights
from papersift.testing.drafts import paper_draft as _draft

BACKGROUND = ("Retrievers now reach 95% recall on popular benchmarks like TileSet. However, "
              "they fail on rare tiles. In response, we introduce OrbitNet, which gains 4.2% "
              "recall on RareTiles.")


def test_the_background_ends_where_the_paper_speaks_of_its_own_work() -> None:
    spans = sentence_spans(BACKGROUND)
    assert BACKGROUND[background_end(BACKGROUND, spans):].startswith("In response, we")
    own = "We propose OrbitNet. It gains 3% on TileSet."
    assert background_end(own, sentence_spans(own)) == 0  # no background before 'We'
    never = "OrbitNet gains 3% on TileSet. It is fast."
    assert background_end(never, sentence_spans(never)) == 0  # no own-work cue at all


def test_results_of_the_background_are_not_the_papers_gains() -> None:
    got = assemble(_draft(["OrbitNet"], ["TileSet", "RareTiles"],
                          [("95", "recall"), ("4.2", "recall")]), BACKGROUND)
    assert [g.value for g in got.extraction.claimed_gains] == [4.2]
    assert any("background" in reason and "'95'" in reason for reason in got.rejected)
    # benchmarks of the background stay: refusing them was worse on the held-out halves
    assert [b.name for b in got.extraction.benchmarks] == ["TileSet", "RareTiles"]


def test_a_name_that_says_what_kind_of_method_it_is_is_not_the_methods_name() -> None:
    text = ("Offline-to-online tuning (OOT) adapts policies. We propose a novel OOT "
            "algorithm that replaces the target network, and name the critic TwinRidge.")
    start = text.index("OOT algorithm")
    assert names_a_kind(text, start, start + 3)
    assembled = assemble(_draft(["OOT algorithm", "TwinRidge"]), text)
    assert "TwinRidge" in [m.name for m in assembled.extraction.methods]
    # the rule is now one feature of the decision: it lowers OOT's score (how much is
    # the trained weight's business: stop 37's tune sets hold right names it fires on)
    scores = {d.name: d for d in assembled.decisions}
    features = scores["OOT"].features
    assert "rule:kind_of_method" in features
    weights = load_weights()
    without = {name: value for name, value in features.items()
               if name != "rule:kind_of_method"}
    assert weights.score(features) < weights.score(without)
    proper = "We propose OOT, a novel algorithm for tuning."
    assert not names_a_kind(proper, proper.index("OOT"), proper.index("OOT") + 3)


def test_a_setting_is_not_a_method() -> None:
    text = ("We revisit the Sparse Orbit setting and propose TileFlow for it. TileFlow is "
            "minimax optimal.")
    got = assemble(_draft(["Sparse Orbit", "TileFlow"]), text).extraction.methods
    assert [m.name for m in got] == ["TileFlow"]


def test_a_model_the_paper_trains_is_not_a_benchmark() -> None:
    text = ("We build a tile corpus. By retraining Tilo-Net on it and fine-tuning OrbitBERT, "
            "we improve recall by 3% on the CityTiles dataset.")
    got = assemble(_draft(["TileKit"], ["Tilo-Net", "OrbitBERT", "CityTiles"]), text)
    assert [b.name for b in got.extraction.benchmarks] == ["CityTiles"]


def test_kinds_and_sizes_of_benchmarks_are_not_names() -> None:
    text = ("We present OrbitNet for open tile search (OTS). Results on diverse OTS "
            "benchmarks and a 12.5-hour dataset of orbit audio show gains.")
    start = text.index("OTS benchmarks")
    assert a_kind_of_benchmarks(text, start, start + 3)
    assert a_size("12.5-hour") and not a_size("CIFAR-10") and not a_size("3DMatch")
    got = assemble(_draft(["OrbitNet"], ["diverse OTS benchmarks", "12.5-hour"]), text)
    assert got.extraction.benchmarks == []
    assert [m.name for m in got.extraction.methods] == ["OrbitNet"]  # OTS is not a method


def test_a_benchmark_named_directly_or_in_apposition_is_a_benchmark() -> None:
    text = ("We introduce an automated auditing framework. Building on it, we construct the "
            "TileAudit benchmark of 300 cases. Our new dataset, the Orbit Tile Archive, is "
            "publicly available.")
    span = resources_in_apposition(text)
    assert [text[a:b] for a, b in span] == ["Orbit Tile Archive"]
    got = assemble(_draft(["TileAudit benchmark"]), text, "TileAudit: Auditing Tile Search")
    assert got.extraction.methods == []
    named = {b.name: b.introduced for b in got.extraction.benchmarks}
    assert named == {"TileAudit": True, "Orbit Tile Archive": True}
