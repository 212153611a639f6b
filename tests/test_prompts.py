"""Prompts are data files: loaded strictly, versioned by content, examples checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from papersift.extract.domain.assembly.assemble import assemble, result_numbers
from papersift.prompts import PromptError, load_prompt
from papersift.schemas import PaperDraft


def test_examples_are_valid_and_grounded_in_their_own_abstract() -> None:
    prompt = load_prompt()
    assert len(prompt.examples) >= 3
    for example in prompt.examples:
        draft = PaperDraft.model_validate(example.answer)
        assembled = assemble(draft, example.abstract)
        # Every name, number, baseline and dataset is the abstract's. A metric may be the
        # example's own words: then it is kept and flagged, never rejected (one example's
        # 'gain from chain-of-thought prompting' is; the prompt is unchanged since the
        # recording).
        assert [r for r in assembled.rejected if not r.endswith("(kept, flagged)")] == []
        assert sum(r.endswith("(kept, flagged)") for r in assembled.rejected) <= 1
        stored = assembled.extraction
        assert len(stored.methods) == len(draft.methods)
        assert len(stored.benchmarks) == len(draft.benchmarks)
        assert len(stored.claimed_gains) == len(draft.gains)
        assert all(found is not None for found in assembled.found["tasks"])
        # what the example answers is what the grammar would let the model answer
        assert {gain.value for gain in draft.gains} <= set(result_numbers(example.abstract))


def test_static_prefix_then_abstract_last() -> None:
    prompt = load_prompt()
    first = prompt.messages("Abstract one.")
    second = prompt.messages("Another abstract entirely.")
    assert first[0] == second[0]
    assert first[-1]["content"].endswith('Abstract one.\n"""')
    assert "{{" not in first[0]["content"]


def test_version_is_a_content_hash(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parent.parent / "prompts"
    for name in ("system.md", "user.md", "examples.json", "title.md"):
        text = (source / f"extract_v2.{name}").read_text(encoding="utf-8")
        (tmp_path / f"p.{name}").write_text(text, encoding="utf-8")
    original = load_prompt("p", tmp_path)
    assert original.version == load_prompt().version
    (tmp_path / "p.system.md").write_text(
        (tmp_path / "p.system.md").read_text(encoding="utf-8") + "\nOne more rule.",
        encoding="utf-8")
    assert load_prompt("p", tmp_path).version != original.version
    (tmp_path / "p.title.md").write_text("Paper title: {{title}}\n", encoding="utf-8")
    assert load_prompt("p", tmp_path).version != original.version  # the title line counts


def test_a_title_goes_before_the_abstract_and_an_untitled_abstract_is_sent_as_before() -> None:
    prompt = load_prompt()
    assert prompt.titled("We study X.", None) == "We study X."
    assert prompt.titled("We study X.", "  ") == "We study X."
    assert prompt.titled("We study X.", "OrbitNet:\n Tiles") == \
        "Title: OrbitNet: Tiles\n\nWe study X."
    user = prompt.user(prompt.titled("We study X.", "OrbitNet"))
    assert user.startswith('Abstract:\n"""\nTitle: OrbitNet\n\nWe study X.')


@pytest.mark.parametrize(("system", "user", "message"), [
    ("Rules.\n{{examples}}\n{{surprise}}", "{{abstract}}", "unknown placeholder"),
    ("Rules without examples.", "{{abstract}}", "missing placeholder"),
    ("{{examples}}", "No abstract here.", "missing placeholder"),
])
def test_placeholders_are_strict(tmp_path: Path, system: str, user: str, message: str) -> None:
    (tmp_path / "p.system.md").write_text(system, encoding="utf-8")
    (tmp_path / "p.user.md").write_text(user, encoding="utf-8")
    (tmp_path / "p.examples.json").write_text('{"examples": []}', encoding="utf-8")
    (tmp_path / "p.title.md").write_text("Title: {{title}}", encoding="utf-8")
    with pytest.raises(PromptError, match=message):
        load_prompt("p", tmp_path)


def test_the_title_line_needs_its_placeholder(tmp_path: Path) -> None:
    (tmp_path / "p.system.md").write_text("{{examples}}", encoding="utf-8")
    (tmp_path / "p.user.md").write_text("{{abstract}}", encoding="utf-8")
    (tmp_path / "p.examples.json").write_text('{"examples": []}', encoding="utf-8")
    (tmp_path / "p.title.md").write_text("Title:", encoding="utf-8")
    with pytest.raises(PromptError, match=r"p\.title\.md: missing placeholder"):
        load_prompt("p", tmp_path)


def test_unknown_example_keys_are_refused(tmp_path: Path) -> None:
    (tmp_path / "p.system.md").write_text("{{examples}}", encoding="utf-8")
    (tmp_path / "p.user.md").write_text("{{abstract}}", encoding="utf-8")
    (tmp_path / "p.examples.json").write_text(
        '{"examples": [{"abstract": "a", "answer": {}, "notes": "x"}]}', encoding="utf-8")
    (tmp_path / "p.title.md").write_text("Title: {{title}}", encoding="utf-8")
    with pytest.raises(PromptError, match="exactly 'abstract' and 'answer'"):
        load_prompt("p", tmp_path)
