"""What one abstract's extraction produced, as plain data: no SDK, no instructor.

A row worker process (runs/rowbuild.py) unpickles outcomes; defined here, they cost it
pydantic and the draft schema to import, not openai and instructor (about 2 s of CPU
per worker start)."""

from __future__ import annotations

from dataclasses import dataclass, field

from papersift.extract.access.calls import CallRecord
from papersift.extract.domain.user_draft import plain_class
from papersift.schemas import PaperDraft, PaperExtraction


@dataclass(frozen=True)
class Failure:
    stage: str  # request / validation
    reason: str  # short code
    detail: str


@dataclass
class Outcome:
    """What one abstract's extraction produced: fields, or a failure, plus every attempt."""

    paper_id: str
    cache_key: str
    draft: PaperDraft | None = None  # the model's answer, grounded by code when recorded
    extraction: PaperExtraction | None = None  # an answer that arrives grounded already
    failure: Failure | None = None
    calls: list[CallRecord] = field(default_factory=list)
    asks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    from_cache: bool = False

    @property
    def ok(self) -> bool:
        return self.draft is not None or self.extraction is not None


def plain_draft(draft: PaperDraft) -> PaperDraft:
    """The same answer as a plain PaperDraft, or as the run's draft class with user
    fields (instructor's wrapped class cannot be pickled), its values taken as they
    are, not validated again."""
    plain = plain_class(draft)
    if type(draft) is plain:
        return draft
    values = {name: getattr(draft, name) for name in plain.model_fields}
    return plain.model_construct(_fields_set=set(draft.model_fields_set), **values)
