"""Accounting for a run against the fake server with faults (sim/faults.py): every abstract is
extracted or failed with the reason its faults call for, no row is duplicated, every
request the server saw is stored as a call, waits honoured Retry-After.

Used by tests/test_faults.py (small run) and bench/faults.py (500+ abstracts).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from papersift.extract.runs.ingest_files import ingest
from papersift.testing.corpus import CORPUS
from papersift.testing.expected import expected_outcome
from papersift.testing.sim import SimEndpoint
from papersift.warehouse.repository import Repository, open_repository

# Keyed tables and their keys: a key stored twice is a duplicate.
KEYS = {
    "papers": "paper_id",
    "sources": "paper_id, file, position",
    "extractions": "extraction_id",
    "llm_cache": "cache_key",
    "run_papers": "run_id, paper_id",
    "extraction_contribution_types": "extraction_id, idx",
    "extraction_tasks": "extraction_id, idx",
    "extraction_methods": "extraction_id, idx",
    "extraction_benchmarks": "extraction_id, idx",
    "extraction_gains": "extraction_id, idx",
}


def variant_corpus(folder: Path, papers: int) -> list[str]:
    """Inputs holding ``papers`` distinct abstracts: the bundled corpus (with its own
    repeats) plus generated variants of its abstracts, and a few whitespace-only copies
    that must be stored once."""
    originals = [paper.text for paper in ingest([CORPUS]).papers]
    extra = max(0, papers - len(originals))
    lines = ["Faults 2026 Papers"]
    for index in range(extra):
        lines.append(f"{originals[index % len(originals)]} (variant {index})")
    for text in originals[:5]:
        lines.append("  " + text.replace(" ", "   ", 3))  # same abstract, other spacing
    folder.mkdir(parents=True, exist_ok=True)
    generated = folder / "variants.txt"
    generated.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    return [str(CORPUS), str(generated)]


@dataclass
class Accounting:
    """What one run did with its abstracts, checked against what the server served."""

    abstracts: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)  # "extracted", "failed: length"...
    mismatches: list[str] = field(default_factory=list)
    duplicates: dict[str, int] = field(default_factory=dict)
    requests_per_abstract: list[int] = field(default_factory=list)
    requests_served: int = 0
    calls_stored: int = 0
    faults_served: Counter[str] = field(default_factory=Counter)
    survived: Counter[str] = field(default_factory=Counter)  # faulted, still extracted
    retry_after: list[tuple[float, float]] = field(default_factory=list)  # (asked, gap)

    @property
    def retry_after_honoured(self) -> bool:
        return all(gap >= asked for asked, gap in self.retry_after)

    def problems(self) -> list[str]:
        """Everything that breaks 'nothing lost, nothing doubled'; empty when all is well."""
        found = list(self.mismatches)
        found += [f"{table}: {count} duplicate row(s)"
                  for table, count in self.duplicates.items() if count]
        accounted = sum(self.outcomes.values())
        if accounted != self.abstracts:
            found.append(f"{accounted} outcomes for {self.abstracts} abstracts")
        if self.calls_stored != self.requests_served:
            found.append(f"{self.calls_stored} calls stored for {self.requests_served} "
                         "requests served")
        if not self.retry_after_honoured:
            short = [f"{gap:.3f}s<{asked}s" for asked, gap in self.retry_after if gap < asked]
            found.append(f"Retry-After not honoured: {short[:5]}")
        return found

    def lines(self) -> list[str]:
        """A printable report."""
        attempts = self.requests_per_abstract or [0]
        out = [
            f"abstracts: {self.abstracts}, accounted for: {sum(self.outcomes.values())}",
            "outcomes: " + ", ".join(f"{name} {count}"
                                     for name, count in sorted(self.outcomes.items())),
            f"requests: {self.requests_served} served, {self.calls_stored} stored as calls; "
            f"per abstract mean {statistics.mean(attempts):.2f}, max {max(attempts)}",
            f"faults served: {sum(self.faults_served.values())} of {self.requests_served} "
            f"requests ({sum(self.faults_served.values()) / max(self.requests_served, 1):.1%}): "
            + ", ".join(f"{name} {count}" for name, count in sorted(self.faults_served.items())),
            "abstracts that met the fault and were still extracted: "
            + ", ".join(f"{name} {count}" for name, count in sorted(self.survived.items())),
            "duplicates: " + ", ".join(f"{table} {count}"
                                       for table, count in self.duplicates.items()),
        ]
        if self.retry_after:
            slack = [gap - asked for asked, gap in self.retry_after]
            out.append(f"Retry-After: {len(self.retry_after)} waits, honoured "
                       f"{sum(s >= 0 for s in slack)}/{len(slack)}, gap minus asked: "
                       f"min {min(slack):.3f}s, max {max(slack):.3f}s")
        out.append(f"mismatches with the faults served: {len(self.mismatches)}")
        return out


def duplicates(repo: Repository) -> dict[str, int]:
    """Duplicate keyed rows per table (0 everywhere in a healthy warehouse)."""
    found = {}
    for table, key in KEYS.items():
        row = repo.fetch_one(f"SELECT count(*) - count(DISTINCT ({key})) FROM {table}")
        assert row is not None
        found[table] = int(row[0])
    return found


def account(db: Path, server: SimEndpoint, run_id: str, *, max_attempts: int,
            max_reasks: int) -> Accounting:
    """Check run ``run_id`` in ``db`` against everything ``server`` served."""
    result = Accounting()
    with open_repository(db, read_only=True) as repo:
        rows = repo.fetch_all(
            "SELECT r.paper_id, r.outcome, e.lenient, f.reason FROM run_papers r "
            "LEFT JOIN extractions e USING (extraction_id) "
            "LEFT JOIN failures f ON f.run_id = r.run_id AND f.paper_id = r.paper_id "
            "WHERE r.run_id = ?", [run_id])
        count = repo.fetch_one("SELECT n_abstracts FROM runs WHERE run_id = ?", [run_id])
        # A connection that was never made is a call the server cannot have served (seen
        # when a loaded machine makes connect() slower than the tests' 0.3 s timeout).
        calls = repo.fetch_one("SELECT count(*) FROM calls WHERE run_id = ? AND NOT "
                               "coalesce(error LIKE 'Connect%', false)", [run_id])
        result.duplicates = duplicates(repo)
    assert count is not None and calls is not None
    result.abstracts = int(count[0])
    result.calls_stored = int(calls[0])
    served = server.faults_by_paper()
    result.requests_served = sum(len(faults) for faults in served.values())
    seen: set[str] = set()
    for paper_id, outcome, lenient, reason in rows:
        if paper_id in seen:
            result.mismatches.append(f"{paper_id}: more than one outcome row")
            continue
        seen.add(paper_id)
        label = outcome if outcome != "failed" else f"failed: {reason}"
        result.outcomes[label + (" (lenient)" if lenient else "")] += 1
        faults = served.get(paper_id, [])
        result.requests_per_abstract.append(len(faults))
        result.faults_served.update(f for f in faults if f is not None)
        if outcome == "cached":
            if faults:
                result.mismatches.append(f"{paper_id}: cached, yet requested {len(faults)}x")
            continue
        expected = expected_outcome(faults, max_attempts=max_attempts, max_reasks=max_reasks)
        got = (outcome, reason if outcome == "failed" else None, bool(lenient))
        want = (expected.outcome, expected.reason, expected.lenient)
        if got != want or expected.requests != len(faults):
            result.mismatches.append(
                f"{paper_id}: stored {got}, faults {faults} call for {want} "
                f"after {expected.requests} request(s)")
        if outcome == "extracted":
            result.survived.update({f for f in faults if f is not None})
    extra = set(served) - seen
    result.mismatches += [f"{paper_id}: requested but not in the run" for paper_id in extra]
    result.retry_after = server.retry_after_gaps()
    return result


def integrity(repo: Repository) -> list[str]:
    """Cross-table consistency of a warehouse; empty when every row has its partners.

    Checked after a kill: a batch is one transaction, so an extraction without its item
    rows, a cache entry without its extraction or an outcome pointing at nothing would
    mean a torn write.
    """
    checks = {
        "extractions whose item rows are missing or extra": """
            SELECT count(*) FROM extractions e WHERE e.items != (
                (SELECT count(*) FROM extraction_tasks t WHERE t.extraction_id = e.extraction_id)
              + (SELECT count(*) FROM extraction_methods t
                 WHERE t.extraction_id = e.extraction_id)
              + (SELECT count(*) FROM extraction_benchmarks t
                 WHERE t.extraction_id = e.extraction_id)
              + (SELECT count(*) FROM extraction_gains t WHERE t.extraction_id = e.extraction_id))
            """,
        "extractions without contribution types": """
            SELECT count(*) FROM extractions e WHERE NOT EXISTS (
                SELECT 1 FROM extraction_contribution_types c
                WHERE c.extraction_id = e.extraction_id)""",
        "cache entries without an extraction": """
            SELECT count(*) FROM llm_cache c WHERE NOT EXISTS (
                SELECT 1 FROM extractions e WHERE e.cache_key = c.cache_key)""",
        "outcomes pointing at no extraction": """
            SELECT count(*) FROM run_papers r WHERE r.outcome != 'failed' AND NOT EXISTS (
                SELECT 1 FROM extractions e WHERE e.extraction_id = r.extraction_id)""",
        "failed outcomes without a failure row": """
            SELECT count(*) FROM run_papers r WHERE r.outcome = 'failed' AND NOT EXISTS (
                SELECT 1 FROM failures f WHERE f.run_id = r.run_id AND f.paper_id = r.paper_id)""",
        "outcomes of papers never stored": """
            SELECT count(*) FROM run_papers r WHERE NOT EXISTS (
                SELECT 1 FROM papers p WHERE p.paper_id = r.paper_id)""",
        "papers without a source": """
            SELECT count(*) FROM papers p WHERE NOT EXISTS (
                SELECT 1 FROM sources s WHERE s.paper_id = p.paper_id)""",
        "finished runs whose counts do not add up": """
            SELECT count(*) FROM runs WHERE status = 'finished'
              AND n_abstracts != n_extracted + n_cached + n_failed""",
        "finished runs with another number of outcome rows": """
            SELECT count(*) FROM runs u WHERE status = 'finished' AND n_abstracts != (
                SELECT count(*) FROM run_papers r WHERE r.run_id = u.run_id)""",
    }
    found = [f"{table}: {count} duplicate row(s)"
             for table, count in duplicates(repo).items() if count]
    for label, sql in checks.items():
        row = repo.fetch_one(sql)
        if row is not None and row[0]:
            found.append(f"{label}: {row[0]}")
    return found
