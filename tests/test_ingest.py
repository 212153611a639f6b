"""Tests for papersift.extract.domain.reading.ingest: the real corpus, paper ids,
the text format and path handling (bad input and tables: test_ingest_files.py)."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from pathlib import Path

import pytest

from papersift.extract.domain.reading.ingest import (
    IngestResult,
    Paper,
    paper_id_for,
    parse_venue_year,
)
from papersift.extract.runs.ingest_files import ingest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = "examples/neurips-2026/"
BAD = "tests/data/bad"
GOOD_FILE = "examples/neurips-2026/000_1aa1e087e7a844d9.txt"


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def corpus() -> IngestResult:
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        return ingest([CORPUS])
    finally:
        os.chdir(here)


def reasons(result: IngestResult) -> list[str]:
    return [problem.reason for problem in result.problems]


def short(name: str) -> str:
    return Path(name).name[:3]


# --------------------------------------------------------------------------- real corpus


def test_corpus_counts(corpus: IngestResult) -> None:
    assert len(corpus.papers) == 63
    assert corpus.occurrences == 76
    assert corpus.problems == []
    assert corpus.files == [
        "examples/neurips-2026/000_1aa1e087e7a844d9.txt",
        "examples/neurips-2026/002_fb6275e89cca5018.txt",
        "examples/neurips-2026/003_bffde57fdd11f6c4.txt",
        "examples/neurips-2026/004_aeca8f4bb4db3474.txt",
    ]


def test_corpus_skips_readme(corpus: IngestResult) -> None:
    assert not any(name.endswith("README.md") for name in corpus.files)


def test_corpus_duplicates(corpus: IngestResult) -> None:
    shared = [paper for paper in corpus.papers if len(paper.occurrences) > 1]
    assert len(shared) == 13
    assert all(len(paper.occurrences) == 2 for paper in shared)
    pairs = Counter(
        tuple(sorted(short(place.file) for place in paper.occurrences)) for paper in shared
    )
    assert pairs == {("002", "003"): 6, ("002", "004"): 7}


def test_corpus_metadata(corpus: IngestResult) -> None:
    places = [place for paper in corpus.papers for place in paper.occurrences]
    collections = {short(place.file): place.collection for place in places}
    assert collections == {
        "000": "NeurIPS 2026 Papers",
        "002": "NeurIPS 2026 Papers",
        "003": "NeurIPS 2026 论文列表",
        "004": "NeurIPS 2026 论文列表",
    }
    assert {place.venue for place in places} == {"NeurIPS"}
    assert {place.year for place in places} == {2026}
    assert {place.source_id for place in places} == {None}
    assert {place.title for place in places} == {None}


def test_corpus_positions_and_lines(corpus: IngestResult) -> None:
    by_file: dict[str, list[tuple[int, int]]] = {}
    for paper in corpus.papers:
        for place in paper.occurrences:
            by_file.setdefault(place.file, []).append((place.position, place.line))
    for places in by_file.values():
        # title on line 1, then one abstract every other line
        assert sorted(places) == [(n, 2 * n + 1) for n in range(1, 20)]


def test_corpus_text_is_exact_substring(corpus: IngestResult) -> None:
    contents = {name: (ROOT / name).read_text(encoding="utf-8") for name in corpus.files}
    for paper in corpus.papers:
        assert paper.text == paper.text.strip()
        assert "\n" not in paper.text
        assert paper.paper_id == paper_id_for(paper.text)
        for place in paper.occurrences:
            content = contents[place.file]
            assert paper.text in content
            line = content.split("\n")[place.line - 1]
            assert line == paper.text


def test_duplicate_provenance(corpus: IngestResult) -> None:
    content = (ROOT / "examples/neurips-2026/002_fb6275e89cca5018.txt").read_text("utf-8")
    third = content.split("\n\n")[3]  # title, then abstracts 1, 2, 3
    [paper] = [p for p in corpus.papers if p.text == third]
    assert [(place.file, place.position, place.line) for place in paper.occurrences] == [
        ("examples/neurips-2026/002_fb6275e89cca5018.txt", 3, 7),
        ("examples/neurips-2026/004_aeca8f4bb4db3474.txt", 6, 13),
    ]
    assert [place.collection for place in paper.occurrences] == [
        "NeurIPS 2026 Papers",
        "NeurIPS 2026 论文列表",
    ]


def test_papers_in_first_seen_order(corpus: IngestResult) -> None:
    firsts = [(paper.occurrences[0].file, paper.occurrences[0].position) for paper in corpus.papers]
    assert firsts == sorted(firsts)


# --------------------------------------------------------------------------- ids


def test_paper_id_is_sha256_of_normalised_text() -> None:
    text = "  Two\tlines\r\nof   text  "
    expected = hashlib.sha256(b"Two lines of text").hexdigest()
    assert paper_id_for(text) == f"sha256:{expected}"
    assert paper_id_for("Two lines of text") == paper_id_for(text)
    assert paper_id_for("Two lines of text.") != paper_id_for(text)


def test_whitespace_variants_dedupe(tmp_path: Path) -> None:
    first = tmp_path / "a.txt"
    second = tmp_path / "b.txt"
    first.write_text("Graph  models\nscale well.\n\nSomething else entirely.\n", "utf-8")
    # (a two-line first paragraph is never taken for a title)
    second.write_text("Graph models scale   well.\n", "utf-8")
    result = ingest([first, second])
    assert len(result.papers) == 2
    paper = result.papers[0]
    assert paper.text == "Graph  models\nscale well."  # the first occurrence, as written
    assert [(Path(p.file).name, p.position) for p in paper.occurrences] == [
        ("a.txt", 1),
        ("b.txt", 1),
    ]


def test_duplicate_within_one_file(tmp_path: Path) -> None:
    path = tmp_path / "twice.txt"
    path.write_text("Title\n\nSame abstract.\n\nOther.\n\nSame   abstract.\n", "utf-8")
    result = ingest([path])
    assert [len(paper.occurrences) for paper in result.papers] == [2, 1]
    assert [(p.position, p.line) for p in result.papers[0].occurrences] == [(1, 3), (3, 7)]


# --------------------------------------------------------------------------- text format


def test_crlf_file(tmp_path: Path) -> None:
    path = tmp_path / "windows.txt"
    data = (
        "ICML 2025 accepted papers\r\n\r\nFirst abstract,\r\nwrapped.\r\n \r\n\r\nSecond one.\r\n"
    )
    path.write_bytes(data.encode("utf-8"))
    result = ingest([path])
    assert result.problems == []
    first, second = result.papers
    assert first.text == "First abstract,\r\nwrapped."  # inner line break kept as is
    assert second.text == "Second one."
    assert [p.occurrences[0].line for p in result.papers] == [3, 7]
    assert first.occurrences[0].collection == "ICML 2025 accepted papers"
    assert (first.occurrences[0].venue, first.occurrences[0].year) == ("ICML", 2025)
    assert first.text in data


def test_bom_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffNeurIPS 2026 Papers\n\nAn abstract.\n".encode())
    result = ingest([path])
    assert result.papers[0].occurrences[0].collection == "NeurIPS 2026 Papers"
    assert result.papers[0].text == "An abstract."


def test_whitespace_only_lines_separate_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "spaces.txt"
    path.write_text("Title\n \nOne.\n   \t\nTwo.\n", "utf-8")
    result = ingest([path])
    assert [paper.text for paper in result.papers] == ["One.", "Two."]
    assert result.papers[0].occurrences[0].collection == "Title"


@pytest.mark.parametrize(
    ("content", "collection", "texts"),
    [
        # a single paragraph is an abstract, never a title
        ("Only one line here.\n", None, ["Only one line here."]),
        # a first paragraph of two lines is an abstract
        ("Line one\nline two.\n\nNext.\n", None, ["Line one\nline two.", "Next."]),
        # a first line over 200 characters is an abstract
        ("x" * 201 + "\n\nNext.\n", None, ["x" * 201, "Next."]),
        ("Collected abstracts\n\nA.\n\nB.\n", "Collected abstracts", ["A.", "B."]),
    ],
)
def test_title_rule(tmp_path: Path, content: str, collection: str | None, texts: list[str]) -> None:
    path = tmp_path / "t.txt"
    path.write_text(content, "utf-8")
    result = ingest([path])
    assert [paper.text for paper in result.papers] == texts
    assert {p.occurrences[0].collection for p in result.papers} == {collection}


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("NeurIPS 2026 Papers", ("NeurIPS", 2026)),
        ("NeurIPS 2026 论文列表", ("NeurIPS", 2026)),
        ("ICML 2025 accepted papers", ("ICML", 2025)),
        ("Proceedings of ACL-2024", ("ACL", 2024)),
        ("papers from 2019", (None, 2019)),
        ("Collected abstracts", (None, None)),
        ("Top 100 papers", (None, None)),
    ],
)
def test_parse_venue_year(title: str, expected: tuple[str | None, int | None]) -> None:
    assert parse_venue_year(title) == expected


# --------------------------------------------------------------------------- paths


def test_glob_patterns() -> None:
    result = ingest(["examples/neurips-2026/00[34]_*.txt"])
    assert [short(name) for name in result.files] == ["003", "004"]
    recursive = ingest(["examples/**/*.txt"])
    assert len(recursive.files) == 4
    assert len(recursive.papers) == 63


def test_glob_matching_nothing() -> None:
    result = ingest(["examples/*.nothing", GOOD_FILE])
    assert reasons(result) == ["not_found"]
    assert "examples/*.nothing" in result.problems[0].message
    assert len(result.papers) == 19


def test_missing_path_and_unsupported_type() -> None:
    result = ingest(["no/such/file.txt", "examples/neurips-2026/README.md", GOOD_FILE])
    assert reasons(result) == ["not_found", "unsupported_type"]
    assert "no/such/file.txt" in result.problems[0].message
    assert "README.md" in result.problems[1].message
    assert result.files == [GOOD_FILE]


def test_folder_without_supported_files(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# notes\n", "utf-8")
    result = ingest([tmp_path])
    assert reasons(result) == ["not_found"]


def test_same_file_read_once() -> None:
    result = ingest([GOOD_FILE, CORPUS, f"./{GOOD_FILE}"])
    assert result.files.count(GOOD_FILE) == 1
    assert len(result.files) == 4
    assert result.occurrences == 76


def test_folder_walk_skips_hidden_and_sorts(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "b" / "z.txt").write_text("Zed.\n", "utf-8")
    (tmp_path / "a.txt").write_text("Ay.\n", "utf-8")
    (tmp_path / ".hidden" / "x.txt").write_text("Hidden.\n", "utf-8")
    (tmp_path / "c.jsonl").write_text('{"abstract": "See."}\n', "utf-8")
    result = ingest([tmp_path])
    assert [Path(name).relative_to(tmp_path).as_posix() for name in result.files] == [
        "a.txt",
        "b/z.txt",
        "c.jsonl",
    ]


def test_result_types(corpus: IngestResult) -> None:
    assert all(isinstance(paper, Paper) for paper in corpus.papers)
    assert all(isinstance(paper.occurrences, tuple) for paper in corpus.papers)
