"""Generated records with one defect each: a stray quote, an outlier field, a duplicate
column or JSON key, an absurd year or a lone surrogate. Each is reported with its file and
line, and the other records are read as usual."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from papersift.extract.domain.reading.ingest_tables import OUTLIER_FACTOR
from papersift.extract.domain.reading.records import YEAR_MAX, YEAR_MIN, optional_year, text_problem
from papersift.extract.runs.ingest_files import ingest

words = st.text("abcdefghij", min_size=2, max_size=8)
abstracts = st.lists(words, min_size=6, max_size=14).map(" ".join)
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _csv(path: Path, rows: list[str]) -> None:
    path.write_text("id,abstract\n" + "".join(rows), encoding="utf-8")


@SETTINGS
@given(st.lists(abstracts, min_size=3, max_size=12, unique=True), st.data())
def test_a_stray_quote_is_reported_at_its_line(tmp_path: Path, texts: list[str],
                                               data: st.DataObject) -> None:
    broken = data.draw(st.integers(0, len(texts) - 2))
    rows = [f'{i},"{text}"\n' for i, text in enumerate(texts)]
    rows[broken] = f'{broken},"{texts[broken]}\n'  # the closing quote is missing
    path = tmp_path / f"stray{broken}.csv"
    _csv(path, rows)
    result = ingest([path])
    suspects = [p for p in result.problems if p.reason == "suspect_row"]
    assert [p.line for p in suspects] == [broken + 2]  # header is line 1
    assert f"check line {broken + 2}" in suspects[0].message
    read = {paper.text for paper in result.papers}
    assert set(texts[:broken]) <= read  # the rows before it are untouched


@SETTINGS
@given(st.lists(abstracts, min_size=6, max_size=10, unique=True), st.data())
def test_a_wildly_long_multiline_field_is_reported(tmp_path: Path, texts: list[str],
                                                   data: st.DataObject) -> None:
    where = data.draw(st.integers(5, len(texts) - 1))
    # long enough to be over OUTLIER_FACTOR times any median of the rows before it
    times = max(60, OUTLIER_FACTOR * max(map(len, texts)) // len(texts[where]) + 1)
    long = "\n".join([texts[where]] * times)
    rows = [f'{i},"{long if i == where else text}"\n' for i, text in enumerate(texts)]
    path = tmp_path / f"long{where}.csv"
    _csv(path, rows)
    suspects = [p for p in ingest([path]).problems if p.reason == "suspect_row"]
    assert [p.line for p in suspects] == [where + 2]
    assert "the median of the rows before it" in suspects[0].message


@SETTINGS
@given(st.sampled_from(["abstract", "Abstract", " ABSTRACT", "year", "title"]), abstracts)
def test_duplicate_columns_and_keys_are_reported(tmp_path: Path, twice: str,
                                                 text: str) -> None:
    csv_path = tmp_path / "dup.csv"
    csv_path.write_text(f"{twice},abstract,{twice}\n{text},{text},{text}\n", encoding="utf-8")
    result = ingest([csv_path])
    assert [p.reason for p in result.problems] == ["duplicate_column"]
    assert twice.strip().lower() in result.problems[0].message
    jsonl = tmp_path / "dup.jsonl"
    jsonl.write_text(f'{{"abstract": {json.dumps(text)}}}\n'
                     f'{{"abstract": {json.dumps(text)}, "{twice}": "x", '
                     f'"{twice.upper()}": "y"}}\n',
                     encoding="utf-8")
    result = ingest([jsonl])
    assert len(result.papers) == 1
    assert [(p.reason, p.line) for p in result.problems] == [("bad_row", 2)]
    assert "duplicate JSON key" in result.problems[0].message


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=12),
                 st.booleans(), st.none(), st.lists(st.integers(), max_size=2)))
def test_a_year_is_a_storable_integer_or_reported(value: object) -> None:
    year, why = optional_year(value)
    assert year is None or YEAR_MIN <= year <= YEAR_MAX
    if year is None and value is not None and not (isinstance(value, str) and
                                                   not value.strip()):
        assert why is not None


@settings(max_examples=300, deadline=None)
@given(st.text(), st.integers(0xD800, 0xDFFF), st.data())
def test_a_text_with_a_lone_surrogate_is_refused(text: str, code: int,
                                                 data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(text)))
    broken = text[:at] + chr(code) + text[at:]
    problem = text_problem(broken)
    assert problem is not None and f"\\u{code:04x}" in problem
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text) and "\x00" not in text:
        assert text_problem(text) is None


@settings(max_examples=100, deadline=None)
@given(st.text(), st.data())
def test_a_text_with_a_nul_is_refused_as_a_damaged_record(text: str,
                                                          data: st.DataObject) -> None:
    """A NUL inside a record refuses that record (the rest of its file is read)."""
    at = data.draw(st.integers(0, len(text)))
    problem = text_problem(text[:at] + "\x00" + text[at:])
    assert problem is not None and ("NUL" in problem or "surrogate" in problem)
