"""The conference-wide check of `introduced`, over a whole warehouse (issue 26).

Every benchmark the data marks introduced is looked up in the other abstracts of its
paper's collection (extract/domain/rules/used_elsewhere.py decides). A benchmark other
papers name and whose own sentence has no 'we introduce / build' cue is marked not
introduced, as a correction with its reason (warehouse/introductions.py): auditable,
listed by `papersift introductions`, undone in `papersift serve`. `papersift run` runs
the check after every run; it is cheap (one index of words per collection) and idempotent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from papersift.extract.domain.rules.used_elsewhere import MentionIndex, Verdict, judge
from papersift.warehouse import introductions as store
from papersift.warehouse.corrections import CorrectionError
from papersift.warehouse.repository import Repository, open_repository

log = logging.getLogger(__name__)


@dataclass
class IntroductionCheck:
    """What one check found: the introduced benchmarks it looked at, the ones it marked
    not introduced (paper id, verdict), and the ones left alone because a person had
    corrected them."""

    checked: int = 0
    marked: list[tuple[str, Verdict]] = field(default_factory=list)
    kept_against_users: int = 0
    left_to_people: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # paper id, why


def check_repository(repo: Repository, apply: bool = True) -> IntroductionCheck:
    """Run the check on an open warehouse; ``apply=False`` decides without writing."""
    items = repo.run(store.introduced_benchmarks)
    result = IntroductionCheck()
    if not items:
        return result
    texts = repo.run(store.collection_texts, sorted({item["collection"] for item in items}))
    indexes = {name: MentionIndex(by_paper) for name, by_paper in texts.items()}
    for item in items:
        result.checked += 1
        index = indexes.get(item["collection"])
        if index is None:
            continue
        users = index.mentions(item["name"], exclude=(item["paper_id"],))
        verdict = judge(item["name"], item["evidence"], users)
        if verdict.keep:
            result.kept_against_users += bool(users)
            continue
        if any(reviewer != store.REVIEWER for reviewer in item["reviewers"]):
            result.left_to_people += 1
            continue
        if apply:
            try:
                repo.run(store.mark_not_introduced, item["paper_id"], item["item_key"],
                         verdict.reason)
            except CorrectionError as error:  # one item never stops the check
                result.failed.append((item["paper_id"], f"{item['name']}: {error}"))
                continue
        result.marked.append((item["paper_id"], verdict))
    return result


def check_introductions(db: Path, apply: bool = True) -> IntroductionCheck:
    """Open the warehouse at ``db`` and run the check on it."""
    with open_repository(db, read_only=not apply) as repo:
        return check_repository(repo, apply)


def listed_verdicts(db: Path) -> list[dict[str, object]]:
    """Every verdict the check has written, newest first (see store.automatic_verdicts)."""
    with open_repository(db, read_only=True) as repo:
        return repo.run(store.automatic_verdicts)


def introductions_after_run(repo: Repository, notes: list[str]) -> IntroductionCheck | None:
    """The check a run ends with. The run's rows are stored already: a failure here is
    logged and noted, never turned into a failed run."""
    try:
        result = check_repository(repo)
    except Exception as error:
        log.warning("introduced flags not checked against the collection: %s", error)
        notes.append(f"introduced flags not checked against the collection: {error} "
                     "(run `papersift introductions`)")
        return None
    if result.failed:
        notes.append(f"{len(result.failed)} introduced flag(s) could not be corrected "
                     f"(first: {result.failed[0][1]})")
    if result.marked:
        notes.append(f"{len(result.marked)} benchmark(s) marked not introduced: other papers "
                     "of the same collection name them (`papersift introductions` lists "
                     "them with reasons)")
    return result
