"""Conference-wide evidence about who introduced a benchmark (issue 26).

One abstract's wording can make a well-known dataset look new ("we build on YouCook2 and
introduce ..."). The other papers of the same collection are evidence the single abstract
does not have: when other abstracts of the same conference name the dataset too, this
paper most likely did not create it. A paper whose own words say it creates the dataset
("we introduce X, a new benchmark") keeps its claim against that evidence, since a
benchmark released as a preprint is often used by other papers of the same conference.

Pure code over texts: the warehouse reads the collections, the runs layer writes what
this decides as an audited correction a person can undo.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_WORD = re.compile(r"[A-Za-z0-9]+")
# A name worth looking for elsewhere: it has a capital or a digit, and is not a plain
# dictionary-looking word ('Dataset', 'Bench' alone would match everything).
_NAMED = re.compile(r"[A-Z0-9]")
MIN_NAME_CHARS = 3
# The paper's own creation cue, right before the name: 'we introduce X', 'we construct a
# new benchmark, X', 'our new X' (no 'on', 'from', 'using'... between: 'we build on X').
_SOURCE = r"on|from|using|upon|of|over|in|with|based|existing|and"  # 'our method on X'
_CUE_BEFORE = re.compile(
    r"(\b(we|our|this\s+(?:paper|work))\b[^.;]{0,60}?\b(introduc|present|propos|construct|"
    r"build|built|creat|collect|curat|releas|develop|design|contribut|establish)\w*"
    rf"|\b(our|new|novel)(\s+(?!(?:{_SOURCE})\b)[\w-]+){{0,3}})"
    rf"(?:(?!\b(?:{_SOURCE}|extend\w*)\b)[^.;]){{0,50}}$",
    re.I)
# ... or right after it: 'X, a new benchmark', 'X (ours), the first dataset'
_CUE_AFTER = re.compile(r"^\s*(\([^)]{0,40}\))?\s*[,:]?\s*(which\s+is\s+)?(a|an|the)\s+"
                        r"(new|novel|first|newly|large-scale|challenging|comprehensive)\b",
                        re.I)


def own_cue(name: str, evidence: str) -> bool:
    """Whether the sentence itself says the paper creates ``name``."""
    at = evidence.find(name)
    if at < 0:
        return False
    return bool(_CUE_BEFORE.search(evidence[:at])
                or _CUE_AFTER.match(evidence[at + len(name):]))


@dataclass(frozen=True)
class Verdict:
    """Whether a benchmark the extraction marks introduced stays so, and why."""

    name: str
    users: tuple[str, ...]  # the other papers of the collection that name it
    strong_cue: bool  # the paper's own sentence says 'we introduce / build ... X'
    keep: bool

    @property
    def reason(self) -> str:
        """One line, short enough for a correction's note (ids shortened, three shown)."""
        shown = ", ".join(_short(user) for user in self.users[:3]) + (
            ", ..." if len(self.users) > 3 else "")
        name = self.name if len(self.name) <= 80 else self.name[:77] + "..."
        if self.keep:
            return (f"kept as introduced: its own sentence says so, though {len(self.users)} "
                    f"other paper(s) of the collection name it ({shown})")
        return (f"not introduced by this paper: {len(self.users)} other paper(s) of the "
                f"same collection name {name!r} too ({shown}), and its sentence has "
                "no 'we introduce / build' cue")


def _short(paper_id: str) -> str:
    """'sha256:0123456789ab...' as the 12 characters `papersift similar` accepts."""
    return paper_id.removeprefix("sha256:")[:12]


class MentionIndex:
    """Which abstracts of a collection mention a name, as a whole word, case-sensitively."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self._texts = dict(texts)
        self._postings: dict[str, set[str]] = defaultdict(set)
        for paper_id, text in self._texts.items():
            for word in set(_WORD.findall(text)):
                self._postings[word].add(paper_id)

    def text(self, paper_id: str) -> str:
        return self._texts[paper_id]

    def mentions(self, name: str, exclude: Iterable[str] = ()) -> tuple[str, ...]:
        """The papers (other than ``exclude``) whose abstract contains ``name``."""
        words = _WORD.findall(name)
        if not words or len(name.strip()) < MIN_NAME_CHARS or not _NAMED.search(name):
            return ()
        candidates = set.intersection(*(self._postings.get(w, set()) for w in words))
        candidates -= set(exclude)
        pattern = re.compile(r"(?<![\w-])" + re.escape(name.strip()) + r"(?![\w-])")
        return tuple(sorted(p for p in candidates if pattern.search(self._texts[p])))


def judge(name: str, evidence: str, users: tuple[str, ...]) -> Verdict:
    """A benchmark marked introduced, given the other papers that name it: it stays
    introduced unless others name it and its own sentence has no strong creation cue."""
    strong = own_cue(name, evidence)
    return Verdict(name=name, users=users, strong_cue=strong, keep=strong or not users)
