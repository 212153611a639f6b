"""The grounding rules added for abstracts outside the bundled corpus (issue 12), on
invented sentences (hand-written, not from any paper): cited and established methods,
plural acronyms, acronyms of lowercase terms, names inside URLs, the named parts of a
proposed method, and numbers that are citations, list markers, settings or the
baseline's side of 'A vs. B'."""

from __future__ import annotations

from papersift.extract.domain.assembly.assemble import assemble
from papersift.extract.domain.rules.benchmark_candidates import missed_benchmarks
from papersift.extract.domain.rules.established import (
    established_method,
    known_metric,
    never_a_benchmark,
)
from papersift.extract.domain.rules.name_rules import inside_url, lowercase_term_acronym
from papersift.testing.drafts import paper_draft as _draft


def test_cited_plural_and_established_names_are_not_the_papers_method() -> None:
    text = ("We propose TileNet, a retriever for satellite tiles. It refines Gaussian "
            "Splatting [14] with help from pretrained multimodal models (MLLMs). We compare "
            "it with FedAvg and a VITS-based TTS front end.")
    for others in (["Gaussian Splatting", "MLLMs"], ["FedAvg", "VITS-based TTS"]):
        got = assemble(_draft(["TileNet", *others]), text).extraction.methods
        assert [m.name for m in got] == ["TileNet"]


def test_the_acronym_of_a_lowercase_term_is_a_field_not_a_name() -> None:
    text = ("Federated learning (FL) trains across clients. We present Decoupled Client "
            "Routing (DCR) for FL.")
    assert lowercase_term_acronym(text, "FL")  # sentence-initial capital does not count
    assert not lowercase_term_acronym(text, "DCR")
    got = assemble(_draft(["FL", "DCR"], ["FL"]), text).extraction
    assert [m.name for m in got.methods] == ["DCR"] and got.benchmarks == []


def test_a_name_inside_a_url_and_a_url_copied_into_a_name() -> None:
    text = ("We build OrbitQA, a benchmark of orbital questions 12https://example.org/OrbitQA "
            "and evaluate on it. Code: https://example.org/TileKit")
    start = text.rindex("TileKit")
    assert inside_url(text, start, start + len("TileKit"))
    got = assemble(_draft(["TileKit"], ["OrbitQA 12https://example.org/OrbitQA"]),
                   text).extraction
    assert [b.name for b in got.benchmarks] == ["OrbitQA"] and got.methods == []


def test_named_parts_after_the_proposal_are_methods_unless_resources_or_measures() -> None:
    text = ("We propose StarDet for sparse detection. Specifically, Adaptive Center "
            "Regression (ACR) widens the range, and the Quality Aware Head (QAH) scores boxes. "
            "We report Mean Box Error (MBE) on the Sparse Road Dataset (SRD).")
    result = assemble(_draft(["StarDet"]), text)
    # Parts defined after the proposal are weighed as named parts of the paper's method
    # (since stop 39 at the level of a proposal sentence, not as proposed: on the tune
    # sets 3 of the 11 such names code alone found were gold methods), so the decision
    # refuses them here with its reasons; the measure and the dataset are no candidates.
    parts = {d.name: d for d in result.decisions if d.name != "StarDet"}
    assert set(parts) == {"ACR", "QAH"}
    assert all("listed_part" in d.features and "part_of_own" in d.features
               and "strictly_proposed" not in d.features for d in parts.values())
    assert [m.name for m in result.extraction.methods] == ["StarDet"]


def test_a_variant_joined_by_a_hyphen_is_its_own_method_but_a_glued_prefix_is_not() -> None:
    text = ("We propose Cross Modal Alignment (CMA). Adding box cues to it is termed Box-CMA. "
            "We also build Visual Cue Prompts (VCP)-Fusion. VCP-Fusion fuses cues.")
    names = [m.name for m in assemble(_draft(["CMA", "Box-CMA", "VCP", "VCP-Fusion"]),
                                      text).extraction.methods]
    assert "CMA" in names and "Box-CMA" in names and "VCP" not in names


def test_citations_list_markers_settings_and_formulas_are_not_results() -> None:
    text = ("Prior work [22] has two flaws: 1) slow decoding and 2) drift. With a 3-second "
            "prompt and error 1/ε, our method reaches 18.6 mAP, outperforming the best "
            "baseline by 3.5 mAP (AP of 9.17 vs. 3.61).")
    draft = _draft(gains=[("22", "citation"), ("1", "decoding"), ("3", "prompt length"),
                          ("3.61", "AP")])
    values = sorted(g.value for g in assemble(draft, text).extraction.claimed_gains)
    assert values == [3.5, 9.17, 18.6]  # 3.61 moved to the paper's side; metric names added


def test_the_vocabularies_know_established_models_and_metrics() -> None:
    assert established_method("GPT-4") and established_method("llama 3")
    assert established_method("FedAvg") and not established_method("TileNet")
    assert known_metric("BLEU") and not known_metric("OrbitQA")


def test_a_name_presented_as_a_method_moves_from_benchmarks_to_methods() -> None:
    text = ("We introduce Sparse Routing with Exact Merging ( SPREM ), a novel algorithm for "
            "client updates. We also design a detector named RoofNet. We evaluate both on "
            "the OrbitSet dataset.")
    got = assemble(_draft([], ["SPREM", "RoofNet", "OrbitSet"]), text).extraction
    assert [b.name for b in got.benchmarks] == ["OrbitSet"]
    assert [m.name for m in got.methods] == ["SPREM", "RoofNet"]


def test_models_formulas_and_model_nouns_are_not_benchmarks() -> None:
    text = ("Strong multimodal models, including GPT-9 and Lumen-XL, fail on TileQA. "
            "We attach our encoder to two typical ASR models and approximate $L^q$ "
            "functions on OrbitSet.")
    got = assemble(_draft(["TileKit"], ["Lumen-XL", "ASR", "L^q", "TileQA", "OrbitSet"]),
                   text)
    assert [b.name for b in got.extraction.benchmarks] == ["TileQA", "OrbitSet"]
    reasons = " ".join(got.rejected)
    assert "named as a model or method" in reasons and "inside a formula" in reasons


def test_datasets_the_text_names_in_a_list_are_added_when_the_model_drops_them() -> None:
    text = ("We evaluate TileNet on the OrbitSet, Lumen-7K and RoofQA datasets and on "
            "benchmarks such as GeoBench v1.1. EuroTiles. Moreover, it is fast.")
    assert missed_benchmarks(text, {"orbitset"}) == ["Lumen-7K", "RoofQA", "GeoBench v1.1"]
    got = assemble(_draft(["TileNet"], ["OrbitSet"]), text).extraction
    assert [b.name for b in got.benchmarks] == ["OrbitSet", "Lumen-7K", "RoofQA", "GeoBench v1.1"]


def test_lowercase_coinage_parts_and_our_spelled_name_are_the_papers_methods() -> None:
    text = ("Tiling is slow. We propose sparse tile routing (STR), a router for maps. "
            "STR consists of two components: a Patch Sorter and an Edge Mixer. "
            "Compared with FedAvg, our Tidam (TIle Decomposition And Mixing) is faster.")
    assembled = assemble(_draft(["Patch Sorter", "Edge Mixer", "FedAvg"]), text)
    got = assembled.extraction
    assert {m.name for m in got.methods} >= {"STR", "Patch Sorter", "Edge Mixer"}
    assert "FedAvg" not in {m.name for m in got.methods}
    assert next(m for m in got.methods if m.name == "STR").expansion == "sparse tile routing"
    # 'our Tidam (...)' is found by code and weighed, not lost: one capitalised word that
    # only code proposes is the kind of candidate the trained decision is least sure of
    tidam = next(d for d in assembled.decisions if d.name == "Tidam")
    assert {"coined_after_verb", "from_code", "one_word"} <= set(tidam.features)
    assert (tidam.outcome == "kept") == ("Tidam" in {m.name for m in got.methods})


def test_sizes_of_established_models_acronyms_of_them_and_language_pairs() -> None:
    assert established_method("LLaMA-3-8B") and established_method("Claude 3 Opus")
    assert established_method("Qwen2.5-7B-Instruct") and not established_method("CIFAR-10")
    assert never_a_benchmark("Yoruba-English") and not never_a_benchmark("WMT14 English-German")
    text = ("Graph Transformer (GT) is popular. We propose TileGT, evaluated on Yoruba-English "
            "pairs and on LibriSpeech test-clean and LaSOT (Single-Object) datasets.")
    got = assemble(_draft(["GT", "TileGT"], ["Yoruba-English", "LibriSpeech", "LaSOT"]), text)
    assert [m.name for m in got.extraction.methods] == ["TileGT"]
    assert [b.name for b in got.extraction.benchmarks] == ["LibriSpeech test-clean", "LaSOT"]


def test_footnote_markers_size_words_and_described_parentheses_are_not_names() -> None:
    text = ("We build TileNER<sup>1</sup>, a tagger. We test Whisper Small, Medium and Large "
            "models on the Open Tiles (Multi-Object) and RoofQA (RQA) datasets.")
    got = assemble(_draft(["TileNER"], ["Medium", "Multi-Object", "Open Tiles", "RoofQA"]),
                   text).extraction
    assert [m.name for m in got.methods] == ["TileNER"]
    assert [b.name for b in got.benchmarks] == ["Open Tiles", "RoofQA"]
