"""Reading abstracts from text, JSONL, CSV and Parquet files into deduplicated papers.

Every abstract keeps its provenance (file, position, line). Bad input is reported as an
``IngestProblem`` and never stops the other files from being read.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import io
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

DEFAULT_MAX_CHARS = 12_000
SUPPORTED_SUFFIXES = (".txt", ".jsonl", ".csv", ".parquet")
TITLE_MAX_CHARS = 200

_BOM = "\ufeff"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
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


@dataclass
class IngestResult:
    """Papers in first-seen order, the problems met, and the files that were read."""

    papers: list[Paper]
    problems: list[IngestProblem]
    files: list[str]

    @property
    def occurrences(self) -> int:
        """Total number of places abstracts were found, duplicates included."""
        return sum(len(paper.occurrences) for paper in self.papers)


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


# --------------------------------------------------------------------------- paths


@dataclass
class _Collector:
    """Mutable state shared while one ``ingest`` call runs."""

    max_chars: int
    order: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    places: dict[str, list[Occurrence]] = field(default_factory=dict)
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
        paper_id = paper_id_for(text)
        if paper_id not in self.places:
            self.order.append(paper_id)
            self.texts[paper_id] = text
            self.places[paper_id] = []
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
        self.places[paper_id].append(place)

    def result(self) -> IngestResult:
        papers = [
            Paper(pid, self.texts[pid], tuple(self.places[pid])) for pid in self.order
        ]
        return IngestResult(papers=papers, problems=self.problems, files=self.files)


def _is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def _walk_folder(folder: Path) -> list[Path]:
    """Supported files under a folder, recursively, hidden entries skipped, sorted by path."""
    found: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            candidate = Path(root) / name
            if not name.startswith(".") and _is_supported(candidate) and candidate.is_file():
                found.append(candidate)
    return sorted(found)


def _expand(raw: str | Path, collector: _Collector) -> list[Path]:
    """Turn one argument (file, folder or glob pattern) into the files to read."""
    path = Path(raw)
    shown = str(raw)
    if path.is_dir():
        files = _walk_folder(path)
        if not files:
            collector.problem(
                shown,
                "not_found",
                f"{shown}: folder holds no {_suffix_list()} files",
            )
        return files
    if path.is_file():
        if not _is_supported(path):
            collector.problem(
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
                files.extend(_walk_folder(candidate))
            elif candidate.is_file() and _is_supported(candidate):
                files.append(candidate)
        if not files:
            collector.problem(
                shown, "not_found", f"{shown}: pattern matches no {_suffix_list()} files"
            )
        return files
    collector.problem(shown, "not_found", f"{shown}: no such file or folder")
    return []


def _suffix_list() -> str:
    return ", ".join(SUPPORTED_SUFFIXES)


# --------------------------------------------------------------------------- decoding


def _decode_utf16(data: bytes, shown: str, collector: _Collector) -> str | None:
    """Text of a file that starts with a UTF-16 or UTF-32 byte-order mark (the mark states
    the encoding, so it is read rather than refused; the decoded text is what is stored and
    what offsets index)."""
    codec = "utf-32" if data.startswith(_UTF32_BOMS) else "utf-16"
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as error:
        line = data[: error.start].decode(codec, errors="replace").count("\n") + 1
        collector.problem(
            shown,
            "bad_encoding",
            f"{shown}: starts with a {codec.upper()} byte-order mark but byte offset "
            f"{error.start:,} (line {line}) is not valid {codec.upper()}: {error.reason}",
            line=line,
        )
        return None
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        collector.problem(shown, "binary",
                          f"{shown}: binary data, not text (a NUL character at line {line})",
                          line=line)
        return None
    return text


def _decode(data: bytes, shown: str, collector: _Collector) -> str | None:
    """Text of a text-based file: UTF-8 (BOM dropped), or UTF-16/32 when a byte-order mark
    says so; None after reporting why not."""
    if data.startswith(_UTF16_BOMS + _UTF32_BOMS):
        return _decode_utf16(data, shown, collector)
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        collector.problem(
            shown,
            "binary",
            f"{shown}: binary data, not text (a NUL byte at byte offset {nul:,}, line {line})",
            line=line,
        )
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        bad = data[error.start]
        collector.problem(
            shown,
            "not_utf8",
            f"{shown}: not valid UTF-8: byte 0x{bad:02X} at byte offset {error.start:,} "
            f"(line {line}) cannot be decoded; save the file as UTF-8",
            line=line,
        )
        return None
    return text.removeprefix(_BOM)


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(start offset, line number, line with its terminator) for each line of ``text``."""
    for number, match in enumerate(_LINE.finditer(text), start=1):
        chunk = match.group(0)
        if not chunk:
            break
        yield match.start(), number, chunk


# --------------------------------------------------------------------------- text files


@dataclass(frozen=True)
class _Paragraph:
    line: int
    text: str


def _split_paragraphs(text: str) -> list[_Paragraph]:
    """Blocks of non-blank lines (whitespace-only lines are blank), outer whitespace trimmed.

    Each paragraph's text is an exact slice of ``text``: inner line breaks are kept as they
    are in the file.
    """
    paragraphs: list[_Paragraph] = []
    start: int | None = None
    first_line = 0
    end = 0
    for offset, number, chunk in _lines(text):
        body = _TERMINATOR.sub("", chunk)
        if body.strip():
            if start is None:
                start, first_line = offset, number
            end = offset + len(body)
        elif start is not None:
            paragraphs.append(_Paragraph(first_line, text[start:end].strip()))
            start = None
    if start is not None:
        paragraphs.append(_Paragraph(first_line, text[start:end].strip()))
    return paragraphs


def _looks_like_title(line: str) -> bool:
    """A lone line such as 'NeurIPS 2026 Papers': short, with a year, not a sentence."""
    return (
        len(line) <= TITLE_MAX_CHARS
        and parse_venue_year(line)[1] is not None
        and not line.rstrip().endswith((".", "!", "?"))
    )


def _read_text(shown: str, content: str, collector: _Collector) -> None:
    paragraphs = _split_paragraphs(content)
    if not paragraphs:
        collector.problem(shown, "empty", f"{shown}: empty file, no abstracts found")
        return
    collection: str | None = None
    first = paragraphs[0]
    single_line = "\n" not in first.text and "\r" not in first.text
    if len(paragraphs) == 1 and single_line and _looks_like_title(first.text):
        collector.problem(
            shown,
            "title_only",
            f"{shown}, line {first.line}: only a collection title ({first.text!r}), "
            "no abstracts below it",
            line=first.line,
        )
        return
    if len(paragraphs) > 1 and single_line and len(first.text) <= TITLE_MAX_CHARS:
        collection = first.text
        paragraphs = paragraphs[1:]
    venue, year = parse_venue_year(collection) if collection else (None, None)
    for position, paragraph in enumerate(paragraphs, start=1):
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
        collector.add(paragraph.text, place, where)


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class _Row:
    position: int
    line: int
    values: Mapping[str, Any]


@dataclass(frozen=True)
class _BadRow:
    """A row that cannot be read at all (reported; reading goes on with the next row)."""

    position: int
    line: int
    detail: str


def _lower_keys(values: Mapping[str, Any]) -> dict[str, Any]:
    return {str(key).strip().lower(): value for key, value in values.items()}


def _jsonl_rows(content: str) -> Iterator[_Row | _BadRow]:
    position = 0
    for _, number, chunk in _lines(content):
        if not chunk.strip():
            continue
        position += 1
        try:
            value = json.loads(chunk)
        except json.JSONDecodeError as error:
            detail = f"invalid JSON ({error.msg}, column {error.colno})"
            yield _BadRow(position, number, detail)
            continue
        if not isinstance(value, dict):
            yield _BadRow(
                position, number, f"expected a JSON object, found {type(value).__name__}"
            )
            continue
        yield _Row(position, number, _lower_keys(value))


def _csv_header_and_rows(content: str) -> tuple[list[str], Iterator[_Row | _BadRow]]:
    reader = csv.reader(io.StringIO(content, newline=""))
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
            yield _Row(position, start, dict(zip(header, record, strict=False)))

    return header, rows()


def _parquet_columns_and_rows(path: Path) -> tuple[list[str], Iterator[_Row | _BadRow]]:
    originals = [str(name) for name in pq.read_schema(path).names]
    names = [name.strip().lower() for name in originals]
    wanted = {original: name for original, name in zip(originals, names, strict=True)
              if name in _TABLE_COLUMNS}
    table = pq.read_table(path, columns=list(wanted))
    columns = {wanted[original]: table.column(original).to_pylist() for original in wanted}

    def rows() -> Iterator[_Row | _BadRow]:
        for index in range(table.num_rows):
            values = {name: column[index] for name, column in columns.items()}
            yield _Row(index + 1, index + 1, values)

    return names, rows()


_TABLE_COLUMNS = ("abstract", "id", "title", "venue", "year")


def _optional_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None


def _optional_year(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _read_table(
    shown: str,
    columns: Sequence[str] | None,
    rows: Iterator[_Row | _BadRow],
    collector: _Collector,
) -> None:
    """Shared row handling for JSONL, CSV and Parquet.

    ``columns`` is the header when the format has one; JSONL has none, so a missing
    ``abstract`` key is judged over all of its rows.
    """
    if columns is not None and "abstract" not in columns:
        collector.problem(
            shown,
            "missing_column",
            f"{shown}: no 'abstract' column (columns: {', '.join(columns) or 'none'})",
        )
        return
    pending: list[_Row] = []
    seen_rows = 0
    seen_abstract_key = columns is not None
    for row in rows:
        seen_rows += 1
        if isinstance(row, _BadRow):
            collector.problem(
                shown,
                "bad_row",
                f"{shown}, row {row.position} (line {row.line}): {row.detail}",
                position=row.position,
                line=row.line,
            )
            continue
        seen_abstract_key = seen_abstract_key or "abstract" in row.values
        pending.append(row)
    if seen_rows == 0:
        collector.problem(shown, "empty", f"{shown}: no data rows, no abstracts found")
        return
    if not seen_abstract_key and pending:
        collector.problem(
            shown, "missing_column", f"{shown}: no row has an 'abstract' field"
        )
        return
    for row in pending:
        _add_row(shown, row, collector)


def _add_row(shown: str, row: _Row, collector: _Collector) -> None:
    where = f"{shown}, row {row.position} (line {row.line})"
    abstract = row.values.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        found = "empty" if isinstance(abstract, str) else (
            "missing" if abstract is None else f"a {type(abstract).__name__}, not text"
        )
        collector.problem(
            shown,
            "bad_row",
            f"{where}: abstract is {found}",
            position=row.position,
            line=row.line,
        )
        return
    place = Occurrence(
        file=shown,
        position=row.position,
        line=row.line,
        collection=None,
        venue=_optional_text(row.values.get("venue")),
        year=_optional_year(row.values.get("year")),
        source_id=_optional_text(row.values.get("id")),
        title=_optional_text(row.values.get("title")),
    )
    collector.add(abstract, place, where)


# --------------------------------------------------------------------------- files


def _read_file(path: Path, collector: _Collector) -> None:
    shown = str(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            names, rows = _parquet_columns_and_rows(path)
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
            collector.problem(shown, "unreadable", f"{shown}: cannot read as Parquet: {error}")
            return
        collector.files.append(shown)
        _read_table(shown, names, rows, collector)
        return
    try:
        data = path.read_bytes()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        collector.problem(shown, "unreadable", f"{shown}: cannot be read ({reason})")
        return
    collector.files.append(shown)
    content = _decode(data, shown, collector)
    if content is None:
        return
    if not content.strip():
        collector.problem(shown, "empty", f"{shown}: empty file, no abstracts found")
        return
    if suffix == ".txt":
        _read_text(shown, content, collector)
    elif suffix == ".jsonl":
        _read_table(shown, None, _jsonl_rows(content), collector)
    else:
        try:
            header, rows = _csv_header_and_rows(content)
        except csv.Error as error:
            collector.problem(shown, "unreadable", f"{shown}: cannot read the CSV header ({error})")
            return
        _read_table(shown, header, rows, collector)


def ingest(paths: Sequence[str | Path], max_chars: int = DEFAULT_MAX_CHARS) -> IngestResult:
    """Read every abstract under ``paths`` (files, folders or glob patterns).

    Files are read in the order given (folders and patterns sorted by path), each file at
    most once. Problems are collected, never raised.
    """
    collector = _Collector(max_chars=max_chars)
    seen: set[str] = set()
    for raw in paths:
        for path in _expand(raw, collector):
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            _read_file(path, collector)
    return collector.result()
