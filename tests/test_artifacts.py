"""The built-in field "artifacts released": found by code in the abstract, stored, exported."""

from __future__ import annotations

from pathlib import Path

import pytest

from papersift.extract.domain.rules.artifacts import detect_artifacts
from papersift.warehouse.query import run_sql
from papersift.warehouse.report import load_report


@pytest.mark.parametrize(("text", "expected"), [
    ("We release our code and models at https://github.com/x/y.",
     [("code", "https://github.com/x/y"), ("model", "https://github.com/x/y")]),
    ("Our code and data are available: https://anonymous.4open.science/r/Flash-014A/.",
     [("code", "https://anonymous.4open.science/r/Flash-014A/"),
      ("data", "https://anonymous.4open.science/r/Flash-014A/")]),
    ("The complete code and evaluation datasets will be made publicly available upon "
     "acceptance.", [("code", None), ("data", None)]),
    ("We also open-source the weights of our 7B model.", [("model", None)]),
    ("Implementation: github.com/abc/def.", [("code", "github.com/abc/def")]),
    # a link's path does not name what is released
    ("For transparency, our source code is available at: https://x.org/r/rec-benchmark-07",
     [("code", "https://x.org/r/rec-benchmark-07")]),
])
def test_release_sentences_give_their_artifacts(text: str,
                                                expected: list[tuple[str, str | None]]) -> None:
    found = detect_artifacts(text)
    assert [(a.kind, a.url) for a in found] == expected
    for artifact in found:
        low, high = artifact.sentence
        assert text[low:high] == artifact.evidence
        mention = text[artifact.mention[0]:artifact.mention[1]]
        assert mention == (artifact.url or mention) and mention in artifact.evidence


@pytest.mark.parametrize("text", [
    "We evaluate on publicly available datasets and open-source models.",
    "The model is available upon request.",
    "See https://arxiv.org/abs/2401.00001 for the proofs.",
    "We provide theoretical evidence that the model converges.",
    "We propose a model. It improves accuracy by 3%.",
])
def test_no_release_no_artifact(text: str) -> None:
    assert detect_artifacts(text) == []


def test_the_corpus_artifacts_are_stored_with_offsets_and_shown(corpus_db: Path) -> None:
    rows = run_sql(corpus_db, """
        SELECT p.text, a.kind, a.url, a.evidence, a.char_start, a.char_end,
               a.mention_start, a.mention_end, a.alignment
        FROM artifacts a JOIN papers p USING (paper_id) ORDER BY a.paper_id, a.idx""").rows
    assert len(rows) >= 5
    for text, kind, url, evidence, start, end, m_start, m_end, alignment in rows:
        assert kind in ("code", "data", "model", "benchmark") and alignment == "exact"
        assert text[start:end] == evidence and start <= m_start < m_end <= end
        if url is not None:
            assert text[m_start:m_end] == url
    papers = run_sql(corpus_db, "SELECT p.text, count(*) FROM artifacts "
                                "JOIN papers p USING (paper_id) GROUP BY p.text").rows
    for text, count in papers:  # what is stored is what the detector finds
        assert count == len(detect_artifacts(text))
    # extractions.items still counts what the model proposed: artifacts are separate
    items = run_sql(corpus_db, "SELECT sum(items) FROM latest_extractions").rows[0][0]
    drafted = run_sql(corpus_db, "SELECT (SELECT count(*) FROM tasks) + (SELECT count(*) "
                                 "FROM methods) + (SELECT count(*) FROM benchmarks) + "
                                 "(SELECT count(*) FROM gains)").rows[0][0]
    assert items == drafted
    overview = load_report(corpus_db).overview
    released = {count.label: count.papers for count in overview.artifacts}
    by_kind = dict(run_sql(corpus_db, "SELECT kind, count(DISTINCT paper_id) FROM artifacts "
                                      "GROUP BY kind").rows)
    assert released == by_kind and released["code"] >= 3


def test_artifacts_reach_the_wide_paper_table_and_a_search_filter(corpus_db: Path) -> None:
    """The registry's summary column and search filter (issue 27): papers.csv and the
    workbook read paper_summary; `search --artifact` narrows to papers releasing one."""
    import duckdb

    from papersift.warehouse.search import SearchFilters

    rows = run_sql(corpus_db, "SELECT s.artifacts, list(a.kind ORDER BY a.idx), "
                              "list(a.url ORDER BY a.idx) FROM paper_summary s "
                              "JOIN artifacts a USING (paper_id) GROUP BY ALL").rows
    assert rows
    for summary, kinds, urls in rows:
        for kind, url in zip(kinds, urls, strict=True):  # 'code https://...' per item
            assert (f"{kind} {url}" if url else kind) in summary
    releasing = {r[0] for r in run_sql(corpus_db, "SELECT DISTINCT paper_id FROM artifacts "
                                                  "WHERE kind ILIKE '%code%'").rows}
    where, params = SearchFilters.of(artifact="code").where()
    with duckdb.connect(str(corpus_db), read_only=True) as con:
        found = {r[0] for r in con.execute(f"SELECT p.paper_id FROM papers p WHERE {where}",
                                           params).fetchall()}
    assert found == releasing and len(found) >= 3
