"""The JSON API: papers, items, corrections, conflicts, runs, and extraction through the
server (one abstract at once, or a run in the background with progress and cancel)."""

from __future__ import annotations

import asyncio
import math
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.extract.domain.review.corrected import Regrounder, review_grounder
from papersift.extract.interface.serve import review
from papersift.extract.interface.serve.jobs import Job
from papersift.extract.interface.serve.state import ServerState
from papersift.warehouse import corrections
from papersift.warehouse.corrections import CorrectionError, Review, UnknownItemError
from papersift.warehouse.custom import declared_fields
from papersift.warehouse.repository import Repository
from papersift.warehouse.review_reads import (
    item_page,
    one_run,
    paper_outcome,
    paper_text,
    recent_runs,
)
from papersift.warehouse.reviewed import gold_from_corrections

router = APIRouter(prefix="/api")
Scalar = str | float | bool | None
# An item type: a built-in one, a whole paper, or a user field's (custom-NAME).
ITEM_TYPE = r"^(task|method|benchmark|gain|paper|custom-[a-z][a-z0-9_]{0,40})$"


def plain(value: Any) -> Any:
    """JSON-ready: timestamps as ISO text, NaN as null, containers recursively."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def state_of(request: Request) -> ServerState:
    state = request.app.state.papersift
    assert isinstance(state, ServerState)
    return state


# Routes open their cursor inside the route (state.cursor()), never as a dependency:
# FastAPI may enter and leave a dependency in different threads, and the cursor holds
# the server's one database lock (state.py).
State = Annotated[ServerState, Depends(state_of)]
Limit = Annotated[int, Query(ge=1, le=1000)]
MAX_OFFSET = 2**31 - 1  # past DuckDB's 64-bit OFFSET a bigger one was a 500
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]


class CorrectionIn(BaseModel):
    """One review action on one item (or, with ``reviewed``, on a whole paper)."""

    model_config = ConfigDict(extra="forbid")
    paper_id: str = Field(max_length=100)
    item_type: str = Field(max_length=60, pattern=ITEM_TYPE,
                           description="task, method, benchmark, gain, paper, or a user "
                           "field's custom-NAME")
    action: Literal["accept", "reject", "restore", "edit", "add", "reviewed"]
    item_key: str | None = Field(None, max_length=1000,
                                 description="the item's key (not for add / reviewed)")
    version: int = Field(0, ge=0, description="the item's version as you saw it")
    changes: dict[str, Scalar] = Field(default_factory=dict,
                                       description="edit / add: field -> new value")
    start: int | None = Field(None, description="add: first character of the selection")
    end: int | None = Field(None, description="add: one past its last character")
    selected: str | None = Field(None, max_length=2000, description="add: the selected text")
    note: str | None = Field(None, max_length=500, description="reject: the reason")
    reviewer: str | None = Field(None, max_length=100)


def _grounder(repo: Repository) -> Regrounder:
    """Grounds edited values: built-in items as the model's, user fields' by the
    declarations stored with the warehouse."""
    return review_grounder(repo.run(declared_fields))


def apply_correction(repo: Repository, body: CorrectionIn,
                     default_reviewer: str | None) -> list[dict[str, Any]]:
    """Store one review action; CorrectionError (nothing written) when it cannot be."""
    who = Review(reviewer=body.reviewer or default_reviewer, version=body.version,
                 note=body.note)
    if body.action == "reviewed":
        return [repo.run(corrections.mark_reviewed, body.paper_id, who)]
    if body.item_type == "paper":
        raise CorrectionError(f"a paper can only be marked reviewed, not {body.action}ed")
    if body.action == "add":
        if body.start is None or body.end is None or body.selected is None:
            raise CorrectionError("add needs start, end and the selected text")
        text = repo.run(paper_text, body.paper_id)
        if text is None:
            raise UnknownItemError(f"no paper {body.paper_id!r} in the warehouse")
        mention = review.mention_for(text, body.start, body.end, body.selected)
        return [repo.run(corrections.add_item, body.paper_id, body.item_type, mention,
                         body.changes, who, ground=_grounder(repo))]
    if body.item_key is None:
        raise CorrectionError(f"{body.action} needs the item_key of the item")
    if body.action == "edit":
        return repo.run(corrections.edit_item, body.paper_id, body.item_type, body.item_key,
                        body.changes, who, ground=_grounder(repo))
    if body.action == "reject" and not (body.note or "").strip():
        raise CorrectionError("a rejection needs a reason (note)")
    return [repo.run(corrections.set_status, body.paper_id, body.item_type, body.item_key,
                     body.action, who)]


@router.get("/health", summary="The server and its warehouse")
async def health(state: State) -> dict[str, Any]:
    return {"db": str(state.config.db), "read_only": state.config.read_only,
            "reviewer": state.config.reviewer}


@router.post("/snapshot", summary="Publish a read-only copy of the warehouse as it is now")
def snapshot(state: State) -> dict[str, Any]:
    """What `papersift sql` and `query` read while this server holds the warehouse."""
    return {"path": str(state.snapshot())}


@router.get("/papers", summary="Papers, filtered and paged")
def papers(state: State, q: Annotated[str | None, Query(max_length=200)] = None,
           show: Annotated[str, Query(description=f"one of {review.SHOWS}")] = "all",
           limit: Limit = 50, offset: Offset = 0) -> dict[str, Any]:
    if show not in review.SHOWS:
        raise CorrectionError(f"unknown filter {show!r}; one of {list(review.SHOWS)}")
    total, ids = state.find(q=q, show=show, limit=limit, offset=offset)
    cards = state.cards(ids)
    return {"total": total, "offset": offset, "papers": [
        {"paper_id": c.paper_id, "headline": c.card.headline, "items": len(c.items),
         "flagged": len(c.card.flagged), "rejected": len(c.rejected),
         "conflicts": len(c.conflicts), "reviewed": c.reviewed_version > 0}
        for c in cards]}


@router.get("/papers/{paper_id}", summary="One paper: text, corrected items, conflicts")
def paper(state: State, paper_id: str) -> dict[str, Any]:
    cards = state.cards([paper_id])
    if not cards:
        raise UnknownItemError(f"no paper {paper_id!r} in the warehouse")
    return plain(cards[0].as_dict())  # type: ignore[no-any-return]


@router.get("/items", summary="Corrected items of one type")
def items(state: State,
          item_type: Annotated[str, Query(max_length=60, pattern=ITEM_TYPE)] = "method",
          paper_id: str | None = None,
          origin: Literal["model", "corrected", "added"] | None = None,
          limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
    # One page, paged in SQL, and cached like the pages' reads until the next write.
    total, rows = state.cached(("items", item_type, paper_id, origin, limit, offset),
                               lambda: state.read(
                                   item_page, item_type, paper_id=paper_id, origin=origin,
                                   limit=limit, offset=offset))
    return {"total": total, "items": plain(rows)}


@router.get("/corrections", summary="Stored corrections, oldest first")
def list_corrections(state: State, paper_id: str | None = None, limit: Limit = 100,
                     offset: Offset = 0) -> dict[str, Any]:
    rows = state.read(corrections.list_corrections, paper_id, limit=limit, offset=offset)
    return {"corrections": plain(rows)}


@router.post("/corrections", status_code=201, summary="Accept, reject, restore, edit or "
             "add an item, or mark a paper reviewed")
def post_correction(state: State, body: CorrectionIn) -> dict[str, Any]:
    with state.cursor() as repo:
        rows = apply_correction(repo, body, state.config.reviewer)
        state.changed(body.paper_id)
        item = None
        if body.item_type != "paper":
            key = rows[0]["item_key"]
            item = repo.run(corrections.current_item, body.paper_id, body.item_type, key)
    return {"corrections": plain(rows), "item": plain(item)}


@router.get("/corrections/export", summary="Every correction as CSV or JSON lines")
def export(state: State, format: Literal["csv", "jsonl"] = "csv") -> PlainTextResponse:
    media = "text/csv" if format == "csv" else "application/x-ndjson"
    text = state.read(corrections.export_corrections, format)
    return PlainTextResponse(text, media_type=media)


@router.get("/conflicts", summary="Corrections whose item the latest extraction lacks")
def conflicts(state: State) -> dict[str, Any]:
    return {"conflicts": plain(state.read(corrections.conflicts))}


@router.get("/gold", summary="The reviewed papers as a gold file (papersift-gold/1)")
def gold(state: State) -> dict[str, Any]:
    return state.read(gold_from_corrections)


@router.get("/runs", summary="Runs, newest first, and the runs queued through the API")
def runs(state: State, limit: Limit = 50) -> dict[str, Any]:
    stored = state.read(recent_runs, limit)
    return {"runs": plain(stored), "jobs": [job.as_dict() for job in state.jobs.all()]}


@router.get("/runs/{run_id}", summary="One stored run")
def run(state: State, run_id: str) -> dict[str, Any]:
    found = state.read(one_run, run_id)
    if found is None:
        raise UnknownItemError(f"no run {run_id!r}")
    return plain(found)  # type: ignore[no-any-return]


class AbstractIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    abstract: str = Field(min_length=1, max_length=100_000)
    title: str | None = Field(None, max_length=1000)


class InputRefusedError(CorrectionError):
    """A run input outside the configured roots (nothing is read or started)."""

    status = 403


class RunIn(BaseModel):
    """Files or folders on the server's machine, or abstracts sent inline."""

    model_config = ConfigDict(extra="forbid")
    inputs: list[str] = Field(default_factory=list, max_length=1000)
    abstracts: list[AbstractIn] = Field(default_factory=list, max_length=10_000)
    no_cache: bool = False


@router.post("/runs", status_code=202, summary="Start a run in the background")
def start_run(state: State, body: RunIn) -> dict[str, Any]:
    outside = [path for path in body.inputs if not state.config.input_allowed(path)]
    if outside:
        roots = ", ".join(str(root) for root in state.config.inputs_roots)
        raise InputRefusedError(
            f"{outside[0][:200]} is outside the folders this server reads runs from "
            f"({roots}); start `papersift serve` with --inputs-root FOLDER to allow "
            "another, or send the abstracts inline")
    missing = [path for path in body.inputs if not Path(path).exists()]
    if missing:
        raise CorrectionError(f"no such input on the server: {missing[0]}")
    inputs = list(body.inputs)
    if body.abstracts:
        rows = [{"abstract": a.abstract, "title": a.title} for a in body.abstracts]
        inputs.append(str(state.jobs.write_abstracts(rows)))
    if not inputs:
        raise CorrectionError("a run needs inputs (paths) or abstracts")
    job = state.jobs.submit(inputs, use_cache=not body.no_cache)
    return {**job.as_dict(), "url": f"/api/jobs/{job.job_id}"}


@router.get("/jobs", summary="Runs started through the API, newest first")
def jobs(state: State) -> dict[str, Any]:
    return {"jobs": [job.as_dict() for job in state.jobs.all()]}


@router.get("/jobs/{job_id}", summary="A run started through the API: status, progress")
def job(state: State, job_id: str) -> dict[str, Any]:
    return _job_shown(state.jobs.get(job_id), job_id)


@router.post("/jobs/{job_id}/cancel", summary="Cancel a queued or running API run")
def cancel(state: State, job_id: str) -> dict[str, Any]:
    return _job_shown(state.jobs.cancel(job_id), job_id)


def _job_shown(found: Job | None, job_id: str) -> dict[str, Any]:
    """A job as the API shows it; an id no job has is a 404."""
    if found is None:
        raise UnknownItemError(f"no job {job_id!r}")
    return found.as_dict()


@router.post("/extract", summary="Extract one abstract now (same pipeline, cache, warehouse)")
async def extract(state: State, body: AbstractIn) -> JSONResponse:
    # async: waiting for the run takes no worker thread, so many waiting extractions
    # leave the thread pool to the other routes (/api/health kept answering)
    if not body.abstract.strip():
        raise CorrectionError("the abstract is empty")
    path = state.jobs.write_abstracts([{"abstract": body.abstract, "title": body.title}])
    done, future = state.jobs.extract_now(path)
    await asyncio.wrap_future(future)
    if done.status == "failed":
        return JSONResponse({"error": done.error, "job": done.as_dict()}, status_code=502)
    paper_id = paper_id_for(body.abstract)

    def stored() -> Any:
        with state.cursor() as repo:
            return (repo.run(paper_outcome, done.run_id, paper_id),
                    review.load_cards(repo, [paper_id]))

    (outcome, failure), cards = await run_in_threadpool(stored)
    return JSONResponse(plain({
        "paper_id": paper_id, "run_id": done.run_id,
        "outcome": outcome, "failure": failure,
        "paper": cards[0].as_dict() if cards else None}))
