"""The rules that tell the paper's own method from the other names in an abstract, on
invented sentences (hand-written, not from any paper): baselines, building blocks,
fragments, authors, problem classes and findings are refused; a coined name right after a
proposal verb is found even when the model missed it; a name the abstract calls a
benchmark is stored as one."""

from __future__ import annotations

from papersift.extract.domain.assembly.assemble import assemble, sentence_spans
from papersift.extract.domain.rules.name_rules import coined_proposals, strictly_proposed
from papersift.schemas import PaperDraft


def _draft(methods: list[str], benchmarks: list[str] | None = None) -> PaperDraft:
    return PaperDraft.model_validate({
        "tasks": ["graph learning"], "methods": methods,
        "benchmarks": [{"name": b, "new": False} for b in benchmarks or []],
        "gains": [], "types": ["method"]})


def _methods(text: str, methods: list[str], benchmarks: list[str] | None = None) -> list[str]:
    return [m.name for m in assemble(_draft(methods, benchmarks), text).extraction.methods]


def test_a_proposal_verb_introduces_a_name_unless_something_sits_between() -> None:
    text = "We propose FLASH, a framework that revives training-free SimHash tokenization."
    sentence = (0, len(text))
    flash, simhash = text.index("FLASH"), text.index("SimHash")
    assert strictly_proposed(text, sentence, flash, flash + 5)
    assert not strictly_proposed(text, sentence, simhash, simhash + 7)


def test_baselines_and_building_blocks_are_not_the_papers_method() -> None:
    text = ("We propose GraphMix, a mixing scheme for node classification. Compared with "
            "GraphSAGE, GraphMix is more accurate, and a Transformer-based variant is faster.")
    assert _methods(text, ["GraphMix", "GraphSAGE", "Transformer"]) == ["GraphMix"]


def test_fragments_authors_and_findings_are_refused() -> None:
    text = ("Partial identification sets come from an optimal transport (OT) problem, as "
            "Smith et al. showed. We uncover a Calibration Paradox in such sets, and a "
            "Rashomon ensemble of trees explains it.")
    assert _methods(text, ["optimal transport (OT)", "Smith", "Calibration Paradox",
                           "Rashomon ensemble of trees"]) == []


def test_a_problem_class_the_paper_formalises_is_not_a_method() -> None:
    text = ("We formalise this setting as Delayed Feedback Bandits (DFBs). We then propose "
            "Delayed Thompson Sampling (DTS), which is optimal.")
    assert _methods(text, ["Delayed Feedback Bandits", "Delayed Thompson Sampling"]) == [
        "Delayed Thompson Sampling"]


def test_a_coined_name_after_a_proposal_verb_is_found_when_the_model_missed_it() -> None:
    text = ("Agents forget skills. We introduce the SkillBank algorithm, which stores "
            "programs. SkillBank doubles success rates.")
    assert [text[a:b] for a, b in coined_proposals(text, sentence_spans(text))] == ["SkillBank"]
    assert _methods(text, []) == ["SkillBank"]
    # a plain capitalised word counts only when the abstract sets it off
    plain = "We present Voyager, an agent that explores. Voyager learns skills."
    assert coined_proposals(plain, sentence_spans(plain)) == []
    marked = "We present **Voyager**, an agent that explores. Voyager learns skills."
    assert [marked[a:b] for a, b in coined_proposals(marked, sentence_spans(marked))] == [
        "Voyager"]


def test_a_name_the_abstract_calls_a_benchmark_is_stored_as_a_new_benchmark() -> None:
    text = ("We introduce **SpatialQA**, a diagnostic benchmark of what-if questions across "
            "four tasks: Collision, Occlusion, and Trajectory. Models lag humans.")
    assembled = assemble(_draft(["SpatialQA"], ["Collision", "Occlusion"]), text)
    assert assembled.extraction.methods == []
    benchmarks = [(b.name, b.introduced) for b in assembled.extraction.benchmarks]
    assert benchmarks == [("SpatialQA", True)]
    assert any("list of task types" in line for line in assembled.rejected)


def test_a_description_around_a_proper_noun_is_not_a_benchmark_name() -> None:
    text = ("We test on 3GPP specifications, on the public KuaiRand recommendation dataset "
            "and on reviews from eight U.S. cities.")
    assembled = assemble(_draft([], ["3GPP specifications", "public KuaiRand recommendation "
                                     "dataset", "eight U.S. cities"]), text)
    assert [b.name for b in assembled.extraction.benchmarks] == ["KuaiRand"]


def test_a_title_names_the_method_or_the_new_benchmark_when_the_abstract_contains_it() -> None:
    text = ("Sequential recommenders are slow. Mamba4Rec uses selective state spaces and is "
            "3x faster than SASRec.")
    assert [m.name for m in assemble(_draft([]), text, "Mamba4Rec: Efficient Sequential "
                                                       "Recommendation").extraction.methods] == [
        "Mamba4Rec"]
    # without the title the abstract never proposes it in so many words
    assert assemble(_draft([]), text).extraction.methods == []
    # a title name the abstract does not contain is not stored: grounding is in the abstract
    assert assemble(_draft([]), text, "FastRec: Efficient Recommendation").extraction.methods \
        == []
    bench = "Long videos are hard. HLV-1K holds 1,009 hour-long videos with questions."
    built = assemble(_draft([]), bench, "HLV-1K: A Large-scale Hour-Long Video Benchmark")
    assert [(b.name, b.introduced) for b in built.extraction.benchmarks] == [("HLV-1K", True)]
    assert built.extraction.methods == []


def test_a_name_set_off_after_a_new_dataset_is_that_dataset() -> None:
    text = ("Summaries drift from stories. We introduce a new dataset, TaleCheck, of "
            "summaries with faithfulness labels. On four benchmarks, TaleFix improves recall.")
    assembled = assemble(_draft(["TaleCheck", "TaleFix"]), text)
    assert [(b.name, b.introduced) for b in assembled.extraction.benchmarks] == [
        ("TaleCheck", True)]
    # 'four benchmarks, TaleFix' is not a resource named after its kind
    assert [m.name for m in assembled.extraction.methods] == ["TaleFix"]


def test_a_method_after_another_named_benchmark_stays_a_method() -> None:
    text = "On our new ContractQA benchmark, SpanSearch improves recall over BM25."
    assert _methods(text, ["SpanSearch"]) == ["SpanSearch"]


def test_a_plural_acronym_is_a_class_of_things_not_a_benchmark() -> None:
    """'domain-grounded SCMs generate interpretable datasets' (bundled corpus): a plural
    acronym names a kind of model, not one benchmark."""
    from papersift.extract.domain.rules.name_rules import refused_benchmark

    text = "In our environment, domain-grounded SCMs generate interpretable datasets."
    start = text.index("SCMs")
    reason = refused_benchmark(text, (start, start + 4), start, start + 4)
    assert reason is not None and "plural acronym" in reason
    text = "We evaluate on MMLU and report accuracy."
    start = text.index("MMLU")
    assert refused_benchmark(text, (start, start + 4), start, start + 4) is None


def test_an_acronym_is_a_lowercase_term_s_only_when_the_words_spell_it() -> None:
    """random9 (tune): 'we define an evaluation framework (EVADE)' is a coined name, not
    the acronym of 'evaluation framework'; 'theory of mind (ToM)' is a term's."""
    from papersift.extract.domain.rules.name_rules import lowercase_term_acronym

    assert not lowercase_term_acronym("We define an evaluation framework (EVADE).", "EVADE")
    assert lowercase_term_acronym("Models need a theory of mind (ToM) here.", "ToM")
    assert lowercase_term_acronym("Work on federated learning (FL) grows.", "FL")
