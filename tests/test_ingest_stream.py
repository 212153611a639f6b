"""ingest_stream: the chunks, merged, are exactly what one whole read gives, whatever the
chunk size and however the bytes are cut; a paper is a Paper in one chunk only."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from papersift.extract.domain.reading.ingest import IngestResult, merge_chunks, paper_id_for
from papersift.extract.runs.ingest_files import PARQUET_BATCH_ROWS, ingest, ingest_stream
from tests.badinput import COMMITTED, TINY_CHUNK, write_generated

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "neurips-2026"
SETTINGS = settings(max_examples=120, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def as_tuples(result: IngestResult) -> tuple[object, ...]:
    """Everything a result holds, as plain tuples, for exact comparison."""
    return (
        [(p.paper_id, p.text, [dataclasses.astuple(o) for o in p.occurrences])
         for p in result.papers],
        [dataclasses.astuple(problem) for problem in result.problems],
        result.files,
        result.repeats,
    )


def check_chunks(chunks: Sequence[IngestResult], chunk_papers: int) -> None:
    """The stream's own promises: bounded chunks, each paper returned once, and repeats
    only of papers an earlier chunk returned."""
    returned: set[str] = set()
    for chunk in chunks:
        assert len(chunk.papers) + len(chunk.repeats) + len(chunk.problems) <= chunk_papers + 1
        ids = [paper.paper_id for paper in chunk.papers]
        assert len(set(ids)) == len(ids)
        assert not returned & set(ids)
        assert {repeat.paper_id for repeat in chunk.repeats} <= returned
        returned.update(ids)


def streamed(paths: Sequence[str | Path], chunk_papers: int, block_bytes: int,
             max_chars: int = 12_000) -> IngestResult:
    chunks = list(ingest_stream(paths, max_chars, chunk_papers, block_bytes=block_bytes))
    check_chunks(chunks, chunk_papers)
    return merge_chunks(chunks)


@pytest.mark.parametrize("chunk_papers", [1, 5, 19, 2_000])
@pytest.mark.parametrize("block_bytes", [1, 64, 1 << 20])
def test_bundled_corpus_streams_to_the_whole_result(chunk_papers: int,
                                                    block_bytes: int) -> None:
    whole = ingest([CORPUS])
    assert len(whole.papers) == 63 and whole.occurrences == 76
    assert as_tuples(streamed([CORPUS], chunk_papers, block_bytes)) == as_tuples(whole)


def test_a_paper_met_again_in_a_later_chunk_comes_back_as_a_repeat() -> None:
    chunks = list(ingest_stream([CORPUS], chunk_papers=5))
    whole = ingest([CORPUS])
    assert sum(len(chunk.papers) for chunk in chunks) == len(whole.papers)
    assert sum(chunk.occurrences for chunk in chunks) == whole.occurrences
    repeats = [repeat for chunk in chunks for repeat in chunk.repeats]
    assert len(repeats) == 13  # the 13 abstracts that two files share
    shared = {p.paper_id: p.occurrences[1] for p in whole.papers if len(p.occurrences) == 2}
    assert {r.paper_id: r.occurrence for r in repeats} == shared


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_generated(tmp_path_factory.mktemp("generated-bad"))


@pytest.mark.parametrize("name", ["empty.txt", "title_only.txt", "binary.txt", "latin1.txt",
                                  "broken.jsonl", "no_abstract.csv"])
@pytest.mark.parametrize("block_bytes", [1, 2, 3, 5, 64])
def test_committed_bad_inputs_stream_to_the_same_problems(name: str, block_bytes: int) -> None:
    paths = [COMMITTED / name, CORPUS / "000_1aa1e087e7a844d9.txt"]
    whole = ingest(paths)
    assert whole.problems, name  # every one of them is a bad input
    assert as_tuples(streamed(paths, 3, block_bytes)) == as_tuples(whole)


@pytest.mark.parametrize("name", ["huge_paragraph", "utf16_bom", "crlf", "tiny_paragraphs"])
def test_generated_bad_inputs_stream_to_the_same_result(name: str,
                                                        generated: dict[str, Path]) -> None:
    whole = ingest([generated[name]])
    for block_bytes in (3, 4_096):
        chunk_papers = TINY_CHUNK if name == "tiny_paragraphs" else 1
        result = streamed([generated[name]], chunk_papers, block_bytes)
        assert as_tuples(result) == as_tuples(whole), (name, block_bytes)


def test_chunks_follow_the_file(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    rows = [json.dumps({"abstract": f"Abstract number {index} of a long file."})
            for index in range(5_000)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    chunks = list(ingest_stream([path], chunk_papers=10, block_bytes=256))
    assert len(chunks) == 500
    positions = [[p.occurrences[0].position for p in chunk.papers] for chunk in chunks]
    assert positions == [list(range(start, start + 10)) for start in range(1, 5_001, 10)]
    assert [chunk.files for chunk in chunks[:2]] == [[str(path)], []]


def test_parquet_streams_by_record_batch(tmp_path: Path) -> None:
    rows = 2 * PARQUET_BATCH_ROWS + 300
    texts = [f"Parquet abstract {index % 900} with enough words." for index in range(rows)]
    path = tmp_path / "many.parquet"
    pq.write_table(pa.table({"Abstract": texts, "id": [str(i) for i in range(rows)]}), path,
                   row_group_size=700)
    whole = ingest([path])
    assert len(whole.papers) == 900 and whole.occurrences == rows
    for chunk_papers in (1, 100, 5_000):
        assert as_tuples(streamed([path], chunk_papers, 1 << 20)) == as_tuples(whole)


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        next(ingest_stream([CORPUS], chunk_papers=0))


# ------------------------------------------------------------------------------ properties

WORDS = st.sampled_from(["graph", "neural", "café", "naïve", "x²", "—", "$\\alpha$", "2026",
                         "Net.", "ﬁne", "“q”", "a", "b"])
PARAGRAPH = st.lists(st.lists(WORDS, min_size=1, max_size=6).map(" ".join),
                     min_size=1, max_size=3)
NEWLINE = st.sampled_from(["\n", "\r\n", "\r"])
ENCODING = st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"])


@SETTINGS
@given(files=st.lists(st.lists(PARAGRAPH, min_size=1, max_size=8), min_size=1, max_size=3),
       newline=NEWLINE, encoding=ENCODING, chunk_papers=st.integers(1, 6),
       block_bytes=st.integers(1, 40), max_chars=st.sampled_from([20, 12_000]),
       repeats=st.data())
def test_chunk_and_block_boundaries_lose_and_duplicate_nothing(
    tmp_path: Path, files: list[list[list[str]]], newline: str, encoding: str,
    chunk_papers: int, block_bytes: int, max_chars: int, repeats: st.DataObject,
) -> None:
    pool = [newline.join(lines) for paragraphs in files for lines in paragraphs]
    paths = []
    written = 0
    for index, paragraphs in enumerate(files):
        texts = [newline.join(lines) for lines in paragraphs]
        texts += repeats.draw(st.lists(st.sampled_from(pool), max_size=3))  # across files too
        body = (newline * 2).join(["Generated 2026 Papers", *texts]) + newline
        path = tmp_path / f"{index}.txt"
        path.write_bytes(body.encode(encoding))
        paths.append(path)
        written += len(texts)
    whole = ingest(paths, max_chars)
    result = streamed(paths, chunk_papers, block_bytes, max_chars)
    assert as_tuples(result) == as_tuples(whole)
    # And the whole read itself kept every paragraph once.
    assert whole.occurrences == written
    for paper in whole.papers:
        assert paper.paper_id == paper_id_for(paper.text)
        assert paper.text in pool


@SETTINGS
@given(data=st.binary(max_size=60), prefix=st.sampled_from(
    [b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"]),
    suffix=st.sampled_from([".txt", ".jsonl", ".csv"]), block_bytes=st.integers(1, 9))
def test_any_bytes_give_the_same_result_however_they_are_cut(
    tmp_path: Path, data: bytes, prefix: bytes, suffix: str, block_bytes: int
) -> None:
    """Decoding errors name the same byte offset and line whatever the block size."""
    path = tmp_path / f"bytes{suffix}"
    path.write_bytes(prefix + data)
    whole = ingest([path])
    assert as_tuples(streamed([path], 2, block_bytes)) == as_tuples(whole)
