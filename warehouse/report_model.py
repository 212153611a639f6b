"""The plain data the review report is made of: items, paper cards, the overview and the
runs behind them (no HTML, no SQL; warehouse.report fills them from a warehouse)."""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from datetime import datetime

from papersift.schemas.fields import BUILTIN_FIELDS, CUSTOM_ITEM_PREFIX
from papersift.warehouse.report_entities import LeaderRow
from papersift.warehouse.report_map import MapData
from papersift.warehouse.store import RunCounts

# The registry's fields shown as sections of each card (schemas.fields), by item name.
SHOWN_FIELDS = {spec.item: spec for spec in BUILTIN_FIELDS if spec.shown}
# Every card has a section per default field; an optional one's shows where items are.
FIELDS = tuple(item for item, spec in SHOWN_FIELDS.items() if not spec.optional)
OPTIONAL_SHOWN = tuple(item for item, spec in SHOWN_FIELDS.items() if spec.optional)
TITLES = {item: spec.title for item, spec in SHOWN_FIELDS.items()}
# A user-defined field's items show as the field "custom-NAME".
CUSTOM_PREFIX = CUSTOM_ITEM_PREFIX


@dataclass(frozen=True)
class Item:
    """One extracted item of a paper, with its quote and where code found it."""

    field: str  # task / method / benchmark / gain / artifact / custom-NAME
    idx: int
    name: str  # the gain's metric, or the task's, method's or benchmark's name
    details: tuple[tuple[str, str], ...]
    evidence: str
    char_start: int | None
    char_end: int | None
    alignment: str  # exact / normalized / fuzzy / none
    align_score: float | None
    value: float | None = None  # gains only
    unit: str | None = None  # gains only
    value_in_evidence: bool | None = None  # gains only
    introduced: bool | None = None  # benchmarks only: the paper introduces it
    canonical: str | None = None  # the canonical entity's name (metric for gains)
    aliases: tuple[str, ...] = ()  # every spelling of that entity

    @property
    def shown(self) -> str:
        """The name items are counted by: the canonical entity's, else the item's own."""
        return self.canonical or self.name

    @property
    def key(self) -> str:
        return f"{self.field}-{self.idx}"

    @property
    def label(self) -> str:
        """The name, and for a gain its value and unit when it has one."""
        if self.value is None:
            return self.name
        return f"{self.name} {self.value:g}" + (f" {self.unit}" if self.unit else "")

    @property
    def located(self) -> bool:
        """Code found the quote in the abstract (so it can be highlighted)."""
        return self.alignment != "none" and self.char_start is not None \
            and self.char_end is not None

    @property
    def number_unverified(self) -> bool:
        """A claimed number that does not occur in its own quote."""
        return self.value is not None and self.value_in_evidence is False

    @property
    def flagged(self) -> bool:
        return not self.located or self.number_unverified

    @property
    def drafted(self) -> bool:
        """The model proposed it (code grounded it); artifacts are found by code alone."""
        spec = SHOWN_FIELDS.get(self.field)
        return spec.from_draft if spec is not None else True


@dataclass(frozen=True)
class Source:
    file: str
    position: int
    line: int | None
    collection: str | None
    venue: str | None
    year: int | None
    title: str | None


@dataclass(frozen=True)
class Extraction:
    extraction_id: str
    model: str | None
    mode: str | None
    prompt_version: str | None
    schema_version: str | None
    lenient: bool
    asks: int | None


@dataclass(frozen=True)
class PaperCard:
    paper_id: str
    text: str
    sources: tuple[Source, ...]
    extraction: Extraction | None
    contribution_types: tuple[str, ...] = ()
    items: tuple[Item, ...] = ()
    failure: str | None = None  # why there is no extraction, when there is none

    def of(self, kind: str) -> tuple[Item, ...]:
        return tuple(item for item in self.items if item.field == kind)

    @property
    def title(self) -> str | None:
        """The title an input gave (the text corpus has none)."""
        return next((source.title for source in self.sources if source.title), None)

    @property
    def headline(self) -> str:
        """The title, else the first proposed method, else the opening words."""
        if self.title:
            return self.title
        methods = self.of("method")
        if methods:
            expansion = dict(methods[0].details).get("expansion")
            return methods[0].name + (f" ({expansion})" if expansion else "")
        words = self.text.split()
        return " ".join(words[:12]) + (" …" if len(words) > 12 else "")

    @property
    def has_numbers(self) -> bool:
        return any(item.value is not None for item in self.of("gain"))

    @property
    def flagged(self) -> tuple[Item, ...]:
        return tuple(item for item in self.items if item.flagged)

    @property
    def collections(self) -> tuple[str, ...]:
        return tuple(sorted({s.collection for s in self.sources if s.collection}))


@dataclass(frozen=True)
class Count:
    """A name and the number of papers it occurs in."""

    label: str
    papers: int


@dataclass(frozen=True)
class GainGroup:
    """Claimed gains sharing a metric and unit."""

    metric: str
    unit: str | None
    claims: int
    papers: int
    with_value: int
    value_in_quote: int
    values: tuple[float, ...]

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None


@dataclass(frozen=True)
class Versions:
    """Model and versions that produced the shown extractions, with their paper count."""

    model: str | None
    mode: str | None
    prompt_version: str | None
    schema_version: str | None
    papers: int


@dataclass(frozen=True)
class Price:
    """US dollars per million prompt and completion tokens, for pricing remote runs."""

    prompt_per_million: float
    completion_per_million: float

    def cost(self, counts: RunCounts) -> float:
        """What a run's tokens cost at this price."""
        return (counts.prompt_tokens * self.prompt_per_million
                + counts.completion_tokens * self.completion_per_million) / 1e6


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    started: datetime
    finished: datetime | None
    status: str
    endpoint: str | None
    kind: str | None  # local / openai / compatible (from the run's params)
    model: str | None
    mode: str | None
    prompt_version: str | None
    schema_version: str | None
    papersift_version: str | None
    counts: RunCounts  # what the run processed and spent, as the runs table stores it
    requests: int
    reasks: int

    @property
    def seconds(self) -> float | None:
        return (self.finished - self.started).total_seconds() if self.finished else None

    def cost_usd(self, price: Price | None) -> float | None:
        """Money spent on tokens: 0 for the local model, None when no price is known."""
        if self.kind == "local":
            return 0.0
        if price is None:
            return None
        return price.cost(self.counts)


@dataclass(frozen=True)
class Overview:
    papers: int
    extracted: int
    occurrences: int
    files: tuple[str, ...]
    collections: tuple[Count, ...]
    contribution_types: tuple[Count, ...]
    top_tasks: tuple[Count, ...]
    top_benchmarks: tuple[Count, ...]
    new_benchmarks: tuple[Count, ...]
    artifacts: tuple[Count, ...]  # papers releasing each kind of artifact
    most_results: tuple[Count, ...]  # the papers stating the most numbers (papers = results)
    gains: tuple[GainGroup, ...]
    versions: tuple[Versions, ...]
    runs: tuple[RunInfo, ...]
    items: int
    items_not_located: int
    numbers_unverified: int
    lenient: int
    # Each user field (custom-NAME) and the papers per value of its items, most first.
    custom: tuple[tuple[str, tuple[Count, ...]], ...] = ()


@dataclass(frozen=True)
class ReportData:
    db_path: str
    generated: datetime
    overview: Overview
    papers: tuple[PaperCard, ...]
    price: Price | None = None
    fields: tuple[str, ...] = FIELDS  # the card sections, built-in then user-defined
    titles: dict[str, str] = dataclasses.field(default_factory=lambda: dict(TITLES))
    # a user field's description (custom-NAME), from its declaration
    descriptions: dict[str, str] = dataclasses.field(default_factory=dict)
    topic_map: MapData | None = None  # areas, map positions, neighbours (papersift index)
    leaderboard: tuple[LeaderRow, ...] = ()
