"""Scoring the fields beyond the original five: artifacts, the other built-in fields
whose matcher is ``values`` (schemas.fields.EXTRA_MATCHERS), and user-defined fields.

A gold paper may carry ``"artifacts": [{"kind": "code", "url": "https://..."}]``, a list
of values under such a built-in field's name, and ``"custom": {"FIELD": [value, ...]}``.
Only fields some gold paper has are scored, so a gold file without them gives exactly
the figures it gave before. Artifacts match by kind (one to one); the URL is scored on
the matched pairs whose gold gives one. Values match by number (when both are numbers)
or by normalised name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from papersift.errors import PapersiftError
from papersift.extract.domain.lookup.grounding import normalize
from papersift.schemas.fields import builtin, extra_scored_fields

ARTIFACTS = builtin("artifacts")
ARTIFACT_KINDS = ("code", "data", "model", "benchmark")

# A gold item of an extra field, as scored: artifacts are (kind, url), user values text.
ExtraGold = dict[str, tuple[Any, ...]]


class ExtraGoldError(PapersiftError):
    """An artifacts or custom entry of a gold paper is malformed."""


def read_extra_gold(item: dict[str, Any], where: str) -> ExtraGold:
    """The artifacts and user-field values a gold paper declares (absent: not scored)."""
    extra: ExtraGold = {}
    if "artifacts" in item:
        artifacts = []
        for n, artifact in enumerate(item["artifacts"] or []):
            if not isinstance(artifact, dict) or artifact.get("kind") not in ARTIFACT_KINDS:
                raise ExtraGoldError(f"{where}.artifacts[{n}]: needs a 'kind', one of "
                                     f"{ARTIFACT_KINDS}")
            url = artifact.get("url")
            artifacts.append((artifact["kind"], url if isinstance(url, str) else None))
        extra["artifacts"] = tuple(artifacts)
    for spec in extra_scored_fields():
        if spec.matcher == "values" and spec.name in item:
            listed = item[spec.name] if isinstance(item[spec.name], list) else [item[spec.name]]
            extra[spec.name] = tuple(_text(v) for v in listed)
    custom = item.get("custom")
    if custom is not None:
        if not isinstance(custom, dict):
            raise ExtraGoldError(f"{where}.custom: expected an object of field: [values]")
        for name, values in custom.items():
            listed = values if isinstance(values, list) else [values]
            extra[f"custom.{name}"] = tuple(_text(v) for v in listed)
    return extra


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def extra_predictions(rows: Iterable[tuple[str, str, Any]]) -> dict[str, dict[str, list[Any]]]:
    """Each extraction's artifacts and user-field values, in the gold's shapes, from the
    (extraction id, field, value) rows warehouse.custom.extra_items reads."""
    found: dict[str, dict[str, list[Any]]] = {}
    for extraction_id, name, value in rows:
        found.setdefault(extraction_id, {}).setdefault(name, []).append(value)
    return found


def _key(value: str) -> str | float:
    try:
        number = float(value.replace(",", ""))
    except ValueError:
        return " ".join(normalize(value).split())
    return number if math.isfinite(number) else value


def _same_value(predicted: str, gold: str) -> bool:
    a, b = _key(predicted), _key(gold)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b


def _url_key(url: str | None) -> str:
    return (url or "").strip().rstrip("/").removeprefix("https://").removeprefix("http://")


Matcher = Callable[[Any, Any], bool]
MATCHERS: dict[str, Matcher] = {
    "artifacts": lambda p, g: p[0] == g[0],
    "values": _same_value,
}


_BUILTIN_MATCHERS = {spec.name: spec.matcher for spec in extra_scored_fields()}


def score_extra(gold: Sequence[tuple[ExtraGold, dict[str, list[Any]]]],
                pair: Callable[..., list[tuple[int, int]]],
                counts: Callable[[], Any]) -> dict[str, Any]:
    """P/R/F1 of every extra field some gold paper has; ``gold`` pairs each gold paper's
    extra items with its predictions. ``pair`` and ``counts`` are evaluate's one-to-one
    matcher and counter, so these fields are scored exactly like the others."""
    wanted = sorted({name for extra, _ in gold for name in extra})
    metrics: dict[str, Any] = {}
    for name in wanted:
        # a built-in field's matcher is declared in the registry; user fields match values
        matcher = MATCHERS[_BUILTIN_MATCHERS.get(name, "values")]
        tally = counts()
        urls_right = urls_total = 0
        for extra, predicted in gold:
            if name not in extra:
                continue  # this paper was not annotated for the field
            expected, guessed = list(extra[name]), predicted.get(name, [])
            pairs = pair(guessed, expected, matcher)
            tally.add(len(pairs), len(guessed), len(expected))
            for i, j in pairs if name == "artifacts" else []:
                if expected[j][1]:
                    urls_total += 1
                    urls_right += _url_key(guessed[i][1]) == _url_key(expected[j][1])
        scores = tally.scores()
        if name == "artifacts":
            scores["url_accuracy"] = round(urls_right / urls_total, 4) if urls_total else None
            metrics["artifacts"] = scores
        elif name in _BUILTIN_MATCHERS:
            metrics[name] = scores
        else:
            metrics.setdefault("custom", {})[name.removeprefix("custom.")] = scores
    return metrics
