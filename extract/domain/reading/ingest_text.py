"""Reading text files: the bytes checked and decoded block by block, split into numbered
lines, and a .txt file's blank-line-separated paragraphs taken as abstracts."""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from papersift.extract.domain.reading.ingest_results import Chunker, Occurrence, parse_venue_year

TITLE_MAX_CHARS = 200
DEFAULT_MAX_CHARS = 12_000  # longer abstracts are recorded as failures, not sent

_BOM = "\ufeff"
_TERMINATED_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")
_TERMINATOR = re.compile(r"(?:\r\n|\r|\n)$")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


# --------------------------------------------------------------------------- decoding
#
# A text file is read twice, block by block: once to check that all of it decodes (a bad
# byte anywhere refuses the whole file, as it did when files were read whole), then to
# parse it. Only one block and the line being assembled are held at a time.


Blocks = Callable[[], Iterator[bytes]]


def blocks_of(path: Path, block_bytes: int) -> tuple[bytes, Blocks]:
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


def codec_for(head: bytes) -> str:
    """The codec a file's first four bytes call for: a UTF-16/32 byte-order mark names its
    encoding; anything else is read as UTF-8."""
    if head.startswith(_UTF32_BOMS):
        return "utf-32"
    if head.startswith(_UTF16_BOMS):
        return "utf-16"
    return "utf-8"


# A NUL in the first bytes (a PNG, a zip), or damage on more lines than this, refuses the
# whole file; else each line that holds one is refused with its record, and the rest of
# the file is read.
BINARY_HEAD_BYTES = 64
MAX_DAMAGED_LINES = 3
_DAMAGE = re.compile("[\x00\udc80-\udcff]")
# A decoded non-ASCII character that is not an undecodable byte: the file is UTF-8.
_MULTIBYTE = re.compile("[\x80-\udc7f\udd00-\U0010ffff]")


def check_utf8(blocks: Blocks, shown: str, chunker: Chunker) -> bool:
    """Whether the file can be read as UTF-8 with some non-blank text; reports why not.

    The whole file is refused when it looks binary (a NUL byte in its first 64 bytes, or
    on more than MAX_DAMAGED_LINES lines) or is in another encoding (bytes that are not
    UTF-8 and no multi-byte UTF-8 character anywhere, as in a Latin-1 file). A UTF-8 file
    with a few damaged lines is read: each record holding a NUL or a byte that is not
    UTF-8 is refused on its own, naming its line (records.text_problem)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    offset = newlines = 0  # bytes, and b"\n" among them, before the current block
    nul: tuple[int, int] | None = None  # byte offset and line of the first NUL
    invalid: tuple[int, int, int] | None = None  # byte offset, line, byte value
    damaged: set[int] = set()  # lines with a NUL or an undecodable byte
    multibyte = False  # a valid non-ASCII character: the file is UTF-8 after all
    has_text = False
    started = False  # a leading BOM is dropped from the first decoded character
    for block in itertools.chain(blocks(), [b""]):
        at_nul = block.find(b"\x00")
        if at_nul >= 0 and nul is None:
            nul = (offset + at_nul, newlines + block.count(b"\n", 0, at_nul) + 1)
        start = offset - len(decoder.getstate()[0])  # bytes held back start this text
        text = decoder.decode(block, final=not block)
        if text and not started:
            started = True
            if text.startswith(_BOM):
                text, start = text[1:], start + len(_BOM.encode())
        for found in _DAMAGE.finditer(text):
            # a held-back partial character is never a newline: lines count from here
            line = newlines + text.count("\n", 0, found.start()) + 1
            damaged.add(line)
            if found.group() != "\x00" and invalid is None:
                before = text[:found.start()].encode("utf-8", "surrogateescape")
                invalid = (start + len(before), line, ord(found.group()) - 0xDC00)
        multibyte = multibyte or _MULTIBYTE.search(text) is not None
        has_text = has_text or bool(text.strip())
        offset += len(block)
        newlines += block.count(b"\n")
    if nul is not None and (nul[0] < BINARY_HEAD_BYTES or len(damaged) > MAX_DAMAGED_LINES):
        chunker.problem(shown, "binary", f"{shown}: binary data, not text (a NUL byte at "
                        f"byte offset {nul[0]:,}, line {nul[1]})", line=nul[1])
        return False
    if invalid is not None and (not multibyte or len(damaged) > MAX_DAMAGED_LINES):
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


def check_wide(blocks: Blocks, shown: str, chunker: Chunker, codec: str, head: bytes) -> bool:
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


def _has_text(has_text: bool, shown: str, chunker: Chunker) -> bool:
    if not has_text:
        chunker.problem(shown, "empty", f"{shown}: empty file, no abstracts found")
    return has_text


def decoded(blocks: Blocks, codec: str) -> Iterator[str]:
    """The file's text, piece by piece (a checked file: decoding errors are not expected)."""
    # A checked UTF-8 file may hold a few damaged lines: their bytes become lone
    # surrogates, which refuse the records that hold them (records.text_problem).
    decoder = codecs.getincrementaldecoder(codec)(
        errors="surrogateescape" if codec == "utf-8" else "strict")
    started = codec != "utf-8"  # UTF-16/32 decoders drop their byte-order mark themselves
    for block in itertools.chain(blocks(), [b""]):
        text = decoder.decode(block, final=not block)
        if text and not started:
            text, started = text.removeprefix(_BOM), True
        if text:
            yield text


def numbered_lines(pieces: Iterable[str]) -> Iterator[tuple[int, str]]:
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


def read_text(shown: str, pieces: Iterable[str], chunker: Chunker) -> Iterator[None]:
    paragraphs = _paragraphs(numbered_lines(pieces))
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
