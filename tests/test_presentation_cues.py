"""The two presentation cues of the method decision (stop 37): a novelty word right before
a name, and an acronym coined for lowercase words that a creation verb introduces. Each
abstract is written for the test; the drafts are hand-written fakes."""

from __future__ import annotations

from papersift.extract.domain.assembly.assemble import assemble
from papersift.extract.domain.rules.presentation_cues import (
    coined_for_lowercase_words,
    presented_as_new,
    spelled_by_lowercase_words,
)
from papersift.schemas import PaperDraft


def _at(text: str, name: str) -> tuple[int, int]:
    start = text.index(name)
    return start, start + len(name)


def test_a_novelty_word_in_the_phrase_before_a_name() -> None:
    text = ("Kestrel employs a novel agent reasoning mechanism, NavMind, to route messages. "
            "A simple but effective RNC strategy is devised. Prior work used GraphSAGE.")
    assert presented_as_new(text, text.index("NavMind"))
    assert presented_as_new(text, text.index("RNC"))
    assert not presented_as_new(text, text.index("GraphSAGE"))


def test_novelty_is_read_within_the_clause_only() -> None:
    text = "We build a new index. GraphSAGE is then trained on it."
    assert not presented_as_new(text, text.index("GraphSAGE"))


def test_initials_of_lowercase_words_spell_the_acronym() -> None:
    assert spelled_by_lowercase_words("a shared pool of travel preference prompts ", "TPP") == 17
    assert spelled_by_lowercase_words("a graph-based relation generator ", "GBRG") == 2
    assert spelled_by_lowercase_words("some other words ", "XYZ") is None


def test_an_acronym_coined_after_a_creation_verb_or_before_a_passive_proposal() -> None:
    text = ("SSX (2) introduces connectionist subsequence aligner (CSA) for alignment. "
            "Furthermore, a document relation graph generator (DRGG) is proposed. "
            "We fine-tune with supervised fine-tuning (SFT) and large language models (LLMs).")
    assert coined_for_lowercase_words(text, *_at(text, "CSA"))
    assert coined_for_lowercase_words(text, *_at(text, "DRGG"))
    assert not coined_for_lowercase_words(text, *_at(text, "SFT"))
    assert not coined_for_lowercase_words(text, *_at(text, "LLMs"))
    assert not coined_for_lowercase_words(text, *_at(text, "SSX"))  # not in parentheses


def test_the_decision_records_both_cues() -> None:
    text = ("We study chart reading. Our system employs a novel token pruning mechanism, "
            "PruneX, and introduces a latent warp function (LWF) for dragging. "
            "PruneX improves accuracy by 3.1% on ChartQA.")
    draft = PaperDraft.model_validate({
        "tasks": ["chart reading"], "methods": ["PruneX", "LWF"], "benchmarks": [],
        "gains": [], "types": ["method"]})
    decisions = {d.name: d for d in assemble(draft, text).decisions}
    assert decisions["PruneX"].features.get("presented_as_new") == 1.0
    assert decisions["LWF"].features.get("coined_for_lowercase_words") == 1.0
    assert "coined_for_lowercase_words" not in decisions["PruneX"].features


def test_an_acronym_that_spells_an_established_name_is_not_coined_here() -> None:
    """stop 37: 'the Kullback-Leibler (KL) constraint' defines KL but coins nothing; a new
    name built on an established one ('Adaptive Proximal Policy Optimization (APPO)') is
    still the paper's."""
    from papersift.extract.domain.lookup.assemble_spans import sentence_spans
    from papersift.extract.domain.rules.method_candidates import in_proposal_sentences

    text = ("We propose Diffusion Actor-Critic (DAC) that bounds the Kullback-Leibler (KL) "
            "constraint. We introduce Adaptive Proximal Policy Optimization (APPO) for it.")
    found = [acronym for acronym, *_ in in_proposal_sentences(text, sentence_spans(text))]
    assert "KL" not in found
    assert "DAC" in found and "APPO" in found
