"""The review pages: server-rendered with Jinja2; htmx posts each action and swaps in the
paper's card as it now stands. Form posts carry the page's CSRF token (security.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape
from pydantic import ValidationError

from papersift.extract.interface.serve import review
from papersift.extract.interface.serve.api import (
    MAX_OFFSET,
    CorrectionIn,
    apply_correction,
    state_of,
)
from papersift.report.colours import field_css
from papersift.report.render import ASSETS, FIELD_TITLES
from papersift.warehouse.corrections import EDITABLE, CorrectionError
from papersift.warehouse.report import FIELDS
from papersift.warehouse.review_reads import recent_runs

HERE = Path(__file__).resolve().parent
ASSET_FILES = {
    "htmx.min.js": (ASSETS / "vendor" / "htmx.min.js", "text/javascript"),
    "report.css": (ASSETS / "report.css", "text/css"),
    "review.css": (HERE / "static" / "review.css", "text/css"),
    "review.js": (HERE / "static" / "review.js", "text/javascript"),
}
PAGE_SIZE = 20
router = APIRouter(include_in_schema=False)


def _ident(paper_id: str, item: review.ReviewItem) -> Markup:
    """The hidden inputs that name an item and the version its card shows."""
    values = {"paper_id": paper_id, "item_type": item.item_type, "item_key": item.item_key,
              "version": item.version}
    return Markup("").join(
        Markup('<input type="hidden" name="{}" value="{}">').format(name, value)
        for name, value in values.items())


def _short(value: str, size: int = 12) -> str:
    return value if len(value) <= size + 7 else value[: size + 7] + "…"


def _number(value: Any) -> str:
    """A gain's value as a form shows it; a user field's value (text) as it is."""
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["short"] = _short
    env.filters["number"] = _number
    env.filters["basename"] = lambda path: Path(str(path)).name
    env.globals.update(ident=_ident, fields=FIELDS, field_titles=FIELD_TITLES,
                       add_inputs=_add_inputs(),
                       field_css=Markup(field_css()))
    return env


def _add_inputs() -> list[tuple[str, str]]:
    """The add form's inputs: each editable column of the correctable fields (registry),
    with the item types that show it."""
    columns: dict[str, list[str]] = {}
    for kind, fields in EDITABLE.items():
        for name in fields:
            columns.setdefault(name, []).append(kind)
    return [(name, " ".join(kinds)) for name, kinds in columns.items()]


ENV = _environment()


def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    state = state_of(request)
    counts = state.counts()
    page = ENV.get_template(name).render(
        csrf=state.csrf, read_only=state.config.read_only, db=str(state.config.db),
        default_reviewer=state.config.reviewer, counts=counts, message=None, level="",
        **context)
    return HTMLResponse(page, status_code=status)


@router.get("/assets/{name}")
def asset(name: str) -> Response:
    found = ASSET_FILES.get(name)
    if found is None:
        return Response("no such asset", status_code=404, media_type="text/plain")
    path, media = found
    return Response(path.read_bytes(), media_type=media,
                    headers={"cache-control": "max-age=300"})


@router.get("/", response_class=HTMLResponse)
def papers_page(request: Request, q: str | None = None, show: str = "all",
                offset: int = 0) -> HTMLResponse:
    if show not in review.SHOWS:
        show = "all"
    offset = min(max(0, offset), MAX_OFFSET)
    state = state_of(request)
    total, ids = state.find(q=q, show=show, limit=PAGE_SIZE, offset=offset)
    cards = state.cards(ids)

    def page_query(at: int) -> str:
        return urlencode({k: v for k, v in (("q", q), ("show", show), ("offset", at)) if v})

    return _render(request, "list.html.j2", cards=cards, total=total, q=q, show=show,
                   shows=review.SHOWS, offset=offset, limit=PAGE_SIZE, page_query=page_query)


@router.get("/papers/{paper_id}", response_class=HTMLResponse)
def paper_page(request: Request, paper_id: str, queue: int = 0) -> HTMLResponse:
    state = state_of(request)
    cards = state.cards([paper_id])
    left, _ = state.find(show="queue", limit=1)
    if not cards:
        return HTMLResponse(f"<p>no paper {escape(paper_id)}</p>", status_code=404)
    return _render(request, "paper.html.j2", rc=cards[0], queue=bool(queue), queue_left=left)


@router.get("/queue")
def queue(request: Request, after: str | None = None) -> Response:
    """The next paper to review: conflicts, then flagged items, then unreviewed papers."""
    _, ids = state_of(request).find(show="queue", limit=10_000)
    if after in ids:
        ids = ids[ids.index(after) + 1:] + ids[: ids.index(after)]
    if not ids:
        return _render(request, "list.html.j2", cards=[], total=0, q=None, show="queue",
                       shows=review.SHOWS, offset=0, limit=PAGE_SIZE,
                       page_query=lambda at: "")
    return RedirectResponse(f"/papers/{ids[0]}?queue=1", status_code=303)


@router.get("/conflicts", response_class=HTMLResponse)
def conflicts_page(request: Request) -> HTMLResponse:
    from papersift.warehouse.corrections import conflicts

    found = state_of(request).read(conflicts)
    return _render(request, "conflicts.html.j2", conflicts=found)


@router.get("/runs", response_class=HTMLResponse)
def runs_page(request: Request) -> HTMLResponse:
    state = state_of(request)
    runs = state.read(recent_runs)
    return _render(request, "runs.html.j2", runs=runs, jobs=state.jobs.all())


def _correction_of(form: dict[str, Any], reviewer: str | None) -> CorrectionIn:
    changes = {key[4:]: value for key, value in form.items() if key.startswith("set_")}
    data: dict[str, Any] = {k: v for k, v in form.items()
                            if not k.startswith("set_") and v != "" and k != "reviewer"}
    if data.get("action") == "add":
        wanted = EDITABLE.get(str(data.get("item_type")), {})
        changes = {k: v for k, v in changes.items()  # a user field's: the selection
                   if k in wanted and v != ""}
    return CorrectionIn(**data, changes=changes, reviewer=reviewer)


@router.post("/ui/correct", response_class=HTMLResponse)
async def correct(request: Request) -> HTMLResponse:
    """One review action from a card's form; answers with the card as it now stands."""
    state = state_of(request)
    form = {key: str(value) for key, value in (await request.form()).items()}
    reviewer = form.get("reviewer") or request.headers.get("x-reviewer") or None
    paper_id = form.get("paper_id", "")
    message, level, status = None, "", 200
    try:
        body = _correction_of(form, reviewer)
        with state.cursor() as repo:
            apply_correction(repo, body, state.config.reviewer)
        state.changed(body.paper_id)
    except ValidationError as error:
        message, level, status = f"not saved: {error.errors()[0]['msg']}", "error", 400
    except CorrectionError as error:
        message, level, status = f"not saved: {error}", "error", error.status
    cards = state.cards([paper_id])
    if not cards:
        return HTMLResponse(f"<p class='notice error'>{escape(message or 'no such paper')}</p>",
                            status_code=404)
    html = ENV.get_template("card.html.j2").render(
        rc=cards[0], read_only=state.config.read_only, message=message, level=level)
    return HTMLResponse(html, status_code=status)
