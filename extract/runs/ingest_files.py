"""Reading input files with Parquet: domain.reading.ingest reads text, JSONL and CSV, and takes
its Parquet rows from here, where pyarrow is imported (the domain imports no pyarrow).
``ingest`` and ``ingest_stream`` are domain.reading.ingest's with this Parquet reader given."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from papersift.extract.domain.reading.ingest import (
    BLOCK_BYTES,
    DEFAULT_CHUNK_PAPERS,
    DEFAULT_MAX_CHARS,
    IngestResult,
    merge_chunks,
)
from papersift.extract.domain.reading.ingest import ingest_stream as _ingest_stream
from papersift.extract.domain.reading.ingest_tables import (
    TABLE_COLUMNS,
    BadTableRow,
    ParquetReadError,
    TableRow,
)
from papersift.extract.domain.reading.records import storable

PARQUET_BATCH_ROWS = 1_024


def parquet_columns_and_rows(path: Path) -> tuple[list[str], Iterator[TableRow | BadTableRow]]:
    """Column names (lower case), then rows read one record batch at a time."""
    parquet = pq.ParquetFile(path)
    originals = [str(name) for name in parquet.schema_arrow.names]
    names = [name.strip().lower() for name in originals]
    wanted = {original: name for original, name in zip(originals, names, strict=True)
              if name in TABLE_COLUMNS}

    def rows() -> Iterator[TableRow | BadTableRow]:
        index = 0
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=list(wanted))
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
                raise ParquetReadError(index, error) from error
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
                yield TableRow(index, index, {name: column[offset]
                                          for name, column in columns.items()})

    return names, rows()


def _parquet_row(row: Any, wanted: Mapping[str, str], index: int) -> TableRow | BadTableRow:
    """One Parquet row (a one-row record batch), or why it cannot be read."""
    values = {}
    for original, name in wanted.items():
        try:
            values[name] = row.column(original).to_pylist()[0]
        except Exception as error:
            return BadTableRow(index, index, f"column {storable(original)!r} cannot be read "
                                         f"({type(error).__name__}: {str(error)[:120]})")
    return TableRow(index, index, values)


def ingest_stream(
    paths: Sequence[str | Path],
    max_chars: int = DEFAULT_MAX_CHARS,
    chunk_papers: int = DEFAULT_CHUNK_PAPERS,
    *,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[IngestResult]:
    """domain.reading.ingest.ingest_stream, Parquet files read by record batch with pyarrow."""
    return _ingest_stream(paths, max_chars, chunk_papers, block_bytes=block_bytes,
                          parquet=parquet_columns_and_rows)


def ingest(paths: Sequence[str | Path], max_chars: int = DEFAULT_MAX_CHARS) -> IngestResult:
    """Read every abstract under ``paths`` at once: the merged ``ingest_stream``."""
    return merge_chunks(ingest_stream(paths, max_chars))
