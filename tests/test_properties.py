"""Property-based tests (hypothesis): ingest never loses or duplicates a paragraph or a
row, and grounding offsets always slice back to the evidence."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from papersift.extract.domain.lookup.grounding import _needle, align, normalize
from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.extract.runs.ingest_files import ingest

SETTINGS = settings(max_examples=150, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# Words with the characters abstracts really hold: LaTeX, math, accents, dashes, quotes.
WORD = st.one_of(
    st.sampled_from(["graph", "Graph", "GRAPH", "neural", "$\\alpha$", "\\textbf{Net}",
                     "state-of-the-art", "12.5%", "3x", "café", "naïve", "—", "--", "“quoted”",
                     "ﬁne", "Straße", "x²", "(ours)", "e.g.,", "\\cite{a}", "{}", "{{", "%}"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp",
                                                                       "Zs")),
            min_size=1, max_size=8),
)
LINE = st.lists(WORD, min_size=1, max_size=12).map(" ".join)
PARAGRAPH = st.lists(LINE, min_size=1, max_size=3)
NEWLINE = st.sampled_from(["\n", "\r\n"])
BLANK = st.sampled_from(["\n\n", "\n \n", "\n\t\n\n", "\n\n\n"])


@SETTINGS
@given(paragraphs=st.lists(PARAGRAPH, min_size=1, max_size=12), newline=NEWLINE,
       blank=BLANK, repeat=st.data())
def test_text_ingest_keeps_every_paragraph_once(
    tmp_path: Path, paragraphs: list[list[str]], newline: str, blank: str,
    repeat: st.DataObject,
) -> None:
    # Some paragraphs appear again, exactly or with other spacing: stored once, both places.
    texts = [newline.join(lines) for lines in paragraphs]
    extra = repeat.draw(st.lists(st.sampled_from(texts), max_size=3))
    texts += [text.replace(" ", "  ", 1) for text in extra]
    body = blank.replace("\n", newline).join(["Generated 2026 Papers", *texts]) + newline
    path = tmp_path / "generated.txt"
    path.write_bytes(body.encode("utf-8"))
    result = ingest([path])
    assert result.problems == []
    expected = [text.strip() for text in texts]
    # Every paragraph is an occurrence, at its own position, exactly once.
    positions = sorted(o.position for paper in result.papers for o in paper.occurrences)
    assert positions == list(range(1, len(expected) + 1))
    # Occurrences of one abstract land on one paper: as many as its copies, no more.
    by_id: dict[str, int] = {}
    for text in expected:
        by_id[paper_id_for(text)] = by_id.get(paper_id_for(text), 0) + 1
    assert {p.paper_id: len(p.occurrences) for p in result.papers} == by_id
    for paper in result.papers:
        first = min(paper.occurrences, key=lambda o: o.position)
        assert paper.text == expected[first.position - 1]  # the file's own characters
        assert paper.text in body
        assert {o.collection for o in paper.occurrences} == {"Generated 2026 Papers"}


# Any text but NUL (a NUL byte makes a file binary, by design).
ABSTRACT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",),
                                          exclude_characters="\x00"),
                   min_size=1, max_size=80).filter(lambda text: text.strip() != "")


@SETTINGS
@given(abstracts=st.lists(ABSTRACT, min_size=1, max_size=15))
# found by this test: a short cell with a line break among one-character cells was
# reported as rows a stray quote merged
@example(abstracts=["0", "0", "0", "0", "0", "00000000000000000000\r"])
@example(abstracts=['"\r'])  # and a cell holding only a quote and a line break
def test_jsonl_and_csv_rows_are_kept_exactly_once(tmp_path: Path,
                                                  abstracts: list[str]) -> None:
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps({"abstract": a}) + "\n" for a in abstracts),
                     encoding="utf-8")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "abstract"])
    writer.writerows([str(index), text] for index, text in enumerate(abstracts))
    table = tmp_path / "rows.csv"
    table.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    for path in (jsonl, table):
        result = ingest([path])
        assert result.problems == []
        rows = sorted(o.position for paper in result.papers for o in paper.occurrences)
        assert rows == list(range(1, len(abstracts) + 1))
        for paper in result.papers:
            for occurrence in paper.occurrences:
                assert paper_id_for(abstracts[occurrence.position - 1]) == paper.paper_id
            assert paper.text == abstracts[min(o.position for o in paper.occurrences) - 1]


TEXT = st.lists(WORD, min_size=1, max_size=40).map(" ".join)


@SETTINGS
@given(text=TEXT, span=st.tuples(st.integers(0, 400), st.integers(1, 120)))
def test_an_exact_quote_slices_back_to_itself(text: str, span: tuple[int, int]) -> None:
    start = min(span[0], len(text) - 1)
    quote = text[start:start + span[1]]
    found = align(quote, text)
    if not quote.strip():
        assert (found.status, found.char_start, found.char_end) == ("none", None, None)
        return
    assert found.status == "exact"
    assert found.char_start is not None and found.char_end is not None
    assert text[found.char_start:found.char_end] == quote


def _recased(word: str, case: Callable[[str], str]) -> str:
    """``word`` in another case where that is only a difference of case: LaTeX command
    names keep theirs (\\TEXTBF is another command), and letters whose case mapping is
    not symmetric (upper('ı') is 'I', whose lower case is 'i') keep theirs."""
    changed = case(word)
    if "\\" in word or changed.casefold() != word.casefold():
        return word
    return changed


@SETTINGS
@given(text=TEXT, span=st.tuples(st.integers(0, 40), st.integers(1, 12)),
       spacing=st.sampled_from([" ", "  ", "\n", " \r\n "]),
       case=st.sampled_from([str.upper, str.lower, str.title, str]))
def test_a_reworded_quote_slices_back_to_the_same_words(
    text: str, span: tuple[int, int], spacing: str, case: object
) -> None:
    """Change the quote's case and spacing: it is still found, and the slice it maps to
    normalises to what the quote normalises to."""
    words = text.split(" ")
    start = min(span[0], len(words) - 1)
    chosen = words[start:start + span[1]]
    quote = spacing.join(_recased(word, case) for word in chosen)  # type: ignore[arg-type]
    # a slice that ends inside a LaTeX control symbol ('\ ' cut to '\') is not the same
    # words reworded: the text's '\ ' is a space, the quote's lone backslash is not
    assume(not chosen[-1].endswith("\\"))
    found = align(quote, text)
    if quote in text:
        assert found.status == "exact"
        return
    if not _needle(quote):  # nothing left to look for once normalised ('{}', '--')
        assert found.status == "none"
        return
    assert found.status == "normalized", (quote, text)
    assert found.char_start is not None and found.char_end is not None
    assert 0 <= found.char_start < found.char_end <= len(text)
    assert _needle(text[found.char_start:found.char_end]) == _needle(quote)


@SETTINGS
@given(text=TEXT, quote=st.text(min_size=0, max_size=60))
def test_any_alignment_is_a_valid_span_or_none(text: str, quote: str) -> None:
    found = align(quote, text)
    if found.status == "none":
        assert (found.char_start, found.char_end) == (None, None)
        return
    assert found.char_start is not None and found.char_end is not None
    assert 0 <= found.char_start < found.char_end <= len(text)
    if found.status == "exact":
        assert text[found.char_start:found.char_end] == quote
    if found.status == "normalized":
        assert normalize(quote).strip(" .,;:") in normalize(text[found.char_start:found.char_end])
