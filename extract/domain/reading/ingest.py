"""Reading abstracts from text, JSONL, CSV and Parquet files into deduplicated papers.

Every abstract keeps its provenance (file, position, line). Bad input is reported as an
``IngestProblem`` and never stops the other files from being read.

``ingest_stream`` reads files piece by piece (text in blocks of bytes, JSONL and CSV line by
line, Parquet by record batch) and yields the papers in chunks, so memory stays flat however
large the corpus is; ``ingest`` merges the chunks into one result.
"""


import csv
import glob
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from papersift.errors import InputError
from papersift.extract.domain.reading.ingest_results import (
    Chunker,
    IngestProblem,
    IngestResult,
    Occurrence,
    Paper,
    Repeat,
    normalize_whitespace,
    paper_id_for,
    parse_venue_year,
)
from papersift.extract.domain.reading.ingest_tables import (
    BadTableRow,
    ParquetReadError,
    TableRow,
    csv_header_and_rows,
    jsonl_rows,
    read_table,
)
from papersift.extract.domain.reading.ingest_text import (
    DEFAULT_MAX_CHARS,
    TITLE_MAX_CHARS,
    blocks_of,
    check_utf8,
    check_wide,
    codec_for,
    decoded,
    numbered_lines,
    read_text,
)
from papersift.extract.domain.reading.records import storable

DEFAULT_CHUNK_PAPERS = 2_000
BLOCK_BYTES = 1 << 20  # bytes read from a text file at a time
SUPPORTED_SUFFIXES = (".txt", ".jsonl", ".csv", ".parquet")
# Opens a Parquet file as its column names and rows. runs.ingest_files passes pyarrow's
# (the domain imports no pyarrow); without one, a Parquet file is reported unreadable.
ParquetOpener = Callable[[Path], tuple[list[str], Iterator[TableRow | BadTableRow]]]

__all__ = [
    "BLOCK_BYTES", "DEFAULT_CHUNK_PAPERS", "DEFAULT_MAX_CHARS", "SUPPORTED_SUFFIXES",
    "TITLE_MAX_CHARS", "IngestProblem", "IngestResult", "Occurrence", "Paper", "ParquetOpener",
    "Repeat", "ingest", "ingest_stream", "merge_chunks", "normalize_whitespace",
    "paper_id_for", "parse_venue_year",
]


# --------------------------------------------------------------------------- paths


def _is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def _walk_folder(folder: Path, chunker: Chunker) -> list[Path]:
    """Supported files under a folder, recursively, hidden entries skipped, sorted by path;
    a subfolder that cannot be listed is reported, not skipped in silence."""
    found: list[Path] = []

    def unreadable(error: OSError) -> None:
        where = storable(str(error.filename or folder))
        chunker.problem(where, "unreadable",
                        f"{where}: folder cannot be read ({error.strerror or error}); its "
                        "files were skipped")

    for root, dirs, names in os.walk(folder, onerror=unreadable):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            candidate = Path(root) / name
            if not name.startswith(".") and _is_supported(candidate) and _is_file(candidate):
                found.append(candidate)
    return sorted(found)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return True  # reading it will say what is wrong


def _expand(raw: str | Path, chunker: Chunker) -> list[Path]:
    """Turn one argument (file, folder or glob pattern) into the files to read."""
    try:
        return _expand_checked(raw, chunker)
    except OSError as error:  # a path below a folder we may not enter
        shown = storable(str(raw))
        chunker.problem(shown, "unreadable",
                        f"{shown}: cannot be read ({error.strerror or error})")
        return []


def _expand_checked(raw: str | Path, chunker: Chunker) -> list[Path]:
    path = Path(raw)
    shown = storable(str(raw))
    if path.is_dir():
        files = _walk_folder(path, chunker)
        if not files:
            chunker.problem(
                shown,
                "not_found",
                f"{shown}: folder holds no {_suffix_list()} files",
            )
        return files
    if path.is_file():
        if not _is_supported(path):
            chunker.problem(
                shown,
                "unsupported_type",
                f"{shown}: unsupported file type {path.suffix or '(no suffix)'!r}; "
                f"expected one of {_suffix_list()}",
            )
            return []
        return [path]
    if isinstance(raw, str) and glob.has_magic(raw):
        files = []
        for match in sorted(glob.glob(raw, recursive=True)):
            candidate = Path(match)
            if candidate.is_dir():
                files.extend(_walk_folder(candidate, chunker))
            elif _is_file(candidate) and _is_supported(candidate):
                files.append(candidate)
        if not files:
            chunker.problem(
                shown, "not_found", f"{shown}: pattern matches no {_suffix_list()} files"
            )
        return files
    chunker.problem(shown, "not_found", f"{shown}: no such file or folder")
    return []


def names_nothing(raw: str | Path) -> bool:
    """Whether an input argument names no file, folder or glob match (usually a typo)."""
    try:
        if Path(raw).exists() or Path(raw).is_symlink():
            return False
    except OSError:
        return False  # reading it will say what is wrong
    return not (isinstance(raw, str) and glob.has_magic(raw)
                and next(glob.iglob(raw, recursive=True), None) is not None)


def check_inputs(paths: Sequence[str | Path]) -> None:
    """Refuse, before anything is written, inputs none of which names anything."""
    missing = [str(raw) for raw in paths if names_nothing(raw)]
    if missing and len(missing) == len(paths):
        shown = ", ".join(storable(raw) for raw in missing[:5])
        raise InputError(f"nothing to read: no such file or folder: {shown}"
                         f"{' …' if len(missing) > 5 else ''} (nothing was written)")


def _suffix_list() -> str:
    return ", ".join(SUPPORTED_SUFFIXES)


# --------------------------------------------------------------------------- files


def _read_parquet(path: Path, chunker: Chunker, parquet: ParquetOpener | None
                  ) -> Iterator[None]:
    shown = storable(str(path))
    if parquet is None:
        chunker.problem(shown, "unreadable", f"{shown}: cannot read as Parquet: no Parquet "
                        "reader given (read files through papersift.extract.runs.ingest_files)")
        return
    try:
        names, rows = parquet(path)
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        chunker.problem(shown, "unreadable", f"{shown}: cannot read as Parquet: {error}")
        return
    chunker.files.append(shown)
    try:
        yield from read_table(shown, names, rows, chunker)
    except ParquetReadError as broken:
        chunker.problem(shown, "unreadable",
                        f"{shown}: cannot read as Parquet after row {broken.rows_read:,}: "
                        f"{broken}", position=broken.rows_read + 1)


def _read_file(path: Path, chunker: Chunker, block_bytes: int,
               parquet: ParquetOpener | None) -> Iterator[None]:
    """Read one file into the chunker, yielding after each abstract or row taken."""
    if path.suffix.lower() == ".parquet":
        yield from _read_parquet(path, chunker, parquet)
        return
    shown = storable(str(path))
    try:
        head, blocks = blocks_of(path, block_bytes)
        codec = codec_for(head)
        if codec == "utf-8":
            readable = check_utf8(blocks, shown, chunker)
        else:
            readable = check_wide(blocks, shown, chunker, codec, head)
    except OSError as error:
        chunker.problem(shown, "unreadable",
                        f"{shown}: cannot be read ({error.strerror or type(error).__name__})")
        return
    chunker.files.append(shown)  # listed as read even when its content is refused
    if not readable:
        return
    try:
        yield from _parse_text_file(path, shown, decoded(blocks, codec), chunker)
    except (OSError, UnicodeDecodeError) as error:  # changed or vanished since the check
        reason = error.strerror if isinstance(error, OSError) else "it changed while read"
        chunker.problem(shown, "unreadable", f"{shown}: cannot be read ({reason})")


def _read_file_guarded(path: Path, chunker: Chunker, block_bytes: int,
                       parquet: ParquetOpener | None) -> Iterator[None]:
    """_read_file, with any error it did not foresee turned into a problem of that file
    (what was read before it stays read)."""
    shown = storable(str(path))
    taken = 0
    try:
        for _ in _read_file(path, chunker, block_bytes, parquet):
            taken += 1
            yield
    except Exception as error:
        chunker.problem(shown, "unreadable",
                        f"{shown}: reading stopped after {taken:,} record(s): "
                        f"{type(error).__name__}: {storable(str(error))[:200]}")


def _parse_text_file(
    path: Path, shown: str, pieces: Iterator[str], chunker: Chunker
) -> Iterator[None]:
    suffix = path.suffix.lower()
    if suffix == ".txt":
        yield from read_text(shown, pieces, chunker)
    elif suffix == ".jsonl":
        yield from read_table(shown, None, jsonl_rows(numbered_lines(pieces)), chunker)
    else:
        try:
            header, rows = csv_header_and_rows(numbered_lines(pieces))
        except csv.Error as error:
            chunker.problem(shown, "unreadable",
                            f"{shown}: cannot read the CSV header ({error})")
            return
        yield from read_table(shown, header, rows, chunker)


def ingest_stream(
    paths: Sequence[str | Path],
    max_chars: int = DEFAULT_MAX_CHARS,
    chunk_papers: int = DEFAULT_CHUNK_PAPERS,
    *,
    block_bytes: int = BLOCK_BYTES,
    parquet: ParquetOpener | None = None,
) -> Iterator[IngestResult]:
    """Read every abstract under ``paths`` (files, folders or glob patterns), in chunks.

    Each chunk holds at most ``chunk_papers`` + 1 entries (papers, repeats and problems
    together: a too-long paper brings its problem along) and the files first opened while
    it filled. A paper appears as a ``Paper`` in
    exactly one chunk, the first where it is met; its later places in other chunks come as
    ``repeats``. What stays for the whole stream is the set of returned ids (32 bytes each
    plus set overhead, about 10 MB per 100,000 papers) and the list of files opened.
    Problems are collected, never raised; messages are the same as ``ingest``'s.
    ``parquet`` opens Parquet files (runs.ingest_files.ingest_stream passes pyarrow's).
    """
    if chunk_papers < 1 or block_bytes < 1:
        raise ValueError("chunk_papers and block_bytes must be at least 1")
    chunker = Chunker(max_chars=max_chars)
    opened: set[str] = set()
    for raw in paths:
        files = _expand(raw, chunker)
        if chunker.size() >= chunk_papers:
            yield chunker.take()
        for path in files:
            key = os.path.realpath(path)
            if key in opened:
                continue
            opened.add(key)
            for _ in itertools.chain(_read_file_guarded(path, chunker, block_bytes, parquet),
                                     [None]):
                if chunker.size() >= chunk_papers:
                    yield chunker.take()
    if chunker.size() or chunker.files:
        yield chunker.take()


def merge_chunks(chunks: Iterable[IngestResult]) -> IngestResult:
    """One result from a stream's chunks: each paper with all its places, repeats folded in."""
    papers: dict[str, Paper] = {}
    later: dict[str, list[Occurrence]] = {}
    problems: list[IngestProblem] = []
    files: list[str] = []
    for chunk in chunks:
        for paper in chunk.papers:
            papers[paper.paper_id] = paper
        for repeat in chunk.repeats:
            later.setdefault(repeat.paper_id, []).append(repeat.occurrence)
        problems.extend(chunk.problems)
        files.extend(chunk.files)
    merged = [
        Paper(paper.paper_id, paper.text, paper.occurrences + tuple(later.get(pid, ())))
        for pid, paper in papers.items()
    ]
    return IngestResult(papers=merged, problems=problems, files=files)


def ingest(paths: Sequence[str | Path], max_chars: int = DEFAULT_MAX_CHARS,
           *, parquet: ParquetOpener | None = None) -> IngestResult:
    """Read every abstract under ``paths`` (files, folders or glob patterns) at once.

    Files are read in the order given (folders and patterns sorted by path), each file at
    most once. Problems are collected, never raised. The merged ``ingest_stream``.
    """
    return merge_chunks(ingest_stream(paths, max_chars, parquet=parquet))
