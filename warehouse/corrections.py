"""Reviewers' corrections: append-only rows in ``corrections`` that the item views apply.

Items of user fields are corrected too: their type is ``custom-NAME``, their one
editable field ``value`` (view corrected_custom, migration 0013).

An item is named by (paper, type, key); the key comes from the item's content (see
migration 0006), so a correction outlives the run that produced its item. Every write
checks the item's review version (optimistic concurrency): a save based on an older
version is refused with the item as it is now, and nothing is written.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from papersift.schemas.fields import correctable_fields, custom_item_field
from papersift.schemas.numbers import numbers_in, value_matches
from papersift.warehouse.cells import sheet_safe
from papersift.warehouse.db import WarehouseError, transaction
from papersift.warehouse.rowdicts import first_row, query_dicts
from papersift.warehouse.store import WRITE_LOCK

# The correctable built-in fields by item type, and what a reviewer may change on each
# (with the type each value must have), from the registry (FieldSpec.editable).
_CORRECTABLE = {spec.item: spec for spec in correctable_fields()}
_PYTHON_TYPES: dict[str, type] = {"VARCHAR": str, "DOUBLE": float, "BOOLEAN": bool}
ITEM_TYPES = tuple(_CORRECTABLE)
VIEWS = {kind: spec.view for kind, spec in _CORRECTABLE.items()}
EDITABLE: dict[str, dict[str, type]] = {
    kind: {column: _PYTHON_TYPES[spec.column(column).sql] for column in spec.editable}
    for kind, spec in _CORRECTABLE.items()}
REQUIRED = {kind: spec.label for kind, spec in _CORRECTABLE.items()}
STATUS_ACTIONS = ("accept", "reject", "restore")
CUSTOM_EDITABLE: dict[str, type] = {"value": str}  # a user field's item


def relation(item_type: str) -> str:
    """Where the corrected items of a type are read: a built-in item view, or a user
    field's items of corrected_custom."""
    if item_type in VIEWS:
        return VIEWS[item_type]
    field = custom_item_field(item_type)
    if field is None:
        raise CorrectionError(f"unknown item type {item_type!r}; one of {list(ITEM_TYPES)} "
                              "or custom-NAME")
    return f"(SELECT * FROM corrected_custom WHERE field = '{field}')"


def editable(item_type: str) -> dict[str, type]:
    """The fields a reviewer may change on an item of this type, with their types."""
    relation(item_type)  # refuses an unknown type
    return EDITABLE.get(item_type, CUSTOM_EDITABLE)


def required(item_type: str) -> str:
    return REQUIRED.get(item_type, "value")
MAX_TEXT = 500  # characters of any one edited value or note


class CorrectionError(WarehouseError):
    """A correction that cannot be stored as asked (nothing was written)."""

    status = 400


class UnknownItemError(CorrectionError):
    status = 404


class VersionConflictError(CorrectionError):
    """The item changed since the reviewer loaded it."""

    status = 409

    def __init__(self, message: str, current: dict[str, Any]) -> None:
        super().__init__(message)
        self.current = current


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)




# ----------------------------------------------------------------------------- reading


def item_rows(con: duckdb.DuckDBPyConnection, item_type: str,
              paper_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The corrected items of one type (rejected ones left out), each with ``item_type``."""
    where = "" if paper_ids is None else "WHERE list_contains($ids, paper_id)"
    params = {} if paper_ids is None else {"ids": list(paper_ids)}
    found = query_dicts(con, f"SELECT * FROM {relation(item_type)} {where} ORDER BY paper_id, idx",
                  params)
    for row in found:
        row["item_type"] = item_type
    return found


def versions(con: duckdb.DuckDBPyConnection,
             paper_ids: Sequence[str]) -> dict[tuple[str, str, str], int]:
    """The review version of every corrected item of these papers (absent: 0)."""
    rows = con.execute(
        "SELECT paper_id, item_type, item_key, max(version) FROM corrections "
        "WHERE list_contains(?, paper_id) GROUP BY ALL", [list(paper_ids)]).fetchall()
    return {(row[0], row[1], row[2]): int(row[3]) for row in rows}


def rejected_items(con: duckdb.DuckDBPyConnection,
                   paper_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Items a reviewer rejected (so the page can offer to restore them)."""
    return query_dicts(con, """
        SELECT s.paper_id, s.item_type, s.item_key, s.version, s.reviewer, s.note,
               coalesce(m.label, json_extract_string(a.item, '$.name'),
                        json_extract_string(a.item, '$.metric'), s.item_key) AS label
        FROM correction_status s
        LEFT JOIN model_items m USING (paper_id, item_type, item_key)
        LEFT JOIN added_items a USING (paper_id, item_type, item_key)
        WHERE s.status = 'reject' AND list_contains(?, s.paper_id)
        ORDER BY s.created""", [list(paper_ids)])


def conflicts(con: duckdb.DuckDBPyConnection,
              paper_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Corrections whose item the latest extraction no longer contains."""
    where = "" if paper_ids is None else "WHERE list_contains($ids, paper_id)"
    params = {} if paper_ids is None else {"ids": list(paper_ids)}
    return query_dicts(con, f"SELECT * FROM correction_conflicts {where} ORDER BY created", params)


def list_corrections(con: duckdb.DuckDBPyConnection, paper_id: str | None = None,
                     limit: int = 1000, offset: int = 0) -> list[dict[str, Any]]:
    """Stored corrections, oldest first, each saying whether it is in conflict now."""
    where = "" if paper_id is None else "WHERE c.paper_id = $paper"
    params: dict[str, Any] = {"limit": limit, "offset": offset}
    if paper_id is not None:
        params["paper"] = paper_id
    return query_dicts(con, f"""
        SELECT c.*, c.correction_id IN (SELECT correction_id FROM correction_conflicts)
               AS conflict
        FROM corrections c {where}
        ORDER BY c.created, c.correction_id LIMIT $limit OFFSET $offset""", params)


def current_item(con: duckdb.DuckDBPyConnection, paper_id: str, item_type: str,
                 item_key: str) -> dict[str, Any] | None:
    """The item as the views show it now (None when rejected or unknown), with its version."""
    rows = query_dicts(con, f"SELECT * FROM {relation(item_type)} WHERE paper_id = ? AND "
                       "item_key = ? ORDER BY idx LIMIT 1", [paper_id, item_key])
    if not rows:
        return None
    row = rows[0]
    row["item_type"] = item_type
    row["version"] = item_version(con, paper_id, item_type, item_key)
    return row


def item_version(con: duckdb.DuckDBPyConnection, paper_id: str, item_type: str,
                 item_key: str) -> int:
    row = first_row(con, "SELECT max(version) FROM corrections WHERE paper_id = ? AND "
                      "item_type = ? AND item_key = ?", [paper_id, item_type, item_key]
                      )
    return int(row[0]) if row and row[0] is not None else 0


def _known(con: duckdb.DuckDBPyConnection, paper_id: str, item_type: str,
           item_key: str) -> bool:
    """The item exists (in the latest extraction, added, or already corrected)."""
    row = first_row(con, """
        SELECT EXISTS (SELECT 1 FROM model_items WHERE paper_id = $p AND item_type = $t
                       AND item_key = $k)
            OR EXISTS (SELECT 1 FROM corrections WHERE paper_id = $p AND item_type = $t
                       AND item_key = $k)""",
                      {"p": paper_id, "t": item_type, "k": item_key})
    return bool(row and row[0])


# ----------------------------------------------------------------------------- writing


# Grounds a reviewer's changed values in the abstract: (item type, the item as shown now,
# the changed fields, the abstract) -> grounding fields to store with them (alignment,
# offsets, evidence; stored as one 'grounding' edit, see migration 0011). Given by the
# caller: the warehouse does not ground (extract/domain/review/corrected.py does).
Grounder = Callable[[str, Mapping[str, Any], Mapping[str, Any], str], Mapping[str, Any]]


@dataclass(frozen=True)
class Review:
    """Who reviews, and the version of the item they saw."""

    reviewer: str | None
    version: int
    note: str | None = None


@contextmanager
def _transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One write transaction, then a CHECKPOINT (as every warehouse write), under the
    process's write lock so it never overlaps a run's batch write and its checkpoint.
    Callers take the lock before their first read (``with WRITE_LOCK``), so no result
    of theirs is open while they wait for it."""
    with WRITE_LOCK:
        with transaction(con):
            yield
        # a run's own statement may be open: then its batch's CHECKPOINT covers this one
        with contextlib.suppress(duckdb.TransactionException):
            con.execute("CHECKPOINT")



def _paper_text(con: duckdb.DuckDBPyConnection, paper_id: str) -> str:
    row = first_row(con, "SELECT text FROM papers WHERE paper_id = ?", [paper_id])
    if row is None:
        raise UnknownItemError(f"no paper {paper_id!r} in the warehouse")
    return str(row[0])


def _latest_extraction(con: duckdb.DuckDBPyConnection, paper_id: str) -> str | None:
    row = first_row(con, "SELECT extraction_id FROM latest_extractions WHERE paper_id = ?",
                      [paper_id])
    return str(row[0]) if row else None


def _insert(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    for row in rows:
        con.execute(
            "INSERT INTO corrections (correction_id, created, paper_id, item_type, item_key, "
            "version, action, field, before, after, reviewer, note, extraction_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [row["correction_id"], row["created"], row["paper_id"], row["item_type"],
             row["item_key"], row["version"], row["action"], row.get("field"),
             row.get("before"), row.get("after"), row.get("reviewer"), row.get("note"),
             row.get("extraction_id")])


def _text(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise CorrectionError(f"{what} must be text, got {type(value).__name__}")
    value = value.strip()
    if len(value) > MAX_TEXT:
        raise CorrectionError(f"{what} is longer than {MAX_TEXT} characters")
    return value or None


def checked_value(item_type: str, field: str, value: Any) -> Any:
    """The edited value in its field's type, or CorrectionError naming what is wrong."""
    allowed = editable(item_type)
    kind = allowed.get(field)
    if kind is None:
        raise CorrectionError(f"a {item_type}'s {field!r} cannot be edited; editable: "
                              f"{', '.join(allowed)}")
    if value is None or value == "":
        if field == required(item_type):
            raise CorrectionError(f"a {item_type} needs a {field}")
        return None
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise CorrectionError(f"{field} must be a number")
        try:
            number = float(str(value).replace(",", "").strip())
        except ValueError as error:
            raise CorrectionError(f"{field} must be a number, got {value!r}") from error
        if not math.isfinite(number):
            raise CorrectionError(f"{field} must be a finite number")
        return number
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "on", "off"):
            return value.lower() in ("true", "on")
        raise CorrectionError(f"{field} must be true or false")
    return _text(value, field)


def _base(paper_id: str, item_type: str, item_key: str, version: int, action: str,
          review: Review, extraction_id: str | None) -> dict[str, Any]:
    return {"correction_id": uuid.uuid4().hex, "created": _now(), "paper_id": paper_id,
            "item_type": item_type, "item_key": item_key, "version": version,
            "action": action, "reviewer": _text(review.reviewer, "reviewer"),
            "note": _text(review.note, "note"), "extraction_id": extraction_id}


def _check_version(con: duckdb.DuckDBPyConnection, paper_id: str, item_type: str,
                   item_key: str, review: Review) -> int:
    now = item_version(con, paper_id, item_type, item_key)
    if review.version != now:
        shown = None if item_type == "paper" else current_item(con, paper_id, item_type,
                                                                item_key)
        current = shown or {"paper_id": paper_id, "item_type": item_type,
                            "item_key": item_key, "version": now,
                            "review": "reviewed" if item_type == "paper" else "reject"}
        raise VersionConflictError(
            f"this {item_type} was changed by someone else (version {now}, you saw "
            f"{review.version}); reload it and apply your change again", current)
    return now + 1


def set_status(con: duckdb.DuckDBPyConnection, paper_id: str, item_type: str, item_key: str,
               action: str, review: Review) -> dict[str, Any]:
    """Accept, reject (the note is the reason) or restore an item."""
    if action not in STATUS_ACTIONS:
        raise CorrectionError(f"unknown action {action!r}; one of {list(STATUS_ACTIONS)}")
    relation(item_type)
    with WRITE_LOCK:  # version check and insert as one step, before any read
        _paper_text(con, paper_id)
        if not _known(con, paper_id, item_type, item_key):
            raise UnknownItemError(f"paper {paper_id} has no {item_type} {item_key!r}")
        version = _check_version(con, paper_id, item_type, item_key, review)
        row = _base(paper_id, item_type, item_key, version, action, review,
                    _latest_extraction(con, paper_id))
        with _transaction(con):
            _insert(con, [row])
    return row


def _grounded(ground: Grounder | None, item_type: str, item: Mapping[str, Any],
              changes: Mapping[str, Any], text: str, always: bool = False) -> dict[str, Any]:
    """What ``ground`` finds for changed values; a value it refuses (a choice the field
    does not have) is a CorrectionError, and nothing is written."""
    if ground is None or not (changes or always):
        return {}
    try:
        return dict(ground(item_type, item, changes, text))
    except ValueError as error:
        raise CorrectionError(str(error)) from None


def _as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def edit_item(con: duckdb.DuckDBPyConnection, paper_id: str, item_type: str, item_key: str,
              changes: Mapping[str, Any], review: Review,
              ground: Grounder | None = None) -> list[dict[str, Any]]:
    """Change fields of an item; one row per field that really changes, and one per
    grounding field ``ground`` gives for them (see Grounder)."""
    if not changes:
        raise CorrectionError("an edit needs at least one field to change")
    checked = {field: checked_value(item_type, field, value) for field, value in
               changes.items()}
    with WRITE_LOCK:
        text = _paper_text(con, paper_id)
        current = current_item(con, paper_id, item_type, item_key)
        if current is None:
            if _known(con, paper_id, item_type, item_key):
                raise CorrectionError(f"this {item_type} is rejected; restore it first")
            raise UnknownItemError(f"paper {paper_id} has no {item_type} {item_key!r}")
        version = _check_version(con, paper_id, item_type, item_key, review)
        extraction_id = _latest_extraction(con, paper_id)
        rows = []
        for field, after in checked.items():
            before = current.get(field)
            if before == after:
                continue
            row = _base(paper_id, item_type, item_key, version, "edit", review, extraction_id)
            row.update(field=field, before=_as_json(before), after=_as_json(after))
            rows.append(row)
        changed = {row["field"]: checked[row["field"]] for row in rows}
        found = _grounded(ground, item_type, current, changed, text) if changed else {}
        if found:  # one row: the latest grounding of an item replaces the earlier whole
            row = _base(paper_id, item_type, item_key, version, "edit", review, extraction_id)
            row.update(field="grounding", after=_as_json(found),
                       before=_as_json({key: current.get(key) for key in found}))
            rows.append(row)
        if item_type == "gain" and checked.get("value") is not None and rows:
            # grounded or flagged: is the corrected number in the item's own sentence?
            evidence = current.get("evidence") or ""
            if current.get("char_start") is not None and current.get("char_end") is not None:
                evidence = text[current["char_start"]:current["char_end"]]
            row = _base(paper_id, item_type, item_key, version, "edit", review, extraction_id)
            row.update(field="value_in_evidence",
                       before=_as_json(current.get("value_in_evidence")),
                       after=_as_json(value_matches(checked["value"], numbers_in(evidence))))
            rows.append(row)
        if not rows:
            raise CorrectionError("nothing changes: the values are the ones stored")
        with _transaction(con):
            _insert(con, rows)
    return rows


@dataclass(frozen=True)
class Mention:
    """A span of the abstract a reviewer selected, and the sentence around it."""

    start: int
    end: int
    selected: str
    sentence: tuple[int, int]


def add_item(con: duckdb.DuckDBPyConnection, paper_id: str, item_type: str,
             mention: Mention, fields: Mapping[str, Any], review: Review,
             ground: Grounder | None = None) -> dict[str, Any]:
    """Add an item the model missed; its mention must slice back to the selected text. A
    name other than the selection, and a gain's phrases, are grounded by ``ground``."""
    editable(item_type)
    text = _paper_text(con, paper_id)
    if not (0 <= mention.start < mention.end <= len(text)):
        raise CorrectionError(f"offsets {mention.start}..{mention.end} are outside the "
                              f"abstract (0..{len(text)})")
    if text[mention.start:mention.end] != mention.selected:
        raise CorrectionError(
            f"offsets {mention.start}..{mention.end} give "
            f"{text[mention.start:mention.end][:80]!r}, not the selected "
            f"{mention.selected[:80]!r}")
    low, high = mention.sentence
    if not (0 <= low <= mention.start and mention.end <= high <= len(text)):
        raise CorrectionError("the evidence sentence does not hold the selection")
    item: dict[str, Any] = {field: checked_value(item_type, field, value)
                            for field, value in fields.items()}
    needed = required(item_type)
    if item.get(needed) is None:
        if item_type == "gain":
            raise CorrectionError("a gain needs a metric")
        item[needed] = mention.selected.strip()
    evidence = text[low:high]
    if item_type == "gain":
        if item.get("value") is None:
            numbers = numbers_in(mention.selected)
            item["value"] = numbers[0] if numbers else None
        item["value_in_evidence"] = (None if item.get("value") is None
                                     else value_matches(item["value"], numbers_in(evidence)))
    item.update(evidence=evidence, char_start=low, char_end=high,
                mention_start=mention.start, mention_end=mention.end)
    given = {field: item[field] for field in fields if item.get(field) is not None}
    if item.get(needed) == mention.selected.strip() and needed != "metric":
        given.pop(needed, None)  # the selection itself: its offsets are exact
    item.update(_grounded(ground, item_type, item, given, text, always=needed == "value"))
    key = "added:" + uuid.uuid4().hex[:16]
    row = _base(paper_id, item_type, key, 1, "add", review, None)
    with WRITE_LOCK:
        row["extraction_id"] = _latest_extraction(con, paper_id)
        row["after"] = _as_json(item)
        with _transaction(con):
            _insert(con, [row])
    return row


def mark_reviewed(con: duckdb.DuckDBPyConnection, paper_id: str,
                  review: Review) -> dict[str, Any]:
    """Say a paper has been reviewed as a whole (its remaining items are right)."""
    with WRITE_LOCK:
        _paper_text(con, paper_id)
        version = _check_version(con, paper_id, "paper", "", review)
        row = _base(paper_id, "paper", "", version, "reviewed", review,
                    _latest_extraction(con, paper_id))
        with _transaction(con):
            _insert(con, [row])
    return row


# ----------------------------------------------------------------------------- out


def reviewed_papers(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Papers with at least one correction or a reviewed mark."""
    return [row[0] for row in con.execute(
        "SELECT DISTINCT paper_id FROM corrections ORDER BY 1").fetchall()]


EXPORT_COLUMNS = ("correction_id", "created", "paper_id", "item_type", "item_key", "version",
                  "action", "field", "before", "after", "reviewer", "note", "extraction_id",
                  "conflict")


def export_corrections(con: duckdb.DuckDBPyConnection, fmt: str) -> str:
    """Every correction as CSV or JSON lines, with whether it is in conflict now."""
    rows = list_corrections(con, limit=2**31 - 1)
    if fmt == "jsonl":
        return "".join(json.dumps({c: _plain(row[c]) for c in EXPORT_COLUMNS},
                                  ensure_ascii=False) + "\n" for row in rows)
    if fmt != "csv":
        raise CorrectionError(f"unknown format {fmt!r}; csv or jsonl")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(EXPORT_COLUMNS)
    writer.writerows([sheet_safe(_plain(row[c])) for c in EXPORT_COLUMNS] for row in rows)
    return buffer.getvalue()


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value
