"""The review report's data and page, on the corpus replayed from the real recording and
on a hand-written hostile input (markup-looking HTML, overlapping quotes, a Chinese title)."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.interface.cli import cli
from papersift.report.render import CHART_JS, chart_js_version, evidence_spans, render_html
from papersift.testing.mock import ScriptedServer, ok
from papersift.warehouse.query import run_sql
from papersift.warehouse.report import Price, RunInfo, load_report, normalise_name
from papersift.warehouse.store import RunCounts


def _scalar(db: Path, sql: str) -> Any:
    return run_sql(db, sql).rows[0][0]


class Page(HTMLParser):
    """Hand-written reader of the rendered page: script and other tags, and per card the
    abstract's segments (they never nest, so one level of <span> is enough)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.scripts: list[str] = []
        self.abstracts: dict[str, list[tuple[str, dict[str, str]]]] = {}
        self.collections: list[str] = []
        self.span_balance = 0
        self._card = ""
        self._in_abstract = False
        self._span: dict[str, str] | None = None
        self._in_script = False
        self._in_collection = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        self.tags.append(tag)
        classes = attributes.get("class", "").split()
        if tag == "article":
            self._card = attributes["data-paper-id"]
            self.abstracts[self._card] = []
        elif tag == "p" and "abstract" in classes:
            self._in_abstract = True
        elif tag == "span" and self._in_abstract:
            assert self._span is None, "abstract segments must not nest"
            self._span = attributes
            self.span_balance += 1
        elif tag == "span" and "collection" in classes:
            self._in_collection = True
            self.collections.append("")
        elif tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self._in_abstract = False
        elif tag == "span" and self._in_abstract:
            self._span = None
            self.span_balance -= 1
        elif tag == "span":
            self._in_collection = False
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data
        elif self._in_abstract:
            self.abstracts[self._card].append((data, dict(self._span or {})))
        elif self._in_collection:
            self.collections[-1] += data


def _parse(page: str) -> Page:
    parser = Page()
    parser.feed(page)
    parser.close()
    return parser


# -- the corpus warehouse --------------------------------------------------------------


def test_overview_counts_match_sql(corpus_db: Path) -> None:
    overview = load_report(corpus_db).overview
    assert overview.papers == _scalar(corpus_db, "SELECT count(*) FROM papers") == 63
    assert overview.extracted == _scalar(corpus_db, "SELECT count(*) FROM latest_extractions")
    assert overview.occurrences == _scalar(corpus_db, "SELECT count(*) FROM sources") == 76
    assert overview.lenient == _scalar(
        corpus_db, "SELECT count(*) FROM latest_extractions WHERE lenient")
    types = run_sql(corpus_db, "SELECT type, count(DISTINCT paper_id) FROM contribution_types "
                               "GROUP BY 1 ORDER BY 2 DESC, 1").rows
    assert [(c.label, c.papers) for c in overview.contribution_types] == types
    collections = run_sql(corpus_db, "SELECT collection, count(DISTINCT paper_id) FROM sources "
                                     "GROUP BY 1 ORDER BY 2 DESC, 1").rows
    assert [(c.label, c.papers) for c in overview.collections] == collections
    assert "NeurIPS 2026 论文列表" in {c.label for c in overview.collections}

    # the overview counts by canonical entity (issue 15), as the saved queries do
    def ranking(view: str, where: str = "TRUE", limit: int = 10) -> list[tuple[str, int]]:
        rows = run_sql(corpus_db, f"""
            SELECT lower(regexp_replace(trim(canonical), '\\s+', ' ', 'g')) AS k,
                   count(DISTINCT paper_id) AS n
            FROM {view} WHERE {where} GROUP BY 1 ORDER BY n DESC, k LIMIT {limit}""").rows
        return [(k, n) for k, n in rows]

    assert [(normalise_name(c.label), c.papers) for c in overview.top_tasks] == ranking("tasks")
    assert [(normalise_name(c.label), c.papers)
            for c in overview.top_benchmarks] == ranking("benchmarks")
    assert [(normalise_name(c.label), c.papers)
            for c in overview.new_benchmarks] == ranking("benchmarks", "introduced", 1000)
    assert overview.top_tasks[0].papers > 1  # a real ranking, not all ties

    items = "SELECT alignment FROM {0}"
    every = " UNION ALL ".join(items.format(v) for v in ("tasks", "methods", "benchmarks",
                                                         "gains"))
    assert overview.items == _scalar(corpus_db, f"SELECT count(*) FROM ({every})") > 150
    assert overview.items_not_located == _scalar(
        corpus_db, f"SELECT count(*) FROM ({every}) WHERE alignment = 'none'")
    # schema v2 reads every stored number from the abstract itself: none can be unverified
    assert overview.numbers_unverified == _scalar(
        corpus_db, "SELECT count(*) FROM gains WHERE value IS NOT NULL "
                   "AND value_in_evidence = false") == 0

    gains = run_sql(corpus_db, """
        SELECT lower(regexp_replace(trim(canonical_metric), '\\s+', ' ', 'g')), coalesce(unit, ''),
               count(*), count(value), count(*) FILTER (WHERE value_in_evidence)
        FROM gains GROUP BY 1, 2""").rows
    shown = {(normalise_name(g.metric), g.unit or ""): (g.claims, g.with_value, g.value_in_quote)
             for g in overview.gains}
    assert shown == {(m, u): (c, v, q) for m, u, c, v, q in gains}

    (run,) = overview.runs
    stored = run_sql(corpus_db, "SELECT run_id, prompt_tokens, completion_tokens, "
                                "(SELECT count(*) FROM calls) FROM runs").rows
    counts = run.counts
    assert [(run.run_id, counts.prompt_tokens, counts.completion_tokens, run.requests)] == stored
    assert run.kind == "local"
    assert run.reasks == _scalar(corpus_db, "SELECT count(DISTINCT paper_id) FROM calls "
                                            "WHERE ask > 1")
    (versions,) = overview.versions
    assert (versions.model, versions.papers) == ("qwen2.5-coder-1.5b", 63)
    assert versions.schema_version == _scalar(corpus_db, "SELECT schema_version FROM runs")


def test_cards_carry_the_stored_offsets(corpus_db: Path) -> None:
    cards = load_report(corpus_db).papers
    from_cards = {(card.paper_id, item.field, item.idx, item.char_start, item.char_end)
                  for card in cards for item in card.items if item.located}
    # a card highlights the item itself (its mention) where code found one
    span = "coalesce(mention_start, char_start), coalesce(mention_end, char_end)"
    stored = set(run_sql(corpus_db, f"""
        SELECT paper_id, 'task', idx, {span} FROM tasks WHERE alignment != 'none'
        UNION ALL SELECT paper_id, 'method', idx, {span} FROM methods
            WHERE alignment != 'none'
        UNION ALL SELECT paper_id, 'benchmark', idx, {span} FROM benchmarks
            WHERE alignment != 'none'
        UNION ALL SELECT paper_id, 'gain', idx, {span} FROM gains
            WHERE alignment != 'none'
        UNION ALL SELECT paper_id, 'artifact', idx, {span} FROM artifacts
            WHERE alignment != 'none'""").rows)
    assert from_cards == stored and len(stored) > 150
    exact = [(card.text, item) for card in cards for item in card.items
             if item.alignment == "exact"]
    assert exact
    for text, item in exact:
        assert item.char_start is not None and item.char_end is not None
        assert text[item.char_start:item.char_end] in item.evidence  # the mention, quoted


def test_every_span_is_highlighted_exactly_on_its_offsets(corpus_db: Path) -> None:
    data = load_report(corpus_db)
    page = _parse(render_html(data))
    assert page.span_balance == 0
    checked = 0
    for card in data.papers:
        shown = page.abstracts[card.paper_id]
        assert "".join(text for text, _ in shown) == card.text
        for span in evidence_spans(card):
            covering = [(text, attrs) for text, attrs in shown
                        if span.key in attrs.get("data-items", "").split()]
            assert "".join(text for text, _ in covering) == card.text[span.start:span.end]
            starts = [int(attrs["data-start"]) for _, attrs in covering]
            ends = [int(attrs["data-end"]) for _, attrs in covering]
            assert starts[0] == span.start and ends[-1] == span.end
            assert starts[1:] == ends[:-1], "a span's segments must be contiguous"
            assert all(f"hl-{span.field}" in attrs["class"] or "hl-multi" in attrs["class"]
                       for _, attrs in covering)
            checked += 1
    assert checked > 150
    # Items that code could not find are listed as flagged, never highlighted.
    flagged = sum(len([i for i in card.items if not i.located]) for card in data.papers)
    assert flagged == _scalar(corpus_db, "SELECT count(*) FROM tasks WHERE alignment = 'none'")
    assert render_html(data).count('<span class="flag"') >= flagged


def test_markup_is_styled_with_its_delimiters_hidden(corpus_db: Path) -> None:
    data = load_report(corpus_db)
    (card,) = [c for c in data.papers if "We propose PreDiff (**Pre**ference" in c.text]
    shown = _parse(render_html(data)).abstracts[card.paper_id]
    visible = "".join(text for text, attrs in shown if "mk" not in attrs.get("class", ""))
    assert "We propose PreDiff (Preference Diffusion)" in visible
    bold = [text for text, attrs in shown if "st-bold" in attrs.get("class", "")]
    assert bold[:2] == ["Pre", "Diff"]


def test_charts_and_filters_get_the_overview_numbers(corpus_db: Path) -> None:
    data = load_report(corpus_db)
    page = _parse(render_html(data))
    blob = json.loads(next(s for s in page.scripts if s.startswith('{"contributionTypes"')))
    top_type = run_sql(corpus_db, "SELECT type, count(DISTINCT paper_id) FROM contribution_types "
                                  "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1").rows[0]
    assert blob["contributionTypes"][0][:2] == [top_type[0], top_type[1]]
    assert [row[1] for row in blob["tasks"]] == [c.papers for c in data.overview.top_tasks]
    gains = blob["gains"]
    assert len(gains["labels"]) == min(15, len(data.overview.gains))
    for i, group in enumerate(data.overview.gains[:15]):
        assert gains["inQuote"][i] + gains["notInQuote"][i] + gains["noNumber"][i] == group.claims


def test_the_vendored_chart_library_is_the_one_documented() -> None:
    readme = (CHART_JS.parent / "README.md").read_text(encoding="utf-8")
    digest = hashlib.sha256(CHART_JS.read_bytes()).hexdigest()
    assert digest in readme
    assert f"**{chart_js_version()}**" in readme
    assert (CHART_JS.parent / "chart.js.LICENSE.md").read_text(encoding="utf-8").startswith(
        "The MIT License")


def test_report_command_writes_one_self_contained_file(corpus_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "report.html"
    result = CliRunner().invoke(cli, ["report", "--db", str(corpus_db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "63 papers" in result.output
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # Nothing is fetched: no external script, style, image or font.
    assert not re.search(r"""<(script|img|link|iframe)[^>]*\s(src|href)=""", page)
    assert "url(" not in page.split("<script>")[0]
    assert not list(out.parent.glob("*.partial"))


def test_report_command_names_a_missing_warehouse(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", "--db", str(tmp_path / "none.duckdb"),
                                      "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 1
    assert "no warehouse at" in result.output and "none.duckdb" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "r.html").exists()


def test_run_cost_is_zero_locally_priced_remotely_and_unknown_otherwise() -> None:
    def run(kind: str) -> RunInfo:
        return RunInfo(run_id="r", started=datetime(2026, 1, 1), finished=None,
                       status="finished", endpoint=None, kind=kind, model="m", mode="json",
                       prompt_version=None, schema_version=None, papersift_version=None,
                       counts=RunCounts(n_abstracts=1, n_extracted=1, n_cached=0,
                                        n_failed=0, prompt_tokens=2_000_000,
                                        completion_tokens=500_000),
                       requests=1, reasks=0)

    price = Price(prompt_per_million=0.15, completion_per_million=0.60)
    assert run("local").cost_usd(price) == 0.0
    assert run("openai").cost_usd(price) == pytest.approx(0.30 + 0.30)
    assert run("compatible").cost_usd(None) is None


# -- hostile input ---------------------------------------------------------------------

HOSTILE_TITLE = '漏洞合集 <b>bold?</b> & "quotes"'
HOSTILE = (
    'We present <script>alert("x")</script> **Bold <i>Tool</i>** for $a<b$ & co. '
    "It beats the baseline by 12.5% on </textarea><img src=x onerror=alert(1)> data."
)
OTHER = "A second abstract about \\textbf{Nested \\emph{markup}} and snake_case_names."


def _hostile_answer(request: Any) -> Any:
    body = json.loads(request.content)
    if "second abstract" in body["messages"][-1]["content"]:
        return ok({"tasks": ["markup"], "methods": [], "benchmarks": [], "gains": [],
                   "types": ["method"]})
    return ok({
        # The first task shares words with the first sentence (found loosely, so its
        # highlight overlaps the method's); the second is nowhere (flagged).
        "tasks": ["</script><script>alert(2)</script>", "protein folding"],
        "methods": ["<i>Tool</i>"],
        "benchmarks": [{"name": "Nowhere", "new": True}],  # not in the text: dropped
        "gains": [{"value": "12.5", "metric": "accuracy", "vs": "the baseline"}],
        "types": ["method", "system"],
    })


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    source = tmp_path / "hostile.txt"
    source.write_text(f"{HOSTILE_TITLE}\n\n{HOSTILE}\n\n{OTHER}\n", encoding="utf-8")
    db = tmp_path / "hostile.duckdb"
    # Hand-written answers (not a recording): one per abstract, no re-asks.
    server = ScriptedServer([_hostile_answer, _hostile_answer])
    run_inputs([str(source)], RunSettings(db=db, max_reasks=0), transport=server.transport(),
               endpoint=Endpoint(base_url="http://fake.test/v1", model="fake", mode="json"))
    return db


def test_hostile_text_is_shown_as_text_never_run(hostile_db: Path) -> None:
    data = load_report(hostile_db)
    hostile = next(card for card in data.papers if card.text == HOSTILE)
    assert {item.field for item in hostile.items} == {"task", "method", "gain"}
    html = render_html(data)
    page = _parse(html)
    # Only the page's own three scripts; no tag from the data became an element.
    assert page.tags.count("script") == 3
    assert not {"img", "i", "textarea"} & set(page.tags)
    assert page.span_balance == 0
    # The abstract reads back character for character, and the title intact.
    assert "".join(text for text, _ in page.abstracts[hostile.paper_id]) == HOSTILE
    assert HOSTILE_TITLE in page.collections
    # The chart data survives the trip through the script element unchanged.
    blob = next(s for s in page.scripts if s.startswith('{"contributionTypes"'))
    assert "</" not in blob and "<" not in blob
    assert "</script><script>alert(2)</script>" in [t[0] for t in json.loads(blob)["tasks"]]
    # The overlapping highlights both cover the shared characters, flat.
    shared = [attrs for text, attrs in page.abstracts[hostile.paper_id]
              if text == "<i>Tool</i>"]
    assert shared and set(shared[0]["data-items"].split()) == {"task-0", "method-0"}
    assert "hl-multi" in shared[0]["class"]
    assert shared[0]["title"] == "task: </script><script>alert(2)</script>; method: <i>Tool</i>"
    # The task code could not find is marked.
    assert "quote not found in the abstract" in html



def test_a_paper_without_extraction_gets_a_card_that_says_why(tmp_path: Path) -> None:
    from papersift.testing.mock import FakeModel

    source = tmp_path / "two.txt"
    source.write_text("Test 2026 Papers\n\nA short abstract that fits.\n\n" + "long " * 100,
                      encoding="utf-8")
    db = tmp_path / "two.duckdb"
    run_inputs([str(source)], RunSettings(db=db, max_chars=200),
               transport=FakeModel().transport(),
               endpoint=Endpoint(base_url="http://fake.test/v1", model="fake", mode="json"))
    data = load_report(db)
    assert (data.overview.papers, data.overview.extracted) == (2, 1)
    (missing,) = [card for card in data.papers if card.extraction is None]
    assert missing.failure is not None and "too_long" in missing.failure
    html = render_html(data)
    assert "not extracted: ingest · too_long" in html
    assert "".join(t for t, _ in _parse(html).abstracts[missing.paper_id]) == missing.text


def test_the_overview_lists_the_papers_that_state_the_most_results(corpus_db: Path) -> None:
    """A conference overview names the papers with the most claimed numbers (issue 25)."""
    from papersift.warehouse.report import load_report

    data = load_report(corpus_db)
    ranked = data.overview.most_results
    counts = {card.headline: sum(1 for g in card.of("gain") if g.value is not None)
              for card in data.papers}
    assert ranked and len(ranked) <= 10
    assert [c.papers for c in ranked] == sorted((c.papers for c in ranked), reverse=True)
    assert ranked[0].papers == max(counts.values())
    assert all(counts[c.label] == c.papers for c in ranked)
    page = render_html(data)
    assert "Papers that state the most results" in page and ranked[0].label in page
