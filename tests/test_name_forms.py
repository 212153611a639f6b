"""How a drafted name is read against the abstract (stop 29, read off the random7 tune set):
the LaTeX a JSON escape ate, the markup or kind word the model wrapped round a name, an
acronym given after its expansion, a name that only modifies a lowercase head, and a class
of models. The sentences are invented for these tests."""

from __future__ import annotations

from papersift.extract.domain.assembly.assemble import assemble
from papersift.schemas import PaperDraft
from papersift.schemas.draft import with_latex_backslashes
from papersift.testing.drafts import paper_draft as _draft


def _methods(text: str, names: list[str]) -> tuple[list[str], list[str]]:
    got = assemble(_draft(names), text)
    return [m.name for m in got.extraction.methods], got.rejected


def test_a_json_escape_that_ate_a_latex_backslash_is_undone() -> None:
    """'\\texttt' written into JSON unescaped arrives as a tab and 'exttt'; the stored
    draft keeps what the model wrote, and grounding reads the repaired names."""
    draft = PaperDraft.model_validate({
        "tasks": ["data attribution"], "methods": ["$\texttt{tilekit}$"], "types": ["method"],
        "benchmarks": [{"name": "\beta-Tiles", "new": False}],
        "gains": [{"value": "3", "metric": "\nabla-norm gap"}]})
    repaired = with_latex_backslashes(draft)
    assert repaired.methods == ["$\\texttt{tilekit}$"]
    assert repaired.benchmarks[0].name == "\\beta-Tiles"
    assert repaired.gains[0].metric == "\\nabla-norm gap"  # '\\nabla', not a line break
    assert draft.methods == ["$\texttt{tilekit}$"]  # the draft itself is untouched
    long_name = "a" * 60 + "\t" + "b" * 59  # a repair past the limit is not made
    assert with_latex_backslashes(draft.model_copy(update={"methods": [long_name]})
                                  ).methods == [long_name]
    text = "We introduce $\\texttt{tilekit}$, a library for tiles."
    assert [m.name for m in assemble(draft, text).extraction.methods] == ["tilekit"]


def test_markup_and_an_added_kind_word_are_taken_off_a_drafted_name() -> None:
    text = ("We introduce $\\texttt{tilekit}$, a library for tiles. We also propose the "
            "**(TRF)** framework, which refines tiles step by step.")
    kept, _ = _methods(text, ["$\\texttt{tilekit}$", "TRF framework"])
    assert kept == ["tilekit", "TRF"]


def test_an_acronym_after_a_lowercase_expansion_is_judged_as_the_acronym() -> None:
    text = ("We introduce the framework of Tile aligned Commonality through Prototype Nets "
            "(TiCoP-Net). TiCoP-Net learns tiles.")
    kept, _ = _methods(text, ["Tile aligned Commonality through Prototype Nets (TiCoP-Net)"])
    assert kept == ["TiCoP-Net"]


def test_a_name_that_only_modifies_a_lowercase_head_is_not_the_paper_s_method() -> None:
    text = ("We propose Quasi-Tile approximations of the Jacobian for tiling games. "
            "Quasi-Tile approximations converge fast.")
    got = assemble(_draft(["Quasi-Tile approximations"]), text,
                   "Quasi-Tile Methods for Tiling Games")
    assert got.extraction.methods == []
    assert any("Quasi-Tile" in reason for reason in got.rejected)
    # a kind word after the name leaves it a name: 'conversion tool' heads 'TileNet'
    kept, _ = _methods("We propose the TileNet conversion tool. TileNet is fast.",
                       ["TileNet conversion tool"])
    assert kept == ["TileNet"]


def test_a_class_of_models_is_never_the_paper_s_method_even_after_a_proposal_verb() -> None:
    """random7 (tune): 'We propose ... by prompting LLMs ...' kept 'LLMs' as proposed."""
    text = ("We present evidence of the benefits of integrating Large Language Models (LLMs) "
            "with tiling bandits. We propose an initialization algorithm "
            "for tiling bandits by prompting LLMs to produce a pre-training dataset of tile "
            "preferences.")
    got = assemble(_draft(["Prompting LLMs to produce a pre-training dataset of tile "
                           "preferences"]), text, "Jump Starting Bandits with LLM Priors")
    assert got.extraction.methods == []
    assert any("an established method or model" in reason for reason in got.rejected)
    # random10 (tune): words that only grade a class leave it a class
    from papersift.extract.domain.rules.established import a_class_of_models

    assert a_class_of_models("SOTA LLMs") and a_class_of_models("frontier VLMs")
    assert not a_class_of_models("SOTA TileNet")


def test_a_version_glued_to_a_known_model_and_a_known_name_code_finds_are_not_the_paper_s(
) -> None:
    """random9 (tune): 'SAM2' kept as the paper's method, and 'Chain-of-Thought' found by
    code after a proposal verb ('we propose CoTFormer, a Chain-of-Thought driven ...')."""
    from papersift.extract.domain.rules.established import established_method

    assert established_method("SAM2") and established_method("Qwen2.5")
    assert not established_method("TileNet2")
    text = ("We propose TileFormer, a novel Chain-of-Thought driven architecture. We note that "
            "Segment Anything 2 (SAM2) tiles well, and TileFormer builds on SAM2.")
    kept, _ = _methods(text, ["TileFormer", "SAM2"])
    assert kept == ["TileFormer"]


def test_a_drafted_expansion_with_its_acronym_is_looked_up_as_the_acronym() -> None:
    """random10 (tune): 'Combined Uncertainty estimation for Reliable Embodied planning
    (CURE)' was cut at its first lowercase word and refused as a description."""
    text = ("In this paper, we present Combined Tile estimation for Reliable Orbit planning "
            "(CTROP), which splits uncertainty in two. CTROP plans better.")
    kept, _ = _methods(text, ["Combined Tile estimation for Reliable Orbit planning (CTROP)"])
    assert kept == ["CTROP"]
