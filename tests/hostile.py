"""A seeded generator of hostile input records (hand-written, NOT real data): text, JSONL,
CSV and Parquet files full of values that break naive readers. Every record it writes is
bad on purpose, so none is ever sent to a model: its abstract is missing, not text, not
valid Unicode, or under five words (stored, never sent); its other fields are absurd."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

TRICKY = ["\u202e", "\u200b", "\u0301", "\ufeff", "\x07", "\x1b[31m",
          "\U0001f600", "ﬁ", "İ", "\u0000", "Ⅻ", "²"]


@dataclass
class Written:
    """What was generated: each file and how many records it holds."""

    files: dict[Path, int] = field(default_factory=dict)

    @property
    def records(self) -> int:
        return sum(self.files.values())


def _short_text(rng: random.Random) -> str:
    """Two to four 'words' of tricky characters: a text, but not an abstract."""
    words = []
    for _ in range(rng.randint(2, 4)):
        size = rng.randint(1, 6)
        words.append("".join(rng.choice(TRICKY + list("abcXYZ09-_\"',;")) for _ in range(size)))
    return " ".join(words)


def _absurd(rng: random.Random) -> Any:
    return rng.choice([
        10 ** rng.randint(10, 40), -rng.randint(1, 10 ** 12), 0, 1e308, -1e308, 3.5,
        float("nan"), float("inf"), True, None, "", "²⁰²⁴", "MMXXIV", "2024a", [2024],
        {"y": 2024}, "9" * rng.randint(11, 30), "\ud800", _short_text(rng) * 300,
    ])


def _jsonl_line(rng: random.Random) -> str:
    kind = rng.randrange(12)
    if kind == 0:
        return '{"abstract": "\\ud800 lone high surrogate in the middle of a text", "id": 1}'
    if kind == 1:
        return '{"abstract": "first", "Abstract": "second copy of the same key"}'
    if kind == 2:
        return '{"abstract": ' + "9" * rng.randint(4400, 5000) + "}"
    if kind == 3:
        depth = rng.randint(1000, 3000)
        return '{"abstract": ' + "[" * depth + "]" * depth + "}"
    if kind == 4:
        return "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(1, 60)))
    if kind == 5:
        return json.dumps(rng.choice([[1, 2], "text", 42, None, True]))
    if kind == 6:
        return json.dumps({"abstract": rng.choice([1, 2.5, [], {}, None, True, "", "  "])})
    if kind == 7:
        return '{"abstract": "text with a \\udc80 low surrogate and more words here"}'
    if kind == 8:
        return '{"abstract": NaN, "year": Infinity}'
    record = {"abstract": _short_text(rng), "year": _absurd(rng), "title": _absurd(rng),
              "venue": _absurd(rng), "id": _absurd(rng)}
    text = json.dumps(record, allow_nan=True)
    if kind == 9:  # a surrogate in an optional field
        text = text[:-1] + ', "title": "\\udfff"}' if '"title"' not in text else text
    return text


def write_jsonl(path: Path, rng: random.Random, records: int) -> int:
    lines = [_jsonl_line(rng) for _ in range(records)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return records


def _csv_cell(value: Any) -> str:
    text = str(value).replace("\x00", "")
    return '"' + text.replace('"', '""') + '"'


def write_csv(path: Path, rng: random.Random, records: int) -> int:
    lines = ["id,abstract,year,title,venue"]
    for _ in range(records):
        cells = [_absurd(rng), _short_text(rng), _absurd(rng), _absurd(rng), _absurd(rng)]
        lines.append(",".join(_csv_cell(cell) for cell in cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="backslashreplace")
    return records


def write_duplicate_columns(path: Path) -> int:
    path.write_text("abstract,year,abstract\none two,2024,three four\n", encoding="utf-8")
    return 1


def write_text(path: Path, rng: random.Random, records: int) -> int:
    paragraphs = [_short_text(rng).replace("\x00", "") for _ in range(records)]
    path.write_text("Hostile 2026 collection\n\n" + "\n\n".join(paragraphs) + "\n",
                    encoding="utf-8")
    return records


def write_binary(path: Path, rng: random.Random) -> int:
    path.write_bytes(bytes(rng.randrange(256) for _ in range(4000)))
    return 1  # refused whole: one failure for the file


def _bad_utf8_strings(count: int) -> pa.Array:
    """A string column whose bytes are not UTF-8 (built from buffers, past validation)."""
    data = b"\xff\xfe\xfd" * count
    offsets = pa.array([3 * i for i in range(count + 1)], pa.int32()).buffers()[1]
    return pa.Array.from_buffers(pa.string(), count, [None, offsets, pa.py_buffer(data)])


def write_parquet(folder: Path, rng: random.Random, records: int) -> dict[Path, int]:
    """Several Parquet files, each with a shape of its own."""
    n = records
    shapes: dict[str, dict[str, pa.Array]] = {
        "binary": {"abstract": pa.array([b"two words"] * n, pa.binary())},
        "ints": {"abstract": pa.array(list(range(n)), pa.int64())},
        "lists": {"abstract": pa.array([["a", "b"]] * n, pa.list_(pa.string()))},
        "structs": {"abstract": pa.array([{"t": "x"}] * n)},
        "nulls": {"abstract": pa.array([None] * n, pa.string())},
        "years": {"abstract": pa.array([_short_text(rng).replace("\x00", "")
                                        for _ in range(n)]),
                  "year": pa.array([rng.choice([2 ** 62, -5, 0, 99999]) for _ in range(n)],
                                   pa.int64()),
                  "title": pa.array([rng.choice([None, "t" * 5000, "ok"]) for _ in range(n)]),
                  "venue": pa.array([[1, 2]] * n, pa.list_(pa.int64()))},
        "undecodable": {"abstract": _bad_utf8_strings(n)},
    }
    written = {}
    for name, columns in shapes.items():
        path = folder / f"{name}.parquet"
        pq.write_table(pa.table(columns), path)
        written[path] = n
    return written


def generate(folder: Path, seed: int, per_file: int) -> Written:
    """Hostile files under ``folder``: about ``13 * per_file`` records in all."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    out = Written()
    out.files[folder / "hostile.jsonl"] = write_jsonl(folder / "hostile.jsonl", rng,
                                                      per_file * 3)
    out.files[folder / "hostile.csv"] = write_csv(folder / "hostile.csv", rng, per_file * 2)
    out.files[folder / "hostile.txt"] = write_text(folder / "hostile.txt", rng, per_file)
    out.files[folder / "dupcols.csv"] = write_duplicate_columns(folder / "dupcols.csv")
    out.files[folder / "random.txt"] = write_binary(folder / "random.txt", rng)
    out.files.update(write_parquet(folder, rng, per_file))
    return out
