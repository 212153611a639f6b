"""Cut an abstract into flat segments for display: markup styles, hidden markup delimiters
and highlighted evidence spans, all on the stored text's own character offsets.

The stored text is never changed. LaTeX and markdown markup is *styled*, not rewritten:
the delimiters (``\\textbf{`` and ``}``, ``**``, ``$``, the backslash of ``\\%``) stay in the
page as hidden segments, so the page's text is the stored text character for character and
every offset stays right. What is recognised, only when well formed:

- ``\\textbf{}`` bold; ``\\emph{}``, ``\\textit{}`` italic; ``\\textsc{}`` small caps;
  ``\\texttt{}`` monospace; ``\\underline{}`` (nested braces allowed);
- ``**bold**``, ``*italic*``, ``_italic_`` (markdown, outside math);
- ``$math$``: the content is shown as written (no TeX layout) in a math style;
- ``\\%``, ``\\&``, ``\\_``, ``\\#``, ``\\$``: the backslash is hidden.

Anything else (``\\cite{}``, ``\\mathrm{}``, `` ``quotes'' ``) is shown raw. Segments never
nest, so overlapping evidence spans cannot produce broken HTML.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

STYLE_COMMANDS = {
    "textbf": "bold",
    "emph": "italic",
    "textit": "italic",
    "textsc": "smallcaps",
    "texttt": "mono",
    "underline": "underline",
}
_COMMAND = re.compile(r"\\(" + "|".join(STYLE_COMMANDS) + r")\{")
_MATH = re.compile(r"(?<!\\)\$(?!\$)(?=\S)([^$\n]*?[^\s\\])\$")
_ESCAPED = re.compile(r"\\(?=[%&_#$])")
_BOLD = re.compile(r"(?<![*\\])\*\*(?=[^\s*])([^\n]*?[^\s*\\])\*\*(?!\*)")
_STAR_ITALIC = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]*?[^\s*\\])\*(?![\w*])")
_UNDERSCORE_ITALIC = re.compile(r"(?<![\w\\])_(?=[^\s_])([^_\n]*?[^\s_\\])_(?!\w)")


@dataclass(frozen=True)
class Markup:
    """Where the markup is: character ranges to hide and ranges to style."""

    hidden: tuple[tuple[int, int], ...]
    styles: tuple[tuple[int, int, str], ...]


@dataclass(frozen=True)
class Span:
    """An evidence span to highlight: [start, end) of one item of one field."""

    start: int
    end: int
    field: str
    key: str
    mark: str = ""  # "" or a flag shown on the span, e.g. "fuzzy", "unverified"
    label: str = ""  # what the item says, for the reader


@dataclass(frozen=True)
class Segment:
    """A run of characters that share one display: hidden or not, styles, spans."""

    start: int
    end: int
    text: str
    hidden: bool
    styles: frozenset[str]
    spans: tuple[Span, ...]

    @property
    def primary(self) -> Span | None:
        """The most specific (shortest) span covering this segment."""
        if not self.spans:
            return None
        return min(self.spans, key=lambda span: (span.end - span.start, span.key))


def _closing_brace(text: str, opened: int) -> int | None:
    """Index of the ``}`` matching the ``{`` just before ``opened``, or None."""
    depth = 1
    index = opened
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "\n" and text[index - 1:index + 1] == "\n\n":
            return None
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _blank(text: str, ranges: list[tuple[int, int]]) -> str:
    """The text with the given ranges replaced by spaces (same length)."""
    chars = list(text)
    for start, end in ranges:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def find_markup(text: str) -> Markup:
    """The LaTeX and markdown markup of ``text`` (see the module docstring)."""
    hidden: list[tuple[int, int]] = []
    styles: list[tuple[int, int, str]] = []
    math: list[tuple[int, int]] = []
    for match in _MATH.finditer(text):
        math.append(match.span())
        hidden += [(match.start(), match.start() + 1), (match.end() - 1, match.end())]
        styles.append((match.start(1), match.end(1), "math"))
    for match in _COMMAND.finditer(text):
        close = _closing_brace(text, match.end())
        if close is None:
            continue
        hidden += [match.span(), (close, close + 1)]
        styles.append((match.end(), close, STYLE_COMMANDS[match.group(1)]))
    hidden += [(m.start(), m.start() + 1) for m in _ESCAPED.finditer(text)]
    # Markdown is not looked for inside math, where * and _ are operators and subscripts.
    outside_math = _blank(text, math)
    bold = list(_BOLD.finditer(outside_math))
    for match in bold:
        hidden += [(match.start(), match.start() + 2), (match.end() - 2, match.end())]
        styles.append((match.start(1), match.end(1), "bold"))
    without_bold = _blank(outside_math, [(m.start(), m.start() + 2) for m in bold]
                          + [(m.end() - 2, m.end()) for m in bold])
    for pattern in (_STAR_ITALIC, _UNDERSCORE_ITALIC):
        for match in pattern.finditer(without_bold):
            hidden += [(match.start(), match.start() + 1), (match.end() - 1, match.end())]
            styles.append((match.start(1), match.end(1), "italic"))
    return Markup(tuple(sorted(set(hidden))), tuple(sorted(set(styles))))


def segments(text: str, spans: list[Span], markup: Markup | None = None) -> list[Segment]:
    """Cut ``text`` at every markup and span boundary; concatenated, the segments' texts
    are ``text`` exactly. Spans outside the text are clipped; empty ones are dropped."""
    markup = find_markup(text) if markup is None else markup
    size = len(text)
    clipped = [s for s in (
        Span(max(0, s.start), min(size, s.end), s.field, s.key, s.mark, s.label) for s in spans
    ) if s.start < s.end]
    cuts = {0, size}
    for start, end in markup.hidden:
        cuts.update((start, end))
    for start, end, _ in markup.styles:
        cuts.update((start, end))
    for span in clipped:
        cuts.update((span.start, span.end))
    points = sorted(cut for cut in cuts if 0 <= cut <= size)
    found = []
    for start, end in itertools.pairwise(points):
        found.append(Segment(
            start=start,
            end=end,
            text=text[start:end],
            hidden=any(a <= start and end <= b for a, b in markup.hidden),
            styles=frozenset(style for a, b, style in markup.styles if a <= start and end <= b),
            spans=tuple(s for s in clipped if s.start <= start and end <= s.end),
        ))
    return found
