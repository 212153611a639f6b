"""Reading JSONL, CSV and Parquet rows: each row's abstract and optional id, title, venue
and year, with rows that are broken, merged by a stray quote or missing their abstract
reported where they stand. Parquet rows come from runs.ingest_files (the domain imports
no pyarrow) as TableRow and BadTableRow."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from papersift.extract.domain.reading.ingest_results import Chunker, Occurrence
from papersift.extract.domain.reading.records import (
    LINK_KEYS,
    optional_text,
    optional_year,
    record_extra,
    record_link,
    storable,
)

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


# A row and an unreadable row, as a reader outside this module (Parquet's) yields them.
TableRow = _Row
BadTableRow = _BadRow


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


def jsonl_rows(lines: Iterable[tuple[int, str]]) -> Iterator[_Row | _BadRow]:
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


def _swallowed_a_record(record: list[str]) -> bool:
    """Whether a field's later lines hold a delimiter, as rows a stray quote swallowed do
    ('abc\n1,def'); a quoted field that only holds a quote and a line break does not."""
    return any("," in line for cell in record for line in cell.splitlines()[1:])


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
        if '"' in joined and _swallowed_a_record(record):
            reasons.append(f"a field spans lines {first}-{last} and holds a quote character")
        elif median and size > OUTLIER_FACTOR * median and size >= OUTLIER_MIN_CHARS:
            reasons.append(f"a field spans lines {first}-{last} and is {size:,} characters, "
                           f"{size // median}x the median of the rows before it")
    if not reasons:
        return None
    return ("; ".join(reasons) + f": a stray quote may have merged rows; check line {first}")


def csv_header_and_rows(
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


class ParquetReadError(Exception):
    """A Parquet file whose data could not be read past some row (raised by the Parquet
    reader, runs.ingest_files, while rows are taken; caught by ingest)."""

    def __init__(self, rows_read: int, error: Exception) -> None:
        super().__init__(str(error))
        self.rows_read = rows_read


TABLE_COLUMNS = ("abstract", "id", "title", "venue", "year", *LINK_KEYS)


def read_table(
    shown: str,
    columns: Sequence[str] | None,
    rows: Iterator[_Row | _BadRow],
    chunker: Chunker,
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
    twice = sorted({name for name in columns or () if name in TABLE_COLUMNS
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


def _take_row(shown: str, row: _Row | _BadRow, chunker: Chunker) -> None:
    """One row into the chunker; whatever goes wrong with it is a problem of that row."""
    try:
        _take_row_checked(shown, row, chunker)
    except Exception as error:  # a last line: one record never stops the file
        chunker.problem(shown, "bad_row",
                        f"{shown}, row {row.position} (line {row.line}): cannot be read "
                        f"({type(error).__name__}: {storable(str(error))[:200]})",
                        position=row.position, line=row.line)


def _take_row_checked(shown: str, row: _Row | _BadRow, chunker: Chunker) -> None:
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
        url=record_link(row.values),
        extra=record_extra(row.values, TABLE_COLUMNS),
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
