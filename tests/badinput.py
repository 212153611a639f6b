"""The generated half of the bad-input corpus (tests/data/bad/ holds the small, committed
half; its README lists both). Generated because they are large or their bytes are easy to
mangle in a checkout: a 2 MB single paragraph, 2,500 tiny paragraphs, a UTF-16 file with
a byte-order mark, a CRLF file. The tiny paragraphs span many stream chunks when a test
makes the chunks small (``tiny_chunk``); the 100,000-paragraph run that measures their cost
at scale is ``python -m bench.bad_input_scale``."""

from __future__ import annotations

from pathlib import Path

COMMITTED = Path(__file__).resolve().parent / "data" / "bad"
TINY_PARAGRAPHS = 2_500
# Papers per stream chunk that makes the tiny paragraphs cross a chunk boundary 12 times
# (at the default 2,000 they would need 24,000 paragraphs to do that).
TINY_CHUNK = 200
HUGE_CHARS = 2_000_000
# Short but real-looking abstracts for the two files that must be accepted.
UTF16_ABSTRACT = ("We read corpora saved as UTF-16 with a byte-order mark, and the "
                  "quotes of their abstracts still align: naïve café résumé.")
CRLF_ABSTRACT = ("Windows line endings keep\r\nevery offset valid because the stored text is "
                 "the file's own slice.")


def write_generated(folder: Path) -> dict[str, Path]:
    """Write the generated bad inputs into ``folder``; returns them by name."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "huge_paragraph": folder / "huge_paragraph.txt",
        "tiny_paragraphs": folder / "tiny_paragraphs.txt",
        "utf16_bom": folder / "utf16_bom.txt",
        "crlf": folder / "crlf.txt",
    }
    huge = ("token " * (HUGE_CHARS // 6 + 1))[: HUGE_CHARS - 1] + "s"  # one 2 MB line
    files["huge_paragraph"].write_text(huge + "\n", encoding="utf-8")
    tiny = ["Tiny 2026 Papers", *(f"p{index}" for index in range(TINY_PARAGRAPHS))]
    files["tiny_paragraphs"].write_text("\n\n".join(tiny) + "\n", encoding="utf-8")
    files["utf16_bom"].write_bytes(f"ACL 2026 Papers\n\n{UTF16_ABSTRACT}\n".encode("utf-16"))
    files["crlf"].write_bytes(f"ICML 2026 Papers\r\n\r\n{CRLF_ABSTRACT}\r\n".encode())
    return files
