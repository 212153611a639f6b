"""The curated alias tables (shipped TOML files plus the user's own) and the metric
vocabulary with each metric's direction and kind."""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from papersift.errors import PapersiftError
from papersift.extract.domain.entities.normalise import KINDS, clean, name_key

HERE = Path(__file__).parent
SHIPPED = (HERE / "aliases.toml", HERE / "metrics.toml")
USER_ALIASES_ENV = "PAPERSIFT_ALIASES"
DIRECTIONS = ("higher", "lower", "either")
METRIC_KINDS = ("score", "improvement", "efficiency")


class VocabularyError(PapersiftError, ValueError):
    """An alias file cannot be read or contradicts itself (message names file and entry)."""


@dataclass(frozen=True)
class Canonical:
    """One curated entity: display name, aliases, and for metrics direction and kind."""

    kind: str
    name: str
    aliases: tuple[str, ...]
    source: str  # the file it came from
    direction: str | None = None
    metric_kind: str | None = None

    @property
    def key(self) -> str:
        return name_key(self.name, self.kind)


@dataclass
class Vocabulary:
    """Alias lookup by (kind, key); later files win over earlier ones."""

    entries: dict[tuple[str, str], Canonical] = field(default_factory=dict)
    by_alias: dict[tuple[str, str], Canonical] = field(default_factory=dict)
    fingerprint: str = ""

    def lookup(self, kind: str, key: str) -> Canonical | None:
        """The curated entity a key belongs to (as its name or an alias), if any."""
        return self.by_alias.get((kind, key))

    def metric(self, key: str) -> Canonical | None:
        return self.lookup("metric", key)


def user_alias_files(extra: Sequence[Path] = ()) -> list[Path]:
    """The user's alias files: PAPERSIFT_ALIASES (':'-separated) and then ``extra``."""
    found = [Path(part) for part in os.environ.get(USER_ALIASES_ENV, "").split(os.pathsep)
             if part.strip()]
    return [*found, *extra]


def _entry(kind: str, raw: object, where: str) -> Canonical:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise VocabularyError(f"{where}: each [[{kind}]] entry needs a non-empty name")
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise VocabularyError(f"{where} ({raw['name']}): aliases must be a list of strings")
    direction = raw.get("direction")
    metric_kind = raw.get("kind")
    if kind == "metric":
        if direction not in DIRECTIONS:
            raise VocabularyError(f"{where} ({raw['name']}): direction must be one of "
                                  f"{', '.join(DIRECTIONS)}")
        if metric_kind not in METRIC_KINDS:
            raise VocabularyError(f"{where} ({raw['name']}): kind must be one of "
                                  f"{', '.join(METRIC_KINDS)}")
    return Canonical(kind, clean(raw["name"]), tuple(clean(a) for a in aliases),
                     where.split(":", maxsplit=1)[0], direction, metric_kind)


def _read(path: Path) -> list[Canonical]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise VocabularyError(f"alias file not found: {path}") from error
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise VocabularyError(f"{path}: cannot read alias file: {error}") from error
    unknown = sorted(set(data) - set(KINDS))
    if unknown:
        raise VocabularyError(f"{path}: unknown section(s) {', '.join(unknown)}; use "
                              f"[[benchmark]], [[method]], [[metric]] or [[task]]")
    entries = []
    for kind in KINDS:
        items = data.get(kind, [])
        if not isinstance(items, list):
            raise VocabularyError(f"{path}: {kind} must be an array of tables ([[{kind}]])")
        entries += [_entry(kind, raw, f"{path}:[[{kind}]] #{n + 1}")
                    for n, raw in enumerate(items)]
    return entries


def load_vocabulary(files: Iterable[Path] | None = None) -> Vocabulary:
    """The shipped tables, then the user's files (``files``, default: PAPERSIFT_ALIASES).

    Within one file an alias may name one entity only; a later file's entry takes the
    alias over (so a user can move a spelling to another entity)."""
    paths = [*SHIPPED, *(user_alias_files() if files is None else files)]
    vocabulary = Vocabulary()
    digest = hashlib.sha256()
    for path in paths:
        owners: dict[tuple[str, str], str] = {}
        for read in _read(path):
            entry = read
            digest.update(repr(entry).encode())
            keys = {entry.key, *(name_key(alias, entry.kind) for alias in entry.aliases)}
            for key in keys:
                taken = owners.get((entry.kind, key))
                if taken is not None and taken != entry.name:
                    raise VocabularyError(f"{path}: {entry.kind} spelling {key!r} is listed "
                                          f"under both {taken!r} and {entry.name!r}")
                owners[(entry.kind, key)] = entry.name
            existing = vocabulary.entries.get((entry.kind, entry.key))
            if existing is not None and existing.source != entry.source:
                # a user entry for a shipped entity: keep both sets of spellings
                entry = Canonical(entry.kind, entry.name,
                                  tuple(dict.fromkeys((*existing.aliases, *entry.aliases))),
                                  entry.source, entry.direction or existing.direction,
                                  entry.metric_kind or existing.metric_kind)
                keys |= {name_key(alias, entry.kind) for alias in existing.aliases}
            vocabulary.entries[(entry.kind, entry.key)] = entry
            for key in keys:
                vocabulary.by_alias[(entry.kind, key)] = entry
    vocabulary.fingerprint = digest.hexdigest()[:16]
    return vocabulary
