"""What one input record may hold before it is stored: checks that turn a value the
warehouse cannot keep (a lone surrogate, a year beyond its column, a number too long to
print) into a named problem instead of an error that stops the run."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

YEAR_MIN, YEAR_MAX = 1, 9999
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_ASCII_DIGITS = re.compile(r"[0-9]{1,6}")
MAX_FIELD_CHARS = 2_000  # an id, title or venue longer than this is not one


def surrogate_at(text: str) -> int | None:
    """The index of the first lone UTF-16 surrogate in ``text`` (not valid Unicode text,
    so it cannot be hashed as UTF-8 or stored), or None."""
    match = _SURROGATE.search(text)
    return match.start() if match else None


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as an abstract, or None."""
    at = surrogate_at(text)
    if at is not None:
        code = ord(text[at])
        byte = (f" (what the byte 0x{code - 0xDC00:02X}, which is not UTF-8, reads as: the "
                "record is damaged, the rest of the file is read)"
                if 0xDC80 <= code <= 0xDCFF else "")
        return (f"contains a lone UTF-16 surrogate (\\u{code:04x}) at character {at:,}{byte}: "
                "not valid Unicode text; fix the file's encoding")
    if "\x00" in text:
        return (f"holds a NUL character at character {text.index(chr(0)):,}: the record is "
                "damaged; fix it in the file (the rest of the file is read)")
    return None


def storable(text: str) -> str:
    """``text`` made safe to store: a lone surrogate becomes its ``\\udXXX`` escape (for
    messages and file names, never for an abstract, whose characters must stay exact)."""
    if surrogate_at(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def optional_text(name: str, value: Any) -> tuple[str | None, str | None]:
    """(the field as text, or None; why it was dropped, or None) for an id, title or venue."""
    if value is None:
        return None, None
    if isinstance(value, bool):
        return None, f"{name} is a boolean ({value}), not text; left empty"
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, f"{name} is {value}, not text; left empty"
        if value.is_integer():
            value = int(value)
    if isinstance(value, dict | list | tuple | bytes | bytearray):
        return None, f"{name} is a {type(value).__name__}, not text; left empty"
    try:
        text = str(value).strip()
    except ValueError as error:  # an int too long to print
        return None, f"{name} cannot be read as text ({error}); left empty"
    if not text:
        return None, None
    if surrogate_at(text) is not None:
        return None, f"{name} contains a lone UTF-16 surrogate, not valid text; left empty"
    if len(text) > MAX_FIELD_CHARS:
        return None, (f"{name} is {len(text):,} characters long, over {MAX_FIELD_CHARS:,}; "
                      "left empty")
    return text, None


def optional_year(value: Any) -> tuple[int | None, str | None]:
    """(the year, or None; why a given year was dropped, or None)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    year: int | None = None
    if isinstance(value, bool):
        year = None
    elif isinstance(value, int):
        year = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        year = int(value)
    elif isinstance(value, str) and _ASCII_DIGITS.fullmatch(value.strip()):
        year = int(value.strip())
    if year is None:
        return None, f"year {_show(value)} is not a whole number; left empty"
    if not YEAR_MIN <= year <= YEAR_MAX:
        return None, f"year {_show(year)} is outside {YEAR_MIN}..{YEAR_MAX}; left empty"
    return year, None


def _show(value: Any, limit: int = 40) -> str:
    try:
        shown = repr(value)
    except ValueError:
        shown = f"<{type(value).__name__} too long to print>"
    shown = storable(shown)
    return shown if len(shown) <= limit else shown[:limit] + "…"


# Keys a record may give its link under, most specific first.
LINK_KEYS = ("url", "openreview_url", "paper_url", "pdf_url", "html_url", "link", "pdf", "doi")
MAX_EXTRA_CHARS = 4_000  # the record's other fields, as JSON, are kept up to this size


def record_link(values: Mapping[str, Any]) -> str | None:
    """The record's link to its paper: the first link key with a plain-text value."""
    for key in LINK_KEYS:
        text, _ = optional_text(key, values.get(key))
        if text:
            return text
    return None


def record_extra(values: Mapping[str, Any], known: tuple[str, ...]) -> str | None:
    """The record's other fields (a conference file's primary_area, keywords, status...)
    as a JSON object: text, numbers, booleans and lists of them, each kept while the
    whole stays under MAX_EXTRA_CHARS; None when there are none."""
    kept: dict[str, Any] = {}
    size = 2
    for key, value in values.items():
        if key in known or not _plain(value):
            continue
        piece = json.dumps({key: value}, ensure_ascii=False)
        if size + len(piece) > MAX_EXTRA_CHARS or surrogate_at(piece) is not None:
            continue
        kept[key] = value
        size += len(piece)
    return json.dumps(kept, ensure_ascii=False) if kept else None


def _plain(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str | int | bool):
        return True
    return isinstance(value, list) and all(isinstance(v, str | int | bool) for v in value)
