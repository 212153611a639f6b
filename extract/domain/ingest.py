"""Reading abstracts from text, JSONL, CSV and Parquet files into deduplicated papers.

Every abstract keeps its provenance (file, position, line). Bad input is reported as an
``IngestProblem`` and never stops the other files from being read.

``ingest_stream`` reads files piece by piece (text in blocks of bytes, JSONL and CSV line by
line, Parquet by record batch) and yields the papers in chunks, so memory stays flat however
large the corpus is; ``ingest`` merges the chunks into one result.
"""

from __future__ import annotations

import codecs
import csv
import glob
import hashlib
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from papersift.extract.domain.records import optional_text, optional_year, storable, text_problem

DEFAULT_MAX_CHARS = 12_000
DEFAULT_CHUNK_PAPERS = 2_000
BLOCK_BYTES = 1 << 20  # bytes read from a text file at a time
PARQUET_BATCH_ROWS = 1_024
SUPPORTED_SUFFIXES = (".txt", ".jsonl", ".csv", ".parquet")
TITLE_MAX_CHARS = 200

_BOM = "\ufeff"
_TERMINATED_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")
_TERMINATOR = re.compile(r"(?:\r\n|\r|\n)$")
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


@dataclass(frozen=True)
class Occurrence:
    """One place where an abstract appears."""

    file: str
    position: int
    line: int
    collection: str | None
    venue: str | None
    year: int | None
    source_id: str | None
    title: str | None


@dataclass(frozen=True)
class Paper:
    """A distinct abstract (keyed by its normalised text) and every place it appears."""

    paper_id: str
    text: str
    occurrences: tuple[Occurrence, ...]


@dataclass(frozen=True)
class IngestProblem:
    """Something wrong with the input, named precisely enough to fix it."""

    file: str
    position: int | None
    line: int | None
    reason: str
    message: str
    paper_id: str | None = None


@dataclass(frozen=True)
class Repeat:
    """Another place of a paper that an earlier chunk of the stream already returned."""

    paper_id: str
    occurrence: Occurrence


@dataclass
class IngestResult:
    """Papers in first-seen order, the problems met, and the files that were read.

    A chunk of ``ingest_stream`` also carries ``repeats``: new places of papers returned in
    an earlier chunk (store them as sources, never as new papers). A merged result has none.
    """

    papers: list[Paper]
    problems: list[IngestProblem]
    files: list[str]
    repeats: list[Repeat] = field(default_factory=list)

    @property
    def occurrences(self) -> int:
        """Total number of places abstracts were found, duplicates included."""
        return sum(len(paper.occurrences) for paper in self.papers) + len(self.repeats)


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and trim the ends."""
    return " ".join(text.split())


def paper_id_for(text: str) -> str:
    """The stable id of an abstract: sha256 of its whitespace-normalised UTF-8 text."""
    digest = hashlib.sha256(normalize_whitespace(text).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"


def parse_venue_year(title: str) -> tuple[str | None, int | None]:
    """Venue and year from a title such as 'NeurIPS 2026 Papers'.

    The year is the first 19xx/20xx number; the venue is the word just before it, kept only
    when it has a capital letter (so 'papers from 2025' gives no venue).
    """
    match = _YEAR.search(title)
    if match is None:
        return None, None
    words = title[: match.start()].split()
    venue = words[-1].strip(".,:;-–—_/(") if words else None
    if not venue or not any(ch.isupper() for ch in venue):
        venue = None
    return venue, int(match.group(1))


# --------------------------------------------------------------------------- chunks


def _digest(paper_id: str) -> bytes:
    """The 32 raw bytes behind a ``sha256:<hex>`` id (less than half the memory of the id)."""
    return bytes.fromhex(paper_id.removeprefix("sha256:"))


@dataclass
class _Chunker:
    """State of one ``ingest_stream`` call: the chunk being filled, and the ids of the papers
    earlier chunks returned (the only thing kept for the whole stream)."""

    max_chars: int
    returned: set[bytes] = field(default_factory=set)
    texts: dict[str, str] = field(default_factory=dict)
    places: dict[str, list[Occurrence]] = field(default_factory=dict)
    repeats: list[Repeat] = field(default_factory=list)
    problems: list[IngestProblem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def problem(
        self,
        file: str,
        reason: str,
        message: str,
        *,
        position: int | None = None,
        line: int | None = None,
        paper_id: str | None = None,
    ) -> None:
        self.problems.append(IngestProblem(file, position, line, reason, message, paper_id))

    def add(self, text: str, place: Occurrence, where: str) -> None:
        refused = text_problem(text)
        if refused is not None:
            self.problem(place.file, "bad_text", f"{where}: the abstract {refused}",
                         position=place.position, line=place.line)
            return
        paper_id = paper_id_for(text)
        if paper_id in self.places:
            self.places[paper_id].append(place)
            return
        if _digest(paper_id) in self.returned:
            self.repeats.append(Repeat(paper_id, place))
            return
        self.texts[paper_id] = text
        self.places[paper_id] = [place]
        if len(text) > self.max_chars:
            self.problem(
                place.file,
                "too_long",
                f"{where}: {len(text):,} characters, over the {self.max_chars:,}-character "
                "limit for the model's context; it is stored but will not be extracted",
                position=place.position,
                line=place.line,
                paper_id=paper_id,
            )

    def size(self) -> int:
        """Entries held in the current chunk: papers, repeats and problems."""
        return len(self.places) + len(self.repeats) + len(self.problems)

    def take(self) -> IngestResult:
        """The current chunk as a result; the next one starts empty."""
        papers = [Paper(pid, text, tuple(self.places[pid])) for pid, text in self.texts.items()]
        self.returned.update(_digest(paper.paper_id) for paper in papers)
        chunk = IngestResult(papers, self.problems, self.files, self.repeats)
        self.texts, self.places, self.repeats = {}, {}, []
        self.problems, self.files = [], []
        return chunk


# --------------------------------------------------------------------------- paths


def _is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def _walk_folder(folder: Path, chunker: _Chunker) -> list[Path]:
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


def _expand(raw: str | Path, chunker: _Chunker) -> list[Path]:
    """Turn one argument (file, folder or glob pattern) into the files to read."""
    try:
        return _expand_checked(raw, chunker)
    except OSError as error:  # a path below a folder we may not enter
        shown = storable(str(raw))
        chunker.problem(shown, "unreadable",
                        f"{shown}: cannot be read ({error.strerror or error})")
        return []


def _expand_checked(raw: str | Path, chunker: _Chunker) -> list[Path]:
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


def _suffix_list() -> str:
    return ", ".join(SUPPORTED_SUFFIXES)


# --------------------------------------------------------------------------- decoding
#
# A text file is read twice, block by block: once to check that all of it decodes (a bad
# byte anywhere refuses the whole file, as it did when files were read whole), then to
# parse it. Only one block and the line being assembled are held at a time.


Blocks = Callable[[], Iterator[bytes]]


def _blocks_of(path: Path, block_bytes: int) -> tuple[bytes, Blocks]:
    """The file's first four bytes, and a way to read all of it block by block. A file no
    larger than one block is read once, whole, and both passes reuse its bytes."""
    if path.stat().st_size <= block_bytes:
        data = path.read_bytes()
        return data[:4], lambda: iter([data] if data else [])

    def blocks() -> Iterator[bytes]:
        with path.open("rb") as handle:
            while block := handle.read(block_bytes):
                yield block

    with path.open("rb") as handle:
        head = handle.read(4)
    return head, blocks


def _codec_for(head: bytes) -> str:
    """The codec a file's first four bytes call for: a UTF-16/32 byte-order mark names its
    encoding; anything else is read as UTF-8."""
    if head.startswith(_UTF32_BOMS):
        return "utf-32"
    if head.startswith(_UTF16_BOMS):
        return "utf-16"
    return "utf-8"


def _check_utf8(blocks: Blocks, shown: str, chunker: _Chunker) -> bool:
    """Whether the file is NUL-free UTF-8 with some non-blank text; reports why not.

    A NUL byte anywhere wins over an earlier invalid byte (both refuse the file)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = newlines = 0  # bytes, and b"\n" among them, before the current block
    invalid: tuple[int, int, int] | None = None  # byte offset, line, byte value
    has_text = False
    started = False  # a leading BOM is dropped from the first decoded character
    for block in itertools.chain(blocks(), [b""]):
        nul = block.find(b"\x00")
        if nul >= 0:
            line = newlines + block.count(b"\n", 0, nul) + 1
            chunker.problem(
                shown,
                "binary",
                f"{shown}: binary data, not text (a NUL byte at byte offset {offset + nul:,}, "
                f"line {line})",
                line=line,
            )
            return False
        if invalid is None:
            pending = decoder.getstate()[0]
            try:
                text = decoder.decode(block, final=not block)
            except UnicodeDecodeError as error:
                at = offset - len(pending) + error.start
                # Bytes held back from earlier blocks start a multi-byte character: no b"\n".
                line = newlines + block.count(b"\n", 0, max(0, at - offset)) + 1
                invalid = (at, line, (pending + block)[error.start])
            else:
                if text and not started:
                    text, started = text.removeprefix(_BOM), True
                has_text = has_text or bool(text.strip())
        offset += len(block)
        newlines += block.count(b"\n")
    if invalid is not None:
        at, line, bad = invalid
        chunker.problem(
            shown,
            "not_utf8",
            f"{shown}: not valid UTF-8: byte 0x{bad:02X} at byte offset {at:,} "
            f"(line {line}) cannot be decoded; save the file as UTF-8",
            line=line,
        )
        return False
    return _has_text(has_text, shown, chunker)


def _check_wide(blocks: Blocks, shown: str, chunker: _Chunker, codec: str, head: bytes) -> bool:
    """Whether a file with a UTF-16/32 byte-order mark decodes, holds no NUL character and
    has some non-blank text; reports why not. (The mark states the encoding, so it is read
    rather than refused; the decoded text is what is stored and what offsets index.)"""
    same_order = codec + ("-le" if head.startswith(b"\xff\xfe") else "-be")
    decoder = codecs.getincrementaldecoder(codec)()
    fed = newlines = 0  # bytes fed, and "\n" characters decoded, before the current block
    nul_line: int | None = None
    has_text = False
    for block in itertools.chain(blocks(), [b""]):
        pending = decoder.getstate()[0]
        try:
            text = decoder.decode(block, final=not block)
        except UnicodeDecodeError as error:
            before = (pending + block)[: error.start].decode(same_order, errors="replace")
            line = newlines + before.count("\n") + 1
            chunker.problem(
                shown,
                "bad_encoding",
                f"{shown}: starts with a {codec.upper()} byte-order mark but byte offset "
                f"{fed - len(pending) + error.start:,} (line {line}) is not valid "
                f"{codec.upper()}: {error.reason}",
                line=line,
            )
            return False
        nul = text.find("\x00")
        if nul >= 0 and nul_line is None:
            nul_line = newlines + text.count("\n", 0, nul) + 1
        has_text = has_text or bool(text.strip())
        fed += len(block)
        newlines += text.count("\n")
    if nul_line is not None:
        chunker.problem(shown, "binary",
                        f"{shown}: binary data, not text (a NUL character at line {nul_line})",
                        line=nul_line)
        return False
    return _has_text(has_text, shown, chunker)


def _has_text(has_text: bool, shown: str, chunker: _Chunker) -> bool:
    if not has_text:
        chunker.problem(shown, "empty", f"{shown}: empty file, no abstracts found")
    return has_text


def _decoded(blocks: Blocks, codec: str) -> Iterator[str]:
    """The file's text, piece by piece (a checked file: decoding errors are not expected)."""
    decoder = codecs.getincrementaldecoder(codec)()
    started = codec != "utf-8"  # UTF-16/32 decoders drop their byte-order mark themselves
    for block in itertools.chain(blocks(), [b""]):
        text = decoder.decode(block, final=not block)
        if text and not started:
            text, started = text.removeprefix(_BOM), True
        if text:
            yield text


def _lines(pieces: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, line with its terminator) for the text the pieces make up, a line
    ending at CRLF, CR or LF, wherever the pieces happen to be cut."""
    number = 0
    held: list[str] = []  # text after the last complete line, in pieces (a line may be long)
    for piece in pieces:
        # Lines up to the piece's last terminator are complete, except that a CR at its very
        # end may be the first half of a CRLF, so it waits for the next piece.
        open_end = len(piece) - 1 if piece.endswith("\r") else len(piece)
        cut = _after_last_terminator(piece, open_end)
        if cut == 0:
            held.append(piece)
            continue
        buffer = "".join(held) + piece
        cut += len(buffer) - len(piece)
        for match in _TERMINATED_LINE.finditer(buffer, 0, cut):
            number += 1
            yield number, match.group(0)
        held = [buffer[cut:]]
    rest = "".join(held)
    cut = _after_last_terminator(rest, len(rest))
    for match in _TERMINATED_LINE.finditer(rest, 0, cut):
        number += 1
        yield number, match.group(0)
    if rest[cut:]:
        yield number + 1, rest[cut:]


def _after_last_terminator(text: str, end: int) -> int:
    """The index just past the last CR or LF before ``end`` (0 when there is none)."""
    return max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1


# --------------------------------------------------------------------------- text files


@dataclass(frozen=True)
class _Paragraph:
    line: int
    text: str


def _paragraphs(lines: Iterable[tuple[int, str]]) -> Iterator[_Paragraph]:
    """Blocks of non-blank lines (whitespace-only lines are blank), outer whitespace trimmed.

    Each paragraph's text is an exact slice of the file's text: inner line breaks are kept
    as they are in the file.
    """
    held: list[str] = []  # the paragraph's lines so far, terminators included
    first_line = 0
    last_body = ""
    for number, chunk in lines:
        body = _TERMINATOR.sub("", chunk)
        if body.strip():
            if not held:
                first_line = number
            held.append(chunk)
            last_body = body
        elif held:
            yield _Paragraph(first_line, ("".join(held[:-1]) + last_body).strip())
            held = []
    if held:
        yield _Paragraph(first_line, ("".join(held[:-1]) + last_body).strip())


def _looks_like_title(line: str) -> bool:
    """A lone line such as 'NeurIPS 2026 Papers': short, with a year, not a sentence."""
    return (
        len(line) <= TITLE_MAX_CHARS
        and parse_venue_year(line)[1] is not None
        and not line.rstrip().endswith((".", "!", "?"))
    )


def _read_text(shown: str, pieces: Iterable[str], chunker: _Chunker) -> Iterator[None]:
    paragraphs = _paragraphs(_lines(pieces))
    first = next(paragraphs, None)
    if first is None:
        chunker.problem(shown, "empty", f"{shown}: empty file, no abstracts found")
        return
    second = next(paragraphs, None)
    single_line = "\n" not in first.text and "\r" not in first.text
    if second is None and single_line and _looks_like_title(first.text):
        chunker.problem(
            shown,
            "title_only",
            f"{shown}, line {first.line}: only a collection title ({first.text!r}), "
            "no abstracts below it",
            line=first.line,
        )
        return
    collection: str | None = None
    head = [first] if second is None else [first, second]
    if second is not None and single_line and len(first.text) <= TITLE_MAX_CHARS:
        collection = first.text
        head = [second]
    venue, year = parse_venue_year(collection) if collection else (None, None)
    for position, paragraph in enumerate(itertools.chain(head, paragraphs), start=1):
        place = Occurrence(
            file=shown,
            position=position,
            line=paragraph.line,
            collection=collection,
            venue=venue,
            year=year,
            source_id=None,
            title=None,
        )
        where = f"{shown}, abstract {position} (line {paragraph.line})"
        chunker.add(paragraph.text, place, where)
        yield


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class _Row:
    position: int
    line: int
    values: Mapping[str, Any]
    suspect: str | None = None  # why the row may not be what the file meant (reported)


@dataclass(frozen=True)
class _BadRow:
    """A row that cannot be read at all (reported; reading goes on with the next row)."""

    position: int
    line: int
    detail: str


def _lower_keys(values: Mapping[str, Any]) -> dict[str, Any]:
    return {str(key).strip().lower(): value for key, value in values.items()}


class _DuplicateKeyError(ValueError):
    """A JSON object names the same key twice (which one was meant is unknowable)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook for json.loads: refuse an object with a repeated key (compared as
    ingest compares columns: trimmed, any case)."""
    seen: dict[str, str] = {}
    for key, _ in pairs:
        folded = key.strip().lower()
        if folded in seen:
            raise _DuplicateKeyError(
                f"duplicate JSON key {storable(key)!r} (also {storable(seen[folded])!r}): "
                "which value is meant cannot be known; keep one")
        seen[folded] = key
    return dict(pairs)


def _jsonl_rows(lines: Iterable[tuple[int, str]]) -> Iterator[_Row | _BadRow]:
    position = 0
    for number, chunk in lines:
        if not chunk.strip():
            continue
        position += 1
        try:
            value = json.loads(chunk, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as error:
            detail = f"invalid JSON ({error.msg}, column {error.colno})"
            yield _BadRow(position, number, detail)
            continue
        except _DuplicateKeyError as error:
            yield _BadRow(position, number, str(error))
            continue
        except (ValueError, RecursionError) as error:  # a 5,000-digit number, deep nesting
            yield _BadRow(position, number, f"invalid JSON ({type(error).__name__}: "
                                            f"{str(error)[:120]})")
            continue
        if not isinstance(value, dict):
            yield _BadRow(
                position, number, f"expected a JSON object, found {type(value).__name__}"
            )
            continue
        yield _Row(position, number, _lower_keys(value))


# A row is suspicious when it spans lines and either holds a quote character (a stray quote
# swallows the rows after it, their quotes included) or is this many times longer than the
# median of the rows before it (at least OUTLIER_MIN_ROWS of them) and at least
# OUTLIER_MIN_CHARS long: rows a stray quote merged hold a whole abstract or more, while a
# short cell with a line break among one-word cells is just a short cell.
OUTLIER_FACTOR = 20
OUTLIER_MIN_ROWS = 5
OUTLIER_MIN_CHARS = 500


def _suspect_record(record: list[str], header: list[str], first: int, last: int,
                    lengths: list[int]) -> str | None:
    """Why a CSV record may be rows merged by a stray quote, or None."""
    reasons = []
    if len(record) > len(header):
        reasons.append(f"{len(record)} fields where the header has {len(header)} (the extra "
                       "ones are ignored)")
    if last > first:
        joined = "\n".join(record)
        size = max((len(cell) for cell in record), default=0)
        earlier = sorted(lengths[-200:])
        median = earlier[len(earlier) // 2] if len(earlier) >= OUTLIER_MIN_ROWS else 0
        if '"' in joined:
            reasons.append(f"a field spans lines {first}-{last} and holds a quote character")
        elif median and size > OUTLIER_FACTOR * median and size >= OUTLIER_MIN_CHARS:
            reasons.append(f"a field spans lines {first}-{last} and is {size:,} characters, "
                           f"{size // median}x the median of the rows before it")
    if not reasons:
        return None
    return ("; ".join(reasons) + f": a stray quote may have merged rows; check line {first}")


def _csv_header_and_rows(
    lines: Iterable[tuple[int, str]],
) -> tuple[list[str], Iterator[_Row | _BadRow]]:
    reader = csv.reader(chunk for _, chunk in lines)
    header: list[str] = []
    next_line = 1
    for record in reader:  # csv.Error here is reported by the caller as unreadable
        next_line = reader.line_num + 1
        if any(cell.strip() for cell in record):
            header = [cell.strip().lower() for cell in record]
            break

    def rows() -> Iterator[_Row | _BadRow]:
        nonlocal next_line
        position = 0
        lengths: list[int] = []  # abstract lengths of the rows so far, to spot outliers
        while True:
            start = next_line
            try:
                record = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                yield _BadRow(position + 1, start, f"unreadable CSV ({error}); rest skipped")
                return
            next_line = reader.line_num + 1
            if not any(cell.strip() for cell in record):
                continue
            position += 1
            values = dict(zip(header, record, strict=False))
            suspect = _suspect_record(record, header, start, reader.line_num, lengths)
            lengths.append(len(str(values.get("abstract") or "")))
            yield _Row(position, start, values, suspect)

    return header, rows()


class _ParquetReadError(Exception):
    """A Parquet file whose data could not be read past some row."""

    def __init__(self, rows_read: int, error: Exception) -> None:
        super().__init__(str(error))
        self.rows_read = rows_read


def _parquet_columns_and_rows(path: Path) -> tuple[list[str], Iterator[_Row | _BadRow]]:
    """Column names (lower case), then rows read one record batch at a time."""
    parquet = pq.ParquetFile(path)
    originals = [str(name) for name in parquet.schema_arrow.names]
    names = [name.strip().lower() for name in originals]
    wanted = {original: name for original, name in zip(originals, names, strict=True)
              if name in _TABLE_COLUMNS}

    def rows() -> Iterator[_Row | _BadRow]:
        index = 0
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=list(wanted))
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
                raise _ParquetReadError(index, error) from error
            try:
                columns = {wanted[original]: batch.column(original).to_pylist()
                           for original in wanted}
            except Exception:  # one value pyarrow cannot turn into Python: find it
                for offset in range(batch.num_rows):
                    index += 1
                    yield _parquet_row(batch.slice(offset, 1), wanted, index)
                continue
            for offset in range(batch.num_rows):
                index += 1
                yield _Row(index, index, {name: column[offset]
                                          for name, column in columns.items()})

    return names, rows()


_TABLE_COLUMNS = ("abstract", "id", "title", "venue", "year")


def _parquet_row(row: Any, wanted: Mapping[str, str], index: int) -> _Row | _BadRow:
    """One Parquet row (a one-row record batch), or why it cannot be read."""
    values = {}
    for original, name in wanted.items():
        try:
            values[name] = row.column(original).to_pylist()[0]
        except Exception as error:
            return _BadRow(index, index, f"column {storable(original)!r} cannot be read "
                                         f"({type(error).__name__}: {str(error)[:120]})")
    return _Row(index, index, values)


def _read_table(
    shown: str,
    columns: Sequence[str] | None,
    rows: Iterator[_Row | _BadRow],
    chunker: _Chunker,
) -> Iterator[None]:
    """Shared row handling for JSONL, CSV and Parquet, one row at a time.

    ``columns`` is the header when the format has one; JSONL has none, so a missing
    ``abstract`` key is judged over all of its rows: rows before the first one with that key
    wait (their place only, not their values) until the file turns out to have it.
    """
    if columns is not None and "abstract" not in columns:
        chunker.problem(
            shown,
            "missing_column",
            f"{shown}: no 'abstract' column (columns: {', '.join(columns) or 'none'})",
        )
        return
    twice = sorted({name for name in columns or () if name in _TABLE_COLUMNS
                    and list(columns or ()).count(name) > 1})
    if twice:
        chunker.problem(
            shown, "duplicate_column",
            f"{shown}: the column(s) {', '.join(twice)} appear more than once (columns "
            f"{', '.join(storable(c) for c in columns or ())}): which one is meant cannot be "
            "known; rename or drop the extra one")
        return
    seen_rows = 0
    has_abstract_key = columns is not None
    waiting: list[_Row | _BadRow] = []
    for row in rows:
        seen_rows += 1
        if not has_abstract_key:
            if isinstance(row, _BadRow) or "abstract" not in row.values:
                waiting.append(row if isinstance(row, _BadRow) else _Row(row.position,
                                                                         row.line, {}))
                continue
            has_abstract_key = True
            for earlier in waiting:
                _take_row(shown, earlier, chunker)
                yield
            waiting = []
        _take_row(shown, row, chunker)
        yield
    if seen_rows == 0:
        chunker.problem(shown, "empty", f"{shown}: no data rows, no abstracts found")
        return
    if has_abstract_key:
        return
    for earlier in waiting:
        if isinstance(earlier, _BadRow):
            _take_row(shown, earlier, chunker)
            yield
    if any(isinstance(earlier, _Row) for earlier in waiting):
        chunker.problem(shown, "missing_column", f"{shown}: no row has an 'abstract' field")


def _take_row(shown: str, row: _Row | _BadRow, chunker: _Chunker) -> None:
    """One row into the chunker; whatever goes wrong with it is a problem of that row."""
    try:
        _take_row_checked(shown, row, chunker)
    except Exception as error:  # a last line: one record never stops the file
        chunker.problem(shown, "bad_row",
                        f"{shown}, row {row.position} (line {row.line}): cannot be read "
                        f"({type(error).__name__}: {storable(str(error))[:200]})",
                        position=row.position, line=row.line)


def _take_row_checked(shown: str, row: _Row | _BadRow, chunker: _Chunker) -> None:
    if isinstance(row, _BadRow):
        chunker.problem(
            shown,
            "bad_row",
            f"{shown}, row {row.position} (line {row.line}): {row.detail}",
            position=row.position,
            line=row.line,
        )
        return
    where = f"{shown}, row {row.position} (line {row.line})"
    abstract = row.values.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        found = "empty" if isinstance(abstract, str) else (
            "missing" if abstract is None else f"a {type(abstract).__name__}, not text"
        )
        chunker.problem(
            shown,
            "bad_row",
            f"{where}: abstract is {found}",
            position=row.position,
            line=row.line,
        )
        return
    fields: dict[str, Any] = {}
    dropped: list[str] = []
    for name in ("venue", "id", "title"):
        fields[name], why = optional_text(name, row.values.get(name))
        dropped += [why] if why else []
    fields["year"], why = optional_year(row.values.get("year"))
    dropped += [why] if why else []
    place = Occurrence(
        file=shown,
        position=row.position,
        line=row.line,
        collection=None,
        venue=fields["venue"],
        year=fields["year"],
        source_id=fields["id"],
        title=fields["title"],
    )
    before = len(chunker.problems)
    if row.suspect:
        chunker.problem(shown, "suspect_row", f"{where}: {row.suspect}",
                        position=row.position, line=row.line)
        before += 1
    chunker.add(abstract, place, where)
    if dropped and len(chunker.problems) == before:  # the abstract itself was taken
        chunker.problem(shown, "bad_field", f"{where}: " + "; ".join(dropped),
                        position=row.position, line=row.line)


# --------------------------------------------------------------------------- files


def _read_parquet(path: Path, chunker: _Chunker) -> Iterator[None]:
    shown = storable(str(path))
    try:
        names, rows = _parquet_columns_and_rows(path)
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        chunker.problem(shown, "unreadable", f"{shown}: cannot read as Parquet: {error}")
        return
    chunker.files.append(shown)
    try:
        yield from _read_table(shown, names, rows, chunker)
    except _ParquetReadError as broken:
        chunker.problem(shown, "unreadable",
                        f"{shown}: cannot read as Parquet after row {broken.rows_read:,}: "
                        f"{broken}", position=broken.rows_read + 1)


def _read_file(path: Path, chunker: _Chunker, block_bytes: int) -> Iterator[None]:
    """Read one file into the chunker, yielding after each abstract or row taken."""
    if path.suffix.lower() == ".parquet":
        yield from _read_parquet(path, chunker)
        return
    shown = storable(str(path))
    try:
        head, blocks = _blocks_of(path, block_bytes)
        codec = _codec_for(head)
        if codec == "utf-8":
            readable = _check_utf8(blocks, shown, chunker)
        else:
            readable = _check_wide(blocks, shown, chunker, codec, head)
    except OSError as error:
        chunker.problem(shown, "unreadable",
                        f"{shown}: cannot be read ({error.strerror or type(error).__name__})")
        return
    chunker.files.append(shown)  # listed as read even when its content is refused
    if not readable:
        return
    try:
        yield from _parse_text_file(path, shown, _decoded(blocks, codec), chunker)
    except (OSError, UnicodeDecodeError) as error:  # changed or vanished since the check
        reason = error.strerror if isinstance(error, OSError) else "it changed while read"
        chunker.problem(shown, "unreadable", f"{shown}: cannot be read ({reason})")


def _read_file_guarded(path: Path, chunker: _Chunker, block_bytes: int) -> Iterator[None]:
    """_read_file, with any error it did not foresee turned into a problem of that file
    (what was read before it stays read)."""
    shown = storable(str(path))
    taken = 0
    try:
        for _ in _read_file(path, chunker, block_bytes):
            taken += 1
            yield
    except Exception as error:
        chunker.problem(shown, "unreadable",
                        f"{shown}: reading stopped after {taken:,} record(s): "
                        f"{type(error).__name__}: {storable(str(error))[:200]}")


def _parse_text_file(
    path: Path, shown: str, pieces: Iterator[str], chunker: _Chunker
) -> Iterator[None]:
    suffix = path.suffix.lower()
    if suffix == ".txt":
        yield from _read_text(shown, pieces, chunker)
    elif suffix == ".jsonl":
        yield from _read_table(shown, None, _jsonl_rows(_lines(pieces)), chunker)
    else:
        try:
            header, rows = _csv_header_and_rows(_lines(pieces))
        except csv.Error as error:
            chunker.problem(shown, "unreadable",
                            f"{shown}: cannot read the CSV header ({error})")
            return
        yield from _read_table(shown, header, rows, chunker)


def ingest_stream(
    paths: Sequence[str | Path],
    max_chars: int = DEFAULT_MAX_CHARS,
    chunk_papers: int = DEFAULT_CHUNK_PAPERS,
    *,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[IngestResult]:
    """Read every abstract under ``paths`` (files, folders or glob patterns), in chunks.

    Each chunk holds at most ``chunk_papers`` + 1 entries (papers, repeats and problems
    together: a too-long paper brings its problem along) and the files first opened while
    it filled. A paper appears as a ``Paper`` in
    exactly one chunk, the first where it is met; its later places in other chunks come as
    ``repeats``. What stays for the whole stream is the set of returned ids (32 bytes each
    plus set overhead, about 10 MB per 100,000 papers) and the list of files opened.
    Problems are collected, never raised; messages are the same as ``ingest``'s.
    """
    if chunk_papers < 1 or block_bytes < 1:
        raise ValueError("chunk_papers and block_bytes must be at least 1")
    chunker = _Chunker(max_chars=max_chars)
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
            for _ in itertools.chain(_read_file_guarded(path, chunker, block_bytes), [None]):
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


def ingest(paths: Sequence[str | Path], max_chars: int = DEFAULT_MAX_CHARS) -> IngestResult:
    """Read every abstract under ``paths`` (files, folders or glob patterns) at once.

    Files are read in the order given (folders and patterns sorted by path), each file at
    most once. Problems are collected, never raised. The merged ``ingest_stream``.
    """
    return merge_chunks(ingest_stream(paths, max_chars))
