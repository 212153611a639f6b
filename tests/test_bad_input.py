"""The bad-input corpus (tests/data/bad/ and tests/badinput.py) through `papersift run`:
each bad input gets a message naming its file and place, good files in the same run are
extracted, and the exit status is non-zero only when nothing could be processed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.extract.interface import app
from papersift.extract.interface.cli import cli
from papersift.testing.sim import SimEndpoint, fault_profile, running
from tests.badinput import (
    COMMITTED,
    CRLF_ABSTRACT,
    TINY_CHUNK,
    TINY_PARAGRAPHS,
    UTF16_ABSTRACT,
    write_generated,
)
from tests.conftest import CORPUS, stored_rows

GOOD = CORPUS / "000_1aa1e087e7a844d9.txt"  # 19 distinct abstracts


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_generated(tmp_path_factory.mktemp("generated-bad"))


@pytest.fixture
def server() -> SimEndpoint:
    with running(fault_profile()) as started:
        yield started  # type: ignore[misc]


def _run(server: SimEndpoint, db: Path, *inputs: Path | str) -> Result:
    return CliRunner().invoke(cli, ["run", *map(str, inputs), "--db", str(db),
                                    "--base-url", server.base_url, "--model", "fault-server"])


def test_every_bad_input_is_named_and_the_good_ones_go_through(
    tmp_path: Path, generated: dict[str, Path], server: SimEndpoint,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Small stream chunks: the tiny paragraphs are read, stored and skipped over a dozen chunks,
    # each with its own ingest write and its single write of skips (runner._take_known).
    monkeypatch.setattr(app, "STREAM_CHUNK_PAPERS", TINY_CHUNK)
    db = tmp_path / "w.duckdb"
    missing = tmp_path / "missing.txt"
    result = _run(server, db, *(COMMITTED / name for name in (
        "empty.txt", "title_only.txt", "binary.txt", "latin1.txt", "broken.jsonl",
        "no_abstract.csv")), generated["huge_paragraph"], generated["utf16_bom"],
        generated["crlf"], generated["tiny_paragraphs"], missing, GOOD)
    out = " ".join(result.output.split())
    assert result.exit_code == 0, out
    # One message per bad input, naming the file and the place.
    for expected in (
        "empty.txt: empty file, no abstracts found",
        "title_only.txt, line 1: only a collection title ('NeurIPS 2026 Papers')",
        "binary.txt: binary data, not text (a NUL byte at byte offset 8, line 3)",
        "latin1.txt: not valid UTF-8: byte 0xE9 at byte offset 39 (line 3)",
        "broken.jsonl, row 2 (line 2): invalid JSON",
        "broken.jsonl, row 3 (line 3): abstract is empty",
        "broken.jsonl, row 4 (line 4): abstract is a int, not text",
        "no_abstract.csv: no 'abstract' column (columns: id, title, summary)",
        f"{missing}: no such file or folder",
        "huge_paragraph.txt, abstract 1 (line 1): 2,000,000 characters, over the 12,000",
        "tiny_paragraphs.txt, abstract 1 (line 3): 1 word(s), fewer than 5",
    ):
        assert expected in out, expected
    # The run's failures (every tiny paragraph, the short JSONL row, the huge paragraph)
    # are counted, not printed: ten are shown.
    assert f"… and {TINY_PARAGRAPHS + 2 - 10} more: papersift query failures" in out
    # What went through: the good file, the good JSONL row, UTF-16 and CRLF abstracts.
    extracted = {paper_id for (paper_id,) in stored_rows(
        db, "SELECT paper_id FROM run_papers WHERE outcome = 'extracted'")}
    assert len(extracted) == 19 + 1 + 2
    assert {paper_id_for(UTF16_ABSTRACT), paper_id_for(CRLF_ABSTRACT)} <= extracted
    assert {s.paper_id for s in server.log} == extracted  # nothing else was sent
    # The decoded and the CRLF text are stored as read, and the offsets index them.
    for text in (UTF16_ABSTRACT, CRLF_ABSTRACT):
        [(stored, start, end, evidence)] = stored_rows(
            db, "SELECT p.text, t.char_start, t.char_end, t.evidence FROM tasks t "
                f"JOIN papers p USING (paper_id) WHERE paper_id = '{paper_id_for(text)}'")
        assert stored == text and isinstance(start, int) and isinstance(end, int)
        assert stored[start:end] == evidence
    # Every bad input is a failure row that names its file and place.
    failures = dict(stored_rows(db, "SELECT reason, count(*) FROM failures GROUP BY 1"))
    assert failures == {"empty": 1, "title_only": 1, "binary": 1, "not_utf8": 1,
                        "bad_row": 3, "missing_column": 1, "not_found": 1, "too_long": 1,
                        "too_short": TINY_PARAGRAPHS + 1}  # + "Another well-formed row."
    papers = 22 + 1 + TINY_PARAGRAPHS + 1
    assert stored_rows(db, "SELECT count(*) FROM papers")[0][0] == papers
    unnamed = stored_rows(db, "SELECT count(*) FROM failures WHERE file IS NULL")
    assert unnamed == [(0,)]


@pytest.mark.parametrize("name", ["empty.txt", "title_only.txt", "binary.txt", "latin1.txt",
                                  "no_abstract.csv", "missing.txt", "tiny"])
def test_nothing_to_process_exits_non_zero(name: str, tmp_path: Path,
                                           server: SimEndpoint) -> None:
    path = COMMITTED / name
    if name == "missing.txt":
        path = tmp_path / name
    elif name == "tiny":
        path = tmp_path / "tiny.txt"
        path.write_text("\n\n".join(f"p{i}" for i in range(200)) + "\n", encoding="utf-8")
    result = _run(server, tmp_path / "w.duckdb", path)
    assert result.exit_code == 2, result.output
    assert path.name in result.output
    assert server.log == []


@pytest.mark.parametrize("name", ["utf16_bom", "crlf"])
def test_accepted_encodings_exit_zero(name: str, tmp_path: Path, generated: dict[str, Path],
                                      server: SimEndpoint) -> None:
    result = _run(server, tmp_path / "w.duckdb", generated[name])
    assert result.exit_code == 0, result.output
    assert "1 abstracts: 1 extracted" in result.output
