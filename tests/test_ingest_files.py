"""Tests for papersift.extract.domain.reading.ingest on bad input (undecodable, empty, unreadable or
broken files) and on each table format (JSONL, CSV, Parquet round trips and bad rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from papersift.extract.domain.reading.ingest import DEFAULT_MAX_CHARS, IngestResult, paper_id_for
from papersift.extract.runs.ingest_files import ingest

ROOT = Path(__file__).resolve().parents[1]
BAD = "tests/data/bad"
GOOD_FILE = "examples/neurips-2026/000_1aa1e087e7a844d9.txt"


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def reasons(result: IngestResult) -> list[str]:
    return [problem.reason for problem in result.problems]


# --------------------------------------------------------------------------- bad input


def test_latin1_file() -> None:
    result = ingest([f"{BAD}/latin1.txt", GOOD_FILE])
    [problem] = result.problems
    assert problem.reason == "not_utf8"
    assert problem.line == 3
    assert "latin1.txt" in problem.message
    assert "byte offset 39" in problem.message
    assert "line 3" in problem.message
    assert "0xE9" in problem.message
    assert len(result.papers) == 19


def test_binary_file() -> None:
    result = ingest([f"{BAD}/binary.txt", GOOD_FILE])
    [problem] = result.problems
    assert problem.reason == "binary"
    assert "binary.txt" in problem.message
    assert len(result.papers) == 19


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_files_with_a_utf16_or_utf32_byte_order_mark_are_read(tmp_path: Path, codec: str) -> None:
    path = tmp_path / "wide.txt"
    text = "ICML 2025 Papers\r\n\r\nAn abstract\r\non two lines, café.\r\n"
    # utf-16 and utf-32 write their byte-order mark themselves; utf-16-be needs it added
    path.write_bytes(("\ufeff" + text).encode(codec) if codec.endswith("-be")
                     else text.encode(codec))
    result = ingest([path])
    assert result.problems == []
    [paper] = result.papers
    assert paper.text == "An abstract\r\non two lines, café."
    assert paper.occurrences[0].collection == "ICML 2025 Papers"


def test_broken_utf16_names_the_place(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes("Title\n\nAn abstract.\n".encode("utf-16") + b"\x00\xd8\x41")
    result = ingest([path])
    assert reasons(result) == ["bad_encoding"]
    assert "wide.txt" in result.problems[0].message
    assert "UTF-16" in result.problems[0].message and "line 4" in result.problems[0].message


@pytest.mark.parametrize("content", [b"", b"\n \n\t\n", b"\xef\xbb\xbf"])
def test_empty_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "blank.txt"
    path.write_bytes(content)
    result = ingest([path, GOOD_FILE])
    assert reasons(result) == ["empty"]
    assert "blank.txt" in result.problems[0].message
    assert len(result.papers) == 19


def test_committed_empty_file() -> None:
    result = ingest([f"{BAD}/empty.txt", GOOD_FILE])
    assert reasons(result) == ["empty"]
    assert "empty.txt" in result.problems[0].message


def test_too_long_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    long_text = "word " * 2842 + "end."  # 14,214 characters
    path.write_text(f"Some Papers\n\nShort one.\n\n{long_text}\n\nAfter.\n", "utf-8")
    result = ingest([path, GOOD_FILE])
    [problem] = result.problems
    assert problem.reason == "too_long"
    assert (problem.position, problem.line) == (2, 5)
    assert problem.paper_id == paper_id_for(long_text)
    assert str(path) in problem.message
    assert "abstract 2 (line 5)" in problem.message
    assert f"{len(long_text):,} characters" in problem.message
    assert f"{DEFAULT_MAX_CHARS:,}-character" in problem.message
    # still returned, so it can be stored, between its neighbours
    texts = [paper.text for paper in result.papers[:3]]
    assert texts == ["Short one.", long_text, "After."]
    assert len(result.papers) == 3 + 19


def test_max_chars_is_configurable(tmp_path: Path) -> None:
    path = tmp_path / "small.txt"
    path.write_text("Twelve chars\n", "utf-8")
    assert reasons(ingest([path], max_chars=11)) == ["too_long"]
    assert reasons(ingest([path], max_chars=12)) == []


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked.txt"
    locked.write_text("Secret.\n", "utf-8")
    original = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self.name == "locked.txt":
            raise PermissionError(13, "Permission denied")
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    result = ingest([locked, GOOD_FILE])
    assert reasons(result) == ["unreadable"]
    assert "locked.txt" in result.problems[0].message
    assert "Permission denied" in result.problems[0].message
    assert result.files == [GOOD_FILE]


def test_csv_without_abstract_column() -> None:
    result = ingest([f"{BAD}/no_abstract.csv", GOOD_FILE])
    [problem] = result.problems
    assert problem.reason == "missing_column"
    assert "no_abstract.csv" in problem.message
    assert "summary" in problem.message
    assert len(result.papers) == 19


def test_jsonl_with_broken_rows() -> None:
    result = ingest([f"{BAD}/broken.jsonl", GOOD_FILE])
    assert [(p.reason, p.position, p.line) for p in result.problems] == [
        ("bad_row", 2, 2),
        ("bad_row", 3, 3),
        ("bad_row", 4, 4),
    ]
    assert all("broken.jsonl" in p.message for p in result.problems)
    assert "invalid JSON" in result.problems[0].message
    assert "line 2" in result.problems[0].message
    assert "empty" in result.problems[1].message
    assert "int" in result.problems[2].message
    jsonl_papers = [p for p in result.papers if p.occurrences[0].file.endswith(".jsonl")]
    assert [p.occurrences[0].source_id for p in jsonl_papers] == ["j1", "j5"]
    first = jsonl_papers[0].occurrences[0]
    assert (first.title, first.venue, first.year, first.collection) == (
        "Good one",
        "ICLR",
        2025,
        None,
    )
    assert len(result.papers) == 2 + 19


def test_jsonl_without_any_abstract(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"text": "a"}\n{"text": "b"}\n', "utf-8")
    result = ingest([path])
    assert reasons(result) == ["missing_column"]


def test_parquet_that_is_not_parquet(tmp_path: Path) -> None:
    path = tmp_path / "fake.parquet"
    path.write_bytes(b"not a parquet file at all")
    result = ingest([path, GOOD_FILE])
    assert reasons(result) == ["unreadable"]
    assert "fake.parquet" in result.problems[0].message


# --------------------------------------------------------------------------- tables


ROWS: list[dict[str, str | int | None]] = [
    {"id": "p1", "title": "First", "abstract": "Alpha abstract.", "venue": "ICLR", "year": 2024},
    {"id": "p2", "title": "Second", "abstract": "Beta\nabstract.", "venue": None, "year": None},
    {"id": "p3", "title": "Dup", "abstract": "Alpha   abstract.", "venue": "ICLR", "year": 2024},
]


def assert_round_trip(result: IngestResult, lines: list[int]) -> None:
    assert result.problems == []
    alpha, beta = result.papers
    assert alpha.text == "Alpha abstract."
    assert beta.text == "Beta\nabstract."
    assert [p.source_id for p in alpha.occurrences] == ["p1", "p3"]
    assert [p.position for p in alpha.occurrences] == [1, 3]
    first = alpha.occurrences[0]
    assert (first.title, first.venue, first.year, first.collection) == (
        "First",
        "ICLR",
        2024,
        None,
    )
    assert (beta.occurrences[0].venue, beta.occurrences[0].year) == (None, None)
    placed = sorted(
        (place.position, place.line) for paper in result.papers for place in paper.occurrences
    )
    assert [line for _, line in placed] == lines


def test_jsonl_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    lines = [json.dumps(row) for row in ROWS]
    path.write_text(f"{lines[0]}\n\n{lines[1]}\n{lines[2]}\n", "utf-8")
    assert_round_trip(ingest([path]), lines=[1, 3, 4])


def test_csv_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text(
        "ID,Title,Abstract,Venue,Year\r\n"
        "p1,First,Alpha abstract.,ICLR,2024\r\n"
        'p2,Second,"Beta\nabstract.",,\r\n'
        "p3,Dup,Alpha   abstract.,ICLR,2024\r\n",
        "utf-8",
        newline="",
    )
    # the quoted abstract spans two physical lines, so row 3 starts on line 5
    assert_round_trip(ingest([path]), lines=[2, 3, 5])


def test_csv_bad_rows(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("id,abstract\nq1,\nq2\nq3,Fine.\n", "utf-8")
    result = ingest([path])
    assert [(p.reason, p.position, p.line) for p in result.problems] == [
        ("bad_row", 1, 2),
        ("bad_row", 2, 3),
    ]
    assert [paper.text for paper in result.papers] == ["Fine."]


def test_parquet_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    table = pa.table(
        {
            "id": [row["id"] for row in ROWS],
            "title": [row["title"] for row in ROWS],
            "abstract": [row["abstract"] for row in ROWS],
            "venue": [row["venue"] for row in ROWS],
            "year": pa.array([row["year"] for row in ROWS], type=pa.float64()),
            "extra": [1, 2, 3],
        }
    )
    pq.write_table(table, path)
    assert_round_trip(ingest([path]), lines=[1, 2, 3])


def test_parquet_bad_rows_and_missing_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"abstract": ["Good.", None, ""]}), bad)
    missing = tmp_path / "missing.parquet"
    pq.write_table(pa.table({"summary": ["x"]}), missing)
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"abstract": pa.array([], type=pa.string())}), empty)
    result = ingest([bad, missing, empty])
    assert [(p.reason, p.position) for p in result.problems] == [
        ("bad_row", 2),
        ("bad_row", 3),
        ("missing_column", None),
        ("empty", None),
    ]


def test_a_few_damaged_records_do_not_refuse_a_utf8_file(tmp_path: Path) -> None:
    """One raw NUL or byte that is not UTF-8 refuses its own record, naming its line; the
    rest of a UTF-8 file is read (issue 28: it refused the whole file)."""
    good = ['{"abstract": "We propose Café-Net, a naïve method for counting objects."}',
            '{"abstract": "We study reinforcement learning for robots — in many settings."}']
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(good[0].encode() + b'\n{"abstract": "bad \xff byte in this one."}\n'
                     + b'{"abstract": "a NUL \x00 in this one."}\n' + good[1].encode() + b"\n")
    result = ingest([path])
    assert len(result.papers) == 2
    assert sorted((p.line, p.reason) for p in result.problems) == [(2, "bad_text"),
                                                                    (3, "bad_row")]
    assert "0xFF" in next(p.message for p in result.problems if p.line == 2)
