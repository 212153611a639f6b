"""How a query result reads in a terminal: a table when its columns fit the width, else
one block per record (like psql's expanded view). Cells are clipped to one line with an
ellipsis; ``--format csv`` or ``json`` keeps every value whole."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from rich.cells import cell_len, set_cell_size

# The fewest characters a table column may get and stay readable; a result whose
# columns cannot all have that much (or their whole width, when narrower) is shown as
# records instead.
MIN_CELL = 8
_RULE = 3  # "│" and a space either side, between two columns
SAMPLE_ROWS = 500  # rows looked at to size the columns


def cell_text(value: Any) -> str:
    """A value on one line ('' for NULL)."""
    return "" if value is None else " ".join(str(value).split())


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal cells, an ellipsis marking the cut."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(width - 1, 0)) + "…"


def natural_widths(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[int]:
    """Each column's width unclipped: its name or its longest value (of the first rows)."""
    widths = [cell_len(column) for column in columns]
    for row in rows[:SAMPLE_ROWS]:
        for index, value in enumerate(row):
            widths[index] = max(widths[index], cell_len(cell_text(value)))
    return widths


def _label_room(columns: Sequence[str], width: int) -> tuple[int, int]:
    """The record view's name column and the room left for values."""
    label = min(max((cell_len(c) for c in columns), default=1), max(width // 3, 8))
    return label, max(width - label - 3, 10)


def layout(columns: Sequence[str], rows: Sequence[Sequence[Any]],
           width: int) -> tuple[str, bool]:
    """("table" or "records", whether some value will be clipped). A table when every
    column can have at least MIN_CELL cells (or its whole width, when narrower)."""
    natural = natural_widths(columns, rows)
    rules = _RULE * len(columns) + 1
    if sum(min(w, MIN_CELL) for w in natural) + rules <= width:
        return "table", sum(natural) + rules > width
    _, room = _label_room(columns, width)
    return "records", any(w > room for w in natural)


def column_widths(natural: Sequence[int], width: int) -> list[int]:
    """Table column widths within ``width``: narrow columns keep theirs, the widest share
    what is left evenly (one cap for all, the largest that fits)."""
    room = max(width - _RULE * len(natural) - 1, 0)
    if sum(natural) <= room:
        return list(natural)
    cap = max(natural)
    while cap > MIN_CELL and sum(min(w, cap) for w in natural) > room:
        cap -= 1
    return [min(w, cap) for w in natural]


def records(columns: Sequence[str], rows: Sequence[Sequence[Any]],
            width: int) -> Iterator[str]:
    """The lines of the record view: a header line per record, then `name | value`."""
    label, room = _label_room(columns, width)
    for number, row in enumerate(rows, start=1):
        head = f"-[ record {number} ]"
        yield head + "-" * max(width - cell_len(head), 0)
        for column, value in zip(columns, row, strict=True):
            name = clip(column, label)
            yield f"{name}{' ' * (label - cell_len(name))} | {clip(cell_text(value), room)}"
