"""An endpoint may echo the API key inside a successful answer (a task named after it,
evidence quoting it, hex-encoded or reversed): the answer is stored, cached, grounded
and exported, so every string of it loses the key before anything is built from it."""

from __future__ import annotations

import dataclasses
import json

from pydantic import ValidationError

from papersift.extract.access.credentials import hide_secrets, in_every_string
from papersift.extract.access.outcomes import Failure, Outcome
from papersift.schemas import PaperDraft, PaperExtraction


def without_echoed_secrets(outcome: Outcome, secrets: tuple[str, ...],
                           draft_model: type[PaperDraft] = PaperDraft) -> Outcome:
    """The outcome with every secret (in any echoed form) taken out of its answer; the
    same object when the answer holds none. An answer that no longer validates without
    it becomes a failure that says so (and holds no secret)."""
    secrets = tuple(secret for secret in secrets if secret)
    answer = outcome.draft or outcome.extraction
    if not secrets or answer is None:
        return outcome
    raw = answer.model_dump(mode="json")
    text = json.dumps(raw, ensure_ascii=False)
    if hide_secrets(text, secrets) == text:
        return outcome
    cleaned = in_every_string(raw, lambda part: hide_secrets(part, secrets))
    try:
        if outcome.draft is not None:
            return dataclasses.replace(outcome, draft=draft_model.model_validate(cleaned))
        return dataclasses.replace(outcome,
                                   extraction=PaperExtraction.model_validate(cleaned))
    except ValidationError as error:
        detail = hide_secrets(f"the answer echoed the API key; without it: {error}", secrets)
        return dataclasses.replace(outcome, draft=None, extraction=None, failure=Failure(
            "validation", "secret_echoed", detail[:4000]))
