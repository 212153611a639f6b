"""The review report as one self-contained HTML file: styles, scripts, data and the
vendored Chart.js are all inlined, so the page opens with no network.

Everything from the warehouse is escaped by Jinja2's autoescaping or, for the abstract's
segments and the embedded JSON, by the helpers here; nothing from the data is trusted.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from papersift.errors import PapersiftError
from papersift.report.colours import field_colours, field_css
from papersift.report.markup import Span, segments
from papersift.warehouse.report import (
    CUSTOM_PREFIX,
    FIELDS,
    TITLES,
    Item,
    PaperCard,
    Price,
    ReportData,
    load_report,
    normalise_name,
    summarise,
)

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
ASSETS = HERE / "assets"
CHART_JS = ASSETS / "vendor" / "chart.umd.min.js"
FIELD_TITLES = TITLES  # from the field registry (schemas.fields), through warehouse.report
# How many gain groups the chart shows (the table below it lists them all).
CHART_GAIN_GROUPS = 15
SIMILAR_ON_CARD = 5


class ReportError(PapersiftError):
    """The report cannot be built (a missing asset, an unwritable output)."""


def span_mark(item: Item) -> str:
    """The flag a highlighted span carries: fuzzy alignment, or a number not in its quote."""
    if item.number_unverified:
        return "unverified"
    if item.alignment == "fuzzy":
        return "fuzzy"
    return ""


def evidence_spans(card: PaperCard) -> list[Span]:
    """The spans to highlight: every item whose quote code located in the abstract."""
    return [Span(item.char_start, item.char_end, item.field, item.key, span_mark(item),
                 f"{item.field}: {item.label}")
            for item in card.items
            if item.located and item.char_start is not None and item.char_end is not None]


def abstract_html(card: PaperCard) -> Markup:
    """The abstract as flat, escaped segments; its text content is the stored text."""
    parts = []
    for segment in segments(card.text, evidence_spans(card)):
        text = escape(segment.text)
        classes = []
        if segment.hidden:
            classes.append("mk")
        classes += [f"st-{style}" for style in sorted(segment.styles)]
        attributes = ""
        primary = segment.primary
        if primary is not None:
            fields = sorted({span.field for span in segment.spans}, key=_field_order)
            classes += ["hl", f"hl-{primary.field}"]
            if len(fields) > 1:
                classes.append("hl-multi")
            classes += sorted({f"hl-{span.mark}" for span in segment.spans if span.mark})
            keys = " ".join(span.key for span in segment.spans)
            says = "; ".join(span.label for span in segment.spans)
            attributes = (f' data-items="{escape(keys)}" title="{escape(says)}"'
                          f' data-start="{segment.start}" data-end="{segment.end}"')
        if not classes:
            parts.append(str(text))
            continue
        parts.append(f'<span class="{" ".join(classes)}"{attributes}>{text}</span>')
    return Markup("".join(parts))


def _field_order(field: str) -> tuple[int, str]:
    """Built-in fields in the registry's order, then user-defined ones by name."""
    return (FIELDS.index(field), "") if field in FIELDS else (len(FIELDS), field)


def script_json(value: Any) -> Markup:
    """JSON safe to place inside a <script> element: <, > and & are \\u-escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, code)
    return Markup(text)


def _inline_script(path: Path) -> Markup:
    """A vendored script's text, ready to inline; its source-map comment is dropped."""
    if not path.is_file():
        raise ReportError(f"report asset missing: {path} (reinstall papersift)")
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"\n//# sourceMappingURL=\S+\s*$", "\n", text)
    if re.search(r"</script", text, re.IGNORECASE):
        raise ReportError(f"{path.name} contains '</script' and cannot be inlined")
    return Markup(text)


def chart_js_version(path: Path = CHART_JS) -> str:
    """The vendored Chart.js version, read from its banner comment."""
    match = re.search(r"Chart\.js v(\d+\.\d+\.\d+)", path.read_text(encoding="utf-8")[:300])
    return match.group(1) if match else "unknown"


def _names(items: Iterable[Item]) -> list[str]:
    return sorted({normalise_name(item.shown) for item in items})


def card_filters(card: PaperCard) -> dict[str, str]:
    """The data-* attributes the page's filters read, as JSON lists of normalised names."""
    return {
        "tasks": json.dumps(_names(card.of("task")), ensure_ascii=False),
        "benchmarks": json.dumps(_names(card.of("benchmark")), ensure_ascii=False),
        "types": json.dumps(sorted({normalise_name(t) for t in card.contribution_types}),
                            ensure_ascii=False),
        "numbers": "1" if card.has_numbers else "0",
        "flagged": "1" if card.flagged else "0",
        "custom": json.dumps({field: _names(card.of(field)) for field in
                              dict.fromkeys(i.field for i in card.items
                                            if i.field.startswith(CUSTOM_PREFIX))},
                             ensure_ascii=False),
    }


def chart_data(data: ReportData) -> dict[str, Any]:
    """What the charts draw; tables on the page show the same numbers in full."""
    overview = data.overview
    gains = overview.gains[:CHART_GAIN_GROUPS]
    return {
        "contributionTypes": [[c.label, c.papers, normalise_name(c.label)]
                              for c in overview.contribution_types],
        "tasks": [[c.label, c.papers, normalise_name(c.label)] for c in overview.top_tasks],
        "benchmarks": [[c.label, c.papers, normalise_name(c.label)]
                       for c in overview.top_benchmarks],
        "colours": field_colours(),
        "gains": {
            "labels": [g.metric + (f" [{g.unit}]" if g.unit else "") for g in gains],
            "inQuote": [g.value_in_quote for g in gains],
            "notInQuote": [g.with_value - g.value_in_quote for g in gains],
            "noNumber": [g.claims - g.with_value for g in gains],
        },
    }


def _options(counts: Iterable[tuple[str, int]]) -> list[tuple[str, str, int]]:
    return [(normalise_name(label), label, n) for label, n in counts]


def _filter_options(data: ReportData) -> dict[str, Any]:
    """Every task, benchmark and contribution type, and each user field's values
    (``custom``: field, title, options), for the filter menus."""
    everything = summarise(list(data.papers), [], top=None)
    return {
        "tasks": _options((c.label, c.papers) for c in everything.top_tasks),
        "benchmarks": _options((c.label, c.papers) for c in everything.top_benchmarks),
        "types": _options((c.label, c.papers) for c in everything.contribution_types),
        "custom": [(field, data.titles.get(field, field),
                    _options((c.label, c.papers) for c in counts))
                   for field, counts in everything.custom],
    }


def _short(version: str | None, size: int = 12) -> str:
    if not version:
        return "—"
    return version.removeprefix("sha256:")[:size]


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.4g}"


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["short"] = _short
    env.filters["number"] = _number
    env.filters["basename"] = lambda path: Path(str(path)).name
    return env


def map_data(data: ReportData) -> dict[str, Any] | None:
    """What map.js draws and ranks with; papers are named by their card's position."""
    topic_map = data.topic_map
    if topic_map is None:
        return None
    position = {card.paper_id: i for i, card in enumerate(data.papers)}
    return {
        "areas": [{"id": a.area_id, "label": a.label, "size": a.size} for a in topic_map.areas],
        "points": [[position[p.paper_id], round(p.x, 4), round(p.y, 4), p.area_id]
                   for p in topic_map.points.values() if p.paper_id in position],
        "neighbours": [[[position[o], c] for o, c in topic_map.neighbours.get(card.paper_id, ())
                        if o in position] for card in data.papers],
        "openings": [_opening(card.text) for card in data.papers],
    }


def _opening(text: str, words: int = 18) -> str:
    split = text.split()
    return " ".join(split[:words]) + (" …" if len(split) > words else "")


def _similar_cards(data: ReportData) -> Callable[[PaperCard], list[tuple[int, str, float]]]:
    """(card number, headline, cosine) of a card's nearest papers, for its card."""
    number = {card.paper_id: (i + 1, card.headline) for i, card in enumerate(data.papers)}
    neighbours = data.topic_map.neighbours if data.topic_map else {}

    def similar(card: PaperCard) -> list[tuple[int, str, float]]:
        return [(*number[other], cosine) for other, cosine in
                neighbours.get(card.paper_id, ())[:SIMILAR_ON_CARD] if other in number]
    return similar


def _area_of(data: ReportData) -> Callable[[PaperCard], str]:
    points = data.topic_map.points if data.topic_map else {}

    def area(card: PaperCard) -> str:
        point = points.get(card.paper_id)
        return "" if point is None else str(point.area_id)
    return area


# Cards drawn when the page opens, and cards per page drawn after them.
FIRST_PAGE = 200
PAGE_SIZE = 500


def render_html(data: ReportData, *, first_page: int = FIRST_PAGE,
                page_size: int = PAGE_SIZE) -> str:
    """The whole page as a string: the first ``first_page`` cards drawn, the others in
    inert <template> pages of ``page_size`` that the page draws as the reader scrolls,
    filters or searches (a conference's 6,000 cards would take the browser half a
    minute to lay out at once)."""
    template = _environment().get_template("report.html.j2")
    mapped = map_data(data)
    return template.render(
        first_page=max(1, first_page),
        page_size=max(1, page_size),
        topic_map=data.topic_map,
        map_json=script_json(mapped) if mapped else None,
        map_script=_inline_script(ASSETS / "map.js"),
        similar_of=_similar_cards(data),
        area_of=_area_of(data),
        data=data,
        overview=data.overview,
        fields=data.fields,
        field_titles=data.titles,
        field_descriptions=data.descriptions,
        abstract_html=abstract_html,
        card_filters=card_filters,
        filter_options=_filter_options(data),
        chart_json=script_json(chart_data(data)),
        style=Markup(field_css() + (ASSETS / "report.css").read_text(encoding="utf-8")),
        script=_inline_script(ASSETS / "report.js"),
        chart_js=_inline_script(CHART_JS),
        chart_js_version=chart_js_version(),
        total_tokens=sum(r.counts.prompt_tokens + r.counts.completion_tokens
                         for r in data.overview.runs),
        total_cost=_total_cost(data),
        all_local=all(run.kind == "local" for run in data.overview.runs),
    )


def _total_cost(data: ReportData) -> float | None:
    costs = [run.cost_usd(data.price) for run in data.overview.runs]
    if any(cost is None for cost in costs):
        return None
    return sum(cost for cost in costs if cost is not None)


@dataclass(frozen=True)
class WrittenReport:
    path: Path
    bytes: int
    papers: int
    seconds: float


def write_report(db_path: str | Path, out: str | Path, *, price: Price | None = None,
                 top: int = 10, first_page: int = FIRST_PAGE,
                 page_size: int = PAGE_SIZE) -> WrittenReport:
    """Read the warehouse (read-only) and write the report to ``out``."""
    started = time.perf_counter()
    data = load_report(db_path, top=top, price=price)
    page = render_html(data, first_page=first_page, page_size=page_size).encode("utf-8")
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(page)
        partial.replace(path)
    except OSError as error:
        raise ReportError(f"cannot write the report to {path}: {error}") from error
    return WrittenReport(path, len(page), len(data.papers), time.perf_counter() - started)
