"""The work of a run: one job per distinct abstract, with the reason not to send it when
there is one (too long for the model's context, too short to be an abstract)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from papersift.extract.access.outcomes import Failure
from papersift.extract.domain.reading.ingest import IngestResult
from papersift.extract.runs.ingested import canonical_paths

# Fewer words than this cannot name a task and quote it: not an abstract, not sent.
MIN_WORDS = 5

UNKNOWN_FAILURE = Failure("unknown", "unknown", "no result and no reason")
BUDGET_SPENT = Failure("budget", "max_cost",
                       "not sent: the run's --max-cost budget was reached; rerun with a "
                       "larger budget to extract it")


@dataclass(frozen=True)
class Job:
    paper_id: str
    text: str
    skip: Failure | None = None  # a known reason not to send it (too long for the context)
    file: str | None = None  # first occurrence, so failure rows can name the place
    position: int | None = None
    title: str | None = None  # the input's title, when it has one (grounding reads it)


def too_short(text: str, where: str) -> Failure | None:
    """The skip reason of a text too short to be an abstract (a stray line, a list item)."""
    words = len(text.split())
    if words >= MIN_WORDS:
        return None
    return Failure("ingest", "too_short",
                   f"{where}: {words} word(s), fewer than {MIN_WORDS}: too short to be an "
                   "abstract; it is stored but not sent to the model")


def jobs_for_stored(papers: Iterable[tuple[str, str] | tuple[str, str, str | None]],
                    max_chars: int) -> list[Job]:
    """Jobs for papers already in the warehouse, as (paper_id, text) or (paper_id, text,
    title) rows; too long or too short ones carry their skip reason."""
    jobs = []
    for paper_id, text, *rest in papers:
        title = rest[0] if rest else None
        skip = too_short(text, paper_id)
        if len(text) > max_chars:
            skip = Failure("ingest", "too_long",
                           f"{paper_id}: {len(text):,} characters, over the "
                           f"{max_chars:,}-character "
                           "limit for the model's context")
        jobs.append(Job(paper_id, text, skip, title=title))
    return jobs


def jobs_from(result: IngestResult) -> list[Job]:
    """One job per distinct paper; too long or too short papers carry their skip reason."""
    too_long = {p.paper_id: p for p in result.problems if p.reason == "too_long" and p.paper_id}
    jobs = []
    canonical = canonical_paths()
    for paper in result.papers:
        problem = too_long.get(paper.paper_id)
        first = paper.occurrences[0]
        unit = "abstract" if first.file.lower().endswith(".txt") else "row"
        skip = Failure("ingest", "too_long", problem.message) if problem else too_short(
            paper.text, f"{first.file}, {unit} {first.position} (line {first.line})")
        title = next((o.title for o in paper.occurrences if o.title), None)
        jobs.append(Job(paper.paper_id, paper.text, skip, canonical(first.file),
                        first.position, title))
    return jobs
