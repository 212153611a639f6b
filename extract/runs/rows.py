"""An outcome as warehouse rows: its calls, its grounded extraction (and cache entry) or
its failure, and its run_papers row; and a cache hit as an outcome. Pure functions of
their inputs (but timestamps), so any process can build the same rows."""

from __future__ import annotations

import hashlib
import json
import secrets
import traceback
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from papersift.extract.access.outcomes import Failure, Outcome
from papersift.extract.domain.assembly.assemble import ASSEMBLY_VERSION, Assembled, Found
from papersift.extract.domain.fields import (
    DEFAULT_FIELDS,
    GROUNDING_VERSION,
    ExtraItem,
    FieldSet,
    ground,
    item_rows,
)
from papersift.extract.domain.lookup.grounding import Alignment, align
from papersift.extract.domain.rules.gain_decision import load_gain_weights
from papersift.extract.domain.rules.method_decision import decisions_json
from papersift.extract.runs.jobs import UNKNOWN_FAILURE, Job
from papersift.schemas import ClaimedGain, PaperDraft, PaperExtraction
from papersift.schemas.fields import BUILTIN_FIELDS, CUSTOM_TABLE
from papersift.schemas.numbers import numbers_in, value_matches
from papersift.warehouse.store import Batch

# The stage of a failure in papersift's own code after the answer arrived (grounding,
# assembly, detectors, user fields, row building); the answer itself is cached.
AFTER_ANSWER_STAGE = "grounding"


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def papersift_version() -> str:
    try:
        return version("papersift")
    except PackageNotFoundError:
        return "0+unknown"


def new_run_id() -> str:
    return f"run_{datetime.now(UTC):%Y%m%dT%H%M%S}_{secrets.token_hex(3)}"


def extraction_id_for(cache_key: str, raw: dict[str, Any], title: str | None = None,
                      grounding: str = GROUNDING_VERSION) -> str:
    """Content id of a stored extraction: the request, the answer and the grounding code
    (and the title, which grounding reads when the input has one)."""
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    material = f"{cache_key}\n{ASSEMBLY_VERSION}\n{grounding}\n{canonical}"
    if title:
        material += f"\ntitle:{title}"
    return "sha256:" + hashlib.sha256(material.encode()).hexdigest()


def extraction_rows(
    batch: Batch,
    *,
    paper_id: str,
    text: str,
    extraction: PaperExtraction,
    raw: dict[str, Any],
    extraction_id: str,
    common: dict[str, Any],
    assembled: Assembled | None = None,
    extra: dict[str, list[ExtraItem]] | None = None,
) -> None:
    """Add an extraction and the items of every field, grounded by code, to the batch:
    each field's rows as its declaration in schemas.fields says.

    With ``assembled``, items were found by extract.assemble and carry its alignments;
    otherwise (answers that come with their own quotes) each quote is aligned here.
    ``extra`` holds the items of fields outside the stored extraction (code-detected
    ones and user fields), which carry their own alignments.
    """
    base = {"extraction_id": extraction_id, "paper_id": paper_id}
    items = 0
    ungrounded = 0

    def grounded(evidence: str, found: Alignment | None, spot: Found | None) -> dict[str, Any]:
        alignment = found if found is not None else align(evidence, text)
        return {
            "evidence": evidence,
            "char_start": alignment.char_start,
            "char_end": alignment.char_end,
            "alignment": alignment.status,
            "align_score": round(alignment.score, 4),
            "mention_start": spot.start if spot is not None else None,
            "mention_end": spot.end if spot is not None else None,
        }

    for spec in BUILTIN_FIELDS:
        stored = getattr(extraction, spec.name) if spec.in_extraction else (extra or {}).get(
            spec.name, [])
        for item, row in zip(stored, item_rows(spec, stored), strict=True):
            if spec.grounded and isinstance(item, ExtraItem):
                row.update(grounded(item.evidence, item.alignment(), item.found))
                if spec.from_draft:  # an optional field the model drafted: its items count
                    items += 1
                    ungrounded += row["alignment"] == "none"
            elif spec.grounded:
                idx = row["idx"]
                found = assembled.alignment(spec.name, idx) if assembled is not None else None
                spot = assembled.found[spec.name][idx] if assembled is not None else None
                row.update(grounded(item.evidence, found, spot))
                items += 1
                ungrounded += row["alignment"] == "none"
            if spec.name == "claimed_gains":
                row["value_in_evidence"] = _value_in_evidence(item)
                attributes = assembled.gain_attributes if assembled is not None else []
                if row["idx"] < len(attributes):
                    row.update(attributes[row["idx"]].columns())
                if row["value_in_evidence"] is False and row["alignment"] != "none":
                    ungrounded += 1
            batch.add(spec.table, {**base, **row})
    for name, custom_items in (extra or {}).items():
        if any(spec.name == name for spec in BUILTIN_FIELDS):
            continue
        for idx, item in enumerate(custom_items):
            row = grounded(item.evidence, item.alignment(), item.found)
            items += 1
            ungrounded += row["alignment"] == "none"
            batch.add(CUSTOM_TABLE, {**base, "field": name, "idx": idx, **item.values, **row})
    batch.add(
        "extractions",
        {**base, **common, "raw_json": raw,
         "items": items, "items_ungrounded": ungrounded,
         "items_rejected": len(assembled.rejected) if assembled is not None else 0,
         "rejected": assembled.rejected if assembled is not None else [],
         "added": assembled.added if assembled is not None else [],
         "decisions": decisions_json(assembled.decisions, gains=assembled.gain_decisions,
                                     gain_weights=load_gain_weights())
         if assembled is not None else None,
         "created": _now()},
    )


def _value_in_evidence(gain: ClaimedGain) -> bool | None:
    """Whether a gain's number occurs in its own evidence (None when it has no number)."""
    return None if gain.value is None else value_matches(gain.value, numbers_in(gain.evidence))


def outcome_batch(
    outcome: Outcome, job: Job, *, run_id: str, provenance: dict[str, Any], model: str,
    fields: FieldSet = DEFAULT_FIELDS,
) -> Batch:
    """The rows one abstract's outcome adds to the warehouse: its calls, then its grounded
    extraction (with the cache entry when the answer is new) or its failure, and its
    run_papers row. Pure: the same outcome always gives the same rows (but timestamps).

    The ``lenient`` columns stay for warehouses written by the first schema (answers kept
    with quotes not found); no answer is kept that way any more, so they are False."""
    now = _now()
    batch = Batch()
    for call in outcome.calls:
        batch.add("calls", {"run_id": run_id, "paper_id": outcome.paper_id,
                            "cache_key": outcome.cache_key, **call.__dict__})
    answer = outcome.draft or outcome.extraction
    failure = outcome.failure or UNKNOWN_FAILURE
    if answer is not None:
        raw = answer.model_dump(mode="json", exclude_none=outcome.draft is not None)
        if not outcome.from_cache:  # paid for: cached even when its rows cannot be built
            batch.add("llm_cache", {
                "cache_key": outcome.cache_key, "response_json": raw,
                "lenient": False, "model": model,
                "asks": outcome.asks, "prompt_tokens": outcome.prompt_tokens,
                "completion_tokens": outcome.completion_tokens, "created": now,
            })
        try:
            paper = _answer_rows(outcome, job, raw, run_id=run_id, provenance=provenance,
                                 fields=fields)
        except Exception as error:  # one paper's bug never stops a run
            failure = after_answer_failure(error)
        else:
            batch.extend(paper)
            batch.add("run_papers", {"run_id": run_id, "paper_id": outcome.paper_id,
                                     "outcome": "cached" if outcome.from_cache
                                     else "extracted",
                                     "extraction_id": paper.rows["extractions"][0]["extraction_id"],
                                     "recorded": now})
            return batch
    batch.add("failures", {"run_id": run_id, "paper_id": outcome.paper_id,
                           "file": job.file, "position": job.position,
                           "stage": failure.stage,
                           "reason": failure.reason, "detail": failure.detail,
                           "created": now})
    batch.add("run_papers", {"run_id": run_id, "paper_id": outcome.paper_id,
                             "outcome": "failed", "extraction_id": None,
                             "recorded": now})
    return batch


def _answer_rows(outcome: Outcome, job: Job, raw: dict[str, Any], *, run_id: str,
                 provenance: dict[str, Any], fields: FieldSet) -> Batch:
    """The grounded extraction of one answer as rows (grounding, assembly, detectors, user
    fields, row building): everything papersift's own code does after the answer."""
    paper = Batch()
    grounded = (ground(outcome.draft, job.text, fields, job.title)
                if outcome.draft is not None else None)
    assembled = grounded.assembled if grounded is not None else None
    extraction = assembled.extraction if assembled is not None else outcome.extraction
    if extraction is None:
        raise ValueError("the answer has neither a draft nor an extraction")
    extraction_rows(
        paper,
        paper_id=outcome.paper_id,
        text=job.text,
        extraction=extraction,
        assembled=assembled,
        extra=grounded.extra if grounded is not None else None,
        raw=raw,
        extraction_id=extraction_id_for(outcome.cache_key, raw, job.title,
                                        fields.grounding_version()),
        common={**provenance, "run_id": run_id, "cache_key": outcome.cache_key,
                "asks": outcome.asks, "lenient": False},
    )
    return paper


def after_answer_failure(error: BaseException) -> Failure:
    """The failure row of a paper whose answer arrived but whose rows papersift's own code
    could not build: the stage, the error's kind and its message, one line each."""
    where = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
    place = f" (at {Path(where[0].filename).name}:{where[0].lineno})" if where else ""
    message = " ".join(str(error).split())[:500]
    return Failure(stage=AFTER_ANSWER_STAGE, reason=f"internal: {type(error).__name__}",
                   detail=f"{message}{place}")


def cached_outcome(paper_id: str, cache_key: str, hit: dict[str, Any],
                   draft_model: type[PaperDraft] = PaperDraft) -> Outcome:
    """The outcome of a cache hit (a row of ``cache_lookup``): a draft (schema v2) or an
    already grounded answer, with the asks it once took; no request is made."""
    response = hit["response"]
    answer: dict[str, Any] = (
        {"draft": draft_model.model_validate(response)} if "types" in response
        else {"extraction": PaperExtraction.model_validate(response)})
    return Outcome(paper_id=paper_id, cache_key=cache_key, **answer,
                   asks=hit["asks"] or 0, from_cache=True)


def valid_cached_outcome(paper_id: str, cache_key: str, hit: dict[str, Any],
                         draft_model: type[PaperDraft] = PaperDraft) -> Outcome | None:
    """cached_outcome, or None when the stored answer no longer validates (older code, a
    damaged row): the paper is then asked again, and the run goes on."""
    try:
        return cached_outcome(paper_id, cache_key, hit, draft_model)
    except (ValidationError, TypeError, ValueError, KeyError, AttributeError):
        return None
