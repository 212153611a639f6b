"""What reading input yields: papers with every place they were met, repeats, and the
problems found, plus the chunker that fills one chunk of them and refuses bad records."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from papersift.extract.domain.reading.records import text_problem


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
    url: str | None = None  # the record's link to the paper, when it has one
    extra: str | None = None  # the record's other plain fields, as a JSON object


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


@dataclass(frozen=True)
class Repeat:
    """Another place of a paper that an earlier chunk of the stream already returned."""

    paper_id: str
    occurrence: Occurrence


@dataclass
class IngestResult:
    """Papers in first-seen order, the problems met, and the files that were read.

    A chunk of ``ingest_stream`` also carries ``repeats``: new places of papers returned in
    an earlier chunk (store them as sources, never as new papers). A merged result has none.
    """

    papers: list[Paper]
    problems: list[IngestProblem]
    files: list[str]
    repeats: list[Repeat] = field(default_factory=list)

    @property
    def occurrences(self) -> int:
        """Total number of places abstracts were found, duplicates included."""
        return sum(len(paper.occurrences) for paper in self.papers) + len(self.repeats)


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and trim the ends."""
    return " ".join(text.split())


def paper_id_for(text: str) -> str:
    """The stable id of an abstract: sha256 of its whitespace-normalised UTF-8 text."""
    digest = hashlib.sha256(normalize_whitespace(text).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"


_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")


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


# --------------------------------------------------------------------------- chunks


def _digest(paper_id: str) -> bytes:
    """The 32 raw bytes behind a ``sha256:<hex>`` id (less than half the memory of the id)."""
    return bytes.fromhex(paper_id.removeprefix("sha256:"))


@dataclass
class Chunker:
    """State of one ``ingest_stream`` call: the chunk being filled, and the ids of the papers
    earlier chunks returned (the only thing kept for the whole stream)."""

    max_chars: int
    returned: set[bytes] = field(default_factory=set)
    texts: dict[str, str] = field(default_factory=dict)
    places: dict[str, list[Occurrence]] = field(default_factory=dict)
    repeats: list[Repeat] = field(default_factory=list)
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
        refused = text_problem(text)
        if refused is not None:
            self.problem(place.file, "bad_text", f"{where}: the abstract {refused}",
                         position=place.position, line=place.line)
            return
        paper_id = paper_id_for(text)
        if paper_id in self.places:
            self.places[paper_id].append(place)
            return
        if _digest(paper_id) in self.returned:
            self.repeats.append(Repeat(paper_id, place))
            return
        self.texts[paper_id] = text
        self.places[paper_id] = [place]
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

    def size(self) -> int:
        """Entries held in the current chunk: papers, repeats and problems."""
        return len(self.places) + len(self.repeats) + len(self.problems)

    def take(self) -> IngestResult:
        """The current chunk as a result; the next one starts empty."""
        papers = [Paper(pid, text, tuple(self.places[pid])) for pid, text in self.texts.items()]
        self.returned.update(_digest(paper.paper_id) for paper in papers)
        chunk = IngestResult(papers, self.problems, self.files, self.repeats)
        self.texts, self.places, self.repeats = {}, {}, []
        self.problems, self.files = [], []
        return chunk
