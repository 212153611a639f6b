"""What each grounding rule of stops 29 to 40 does on held-out data: every rule switched off in
turn, the held-out pools regraded (the saved real answers; seconds, no model).

    python -m bench.decision.rule_ablation            # the held-out pools
    python -m bench.decision.rule_ablation --tune     # the tune sets pooled instead

RULES.md's standard is that a rule which refuses what the model said earns its place on
held-out data. Each line gives, with the rule off, the pooled P / R / F1 of methods,
benchmarks and gains, and the change in F1 against all rules on. A rule is switched off by
replacing the function that applies it with one that never fires (unittest.mock.patch),
so the shipped code is what is measured, not a copy of it.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

from bench.decision.sets import FIELDS, HELDOUT, POOLS, TUNE, pooled, scores
from bench.decision.train_gains import KEEP_ALL
from papersift.extract.domain.rules.method_decision import Weights
from papersift.extract.domain.rules.resource_cues import _RESOURCE_AFTER

_NEVER = re.compile(r"(?!x)x")  # a pattern that matches nothing


def shipped_weights(commit: str, version: str) -> Callable[[], Weights]:
    """The method decision's weights as ``commit`` shipped them (git history); features
    added since then get no weight, so they are switched off."""
    import json
    import subprocess

    def load() -> Weights:
        text = subprocess.run(
            ["git", "show", f"{commit}:extract/domain/rules/method_decision.json"],
            capture_output=True, text=True, check=True).stdout
        data = json.loads(text)
        return Weights(bias=float(data["bias"]), weights=data["weights"],
                       keep_at=float(data["keep_at"]), flag_at=float(data["flag_at"]),
                       version=version)
    return load


# other weights to compare with: (label, commit that shipped them)
EARLIER_WEIGHTS = (
    ("with stop 28's method weights", "4a6b8b1"),
    # stop 36's weights know neither presentation cue of stop 37
    ("with stop 36's method weights (no presentation cues)", "f6c03c1"),
    # the presentation cues, trained before random14 and random15 were added
    ("with stop 37's first method weights (before random14/15)", "8e9b785"),
    # stop 37's final weights, before random17 was added
    ("with stop 37's final method weights", "c05ecfc"),
    # stop 38's final weights, before random18/19 and common_in_field
    ("with stop 38's final method weights", "ef22a17"),
)


# what stop 40 added to established.toml's not_benchmarks: kinds of signal or scan,
# operating systems and an anonymised link's placeholder
SIGNALS = ("ECG", "EEG", "EMG", "MEG", "fMRI", "MRI", "CT", "PET", "LiDAR", "RGB-D", "mmWave",
           "Android", "iOS", "Windows", "Linux", "macOS", "Anonymous")


def _not_benchmarks_without(names: tuple[str, ...]) -> frozenset[str]:
    """established._not_benchmarks as it would be without ``names``."""
    from papersift.extract.domain.lookup.assemble_spans import name_key
    from papersift.extract.domain.rules import established

    return frozenset(name_key(n) for n in established._extra()["not_benchmarks"]
                     if n not in names) - {""}


# rule -> the patches that switch it off: (target, replacement)
SWITCHES: dict[str, list[tuple[str, Any]]] = {
    "known datasets (candidates)": [
        ("papersift.extract.domain.assembly.assemble.known_benchmarks_in",
         lambda text, drafted: [])],
    "known datasets (not introduced)": [
        ("papersift.extract.domain.assembly.assemble_names.known_benchmark",
         lambda name: False)],
    "LaTeX backslashes given back": [
        ("papersift.extract.domain.assembly.assemble.with_latex_backslashes",
         lambda draft: draft)],
    "markup and kind words off drafted names": [
        ("papersift.extract.domain.assembly.assemble_methods.as_written",
         lambda name, text: name),
        ("papersift.extract.domain.assembly.assemble_names.as_written",
         lambda name, text: name)],
    "a resource named 'Expansion (ACR) benchmark'": [
        ("papersift.extract.domain.rules.benchmark_candidates._DEFINED_RESOURCE", _NEVER)],
    "a modifier of a lowercase head": [
        ("papersift.extract.domain.lookup.assemble_spans._modifier_of", lambda rest: False)],
    "a class of models": [
        ("papersift.extract.domain.rules.name_rules.a_class_of_models", lambda name: False)],
    "counts taken for names": [
        ("papersift.extract.domain.rules.name_rules.a_count_of_things",
         lambda text, start, end: False)],
    "venues in a year": [
        ("papersift.extract.domain.rules.established._VENUE", _NEVER)],
    "an acronym's words must spell it": [
        ("papersift.extract.domain.rules.name_rules._spelling",
         lambda words, acronym: words)],
    "ranks, products, versions (gains)": [
        ("papersift.extract.domain.rules.gain_numbers._RANK_BEFORE", _NEVER),
        ("papersift.extract.domain.rules.gain_numbers._TIMES_NUMBER_AFTER", _NEVER),
        ("papersift.extract.domain.rules.gain_numbers._TIMES_NUMBER_BEFORE", _NEVER),
        ("papersift.extract.domain.rules.gain_numbers._NAME_BEFORE", _NEVER),
        ("papersift.extract.domain.rules.gain_numbers._COUNTED_AFTER", _NEVER),
        ("papersift.extract.domain.rules.gain_numbers._PLUS_COUNT_AFTER", _NEVER)],
    "a baseline's scores in parentheses (gains)": [
        ("papersift.extract.domain.rules.gain_numbers.baseline_score",
         lambda text, start: False)],
    # stop 36
    "the gain decision (every grounded gain kept)": [
        ("papersift.extract.domain.assembly.assemble_gains.load_gain_weights",
         lambda: KEEP_ALL)],
    "a multi-word family with a version is established": [
        ("papersift.extract.domain.rules.established._VARIANT", re.compile(
            r"^([A-Za-z][\w.]*?(?:-?\d(?:\.\d)?)?)(?:[-\s](?:v?\d[\w.]*|\d+(?:\.\d+)?[BMK]|"
            r"Instruct|Chat|Turbo|mini|Mini|Opus|Sonnet|Haiku|Pro|Flash|Ultra|Large|Base|Small|"
            r"Tiny|Medium|XL|XXL|NeXT|Next|Vision|Coder|Math|Nano|Plus|Max|it|hf|HF))+$"))],
    "a name inside a hyphenated longer one is not proposed": [
        ("papersift.extract.domain.rules.method_candidates._in_a_compound",
         lambda text, start, end: False)],
    "'utilizing', 'employing', 'adopting', 'applying' block a proposal": [
        ("papersift.extract.domain.rules.name_rules._BLOCKING_GAP", re.compile(
            r"\b(that|which|who|whose|using|uses|use|via|with|than|such as|including|like|"
            r"against|based|built|on top of|leverag\w*|extend\w*|from|over|into|upon|in|on|"
            r"to|by|under|follow\w*|for|and (?:evaluate|compare|test)\w*)\b|[;:]", re.I))],
    "'a novel framework, X' proposes X": [
        ("papersift.extract.domain.rules.name_rules._NEW_KIND_BEFORE", _NEVER)],
    "a drafted benchmark with a method's kind word is a method": [
        ("papersift.extract.domain.assembly.assemble.ends_in_a_method_kind",
         lambda name: False)],
    "a benchmark whose acronym the draft names as a method": [
        ("papersift.extract.domain.assembly.assemble._forms_of", lambda name: {name})],
    "'the Expansion (ACR) benchmark' calls ACR a benchmark": [
        ("papersift.extract.domain.rules.context_rules._DETERMINED_BEFORE", re.compile(
            r"\b([Tt]he|[Oo]ur|[Tt]his|[Nn]ew|[Nn]ovel|[Pp]roposed)\s+[*_{]*$"))],
    # stop 37
    "'construct X dataset' calls X a dataset": [
        ("papersift.extract.domain.rules.context_rules._CREATED_BEFORE", _NEVER)],
    "an acronym that spells an established name is not coined": [
        ("papersift.extract.domain.rules.method_candidates._established_expansion",
         lambda words, acronym: False)],
    "a Unicode hyphen in 'a large-scale benchmark'": [
        ("papersift.extract.domain.rules.resource_cues._RESOURCE_AFTER", re.compile(
            _RESOURCE_AFTER.pattern.replace(r"[\w\u2010\u2011-]", r"[\w-]"),
            _RESOURCE_AFTER.flags))],
    # stop 38
    "'the retrieval benchmark M-BEIR' calls M-BEIR a benchmark": [
        ("papersift.extract.domain.rules.benchmark_candidates._KIND_THEN_NAME", _NEVER)],
    "one entry per resource (acronym and expansion merged)": [
        ("papersift.extract.domain.assembly.assemble_names._one_entry_per_resource",
         lambda benchmarks, found, rejected: (benchmarks, found))],
    # stop 39
    "a term many papers write (common_in_field)": [
        ("papersift.extract.domain.assembly.assemble_methods.common_in_field",
         lambda *names: False)],
    "a name the model's gains measure on ('MGSM benchmark')": [
        ("papersift.extract.domain.assembly.assemble.measured_on",
         lambda places, text, drafted: [])],
    "'we construct X, a ... dataset' introduces X": [
        ("papersift.extract.domain.assembly.assemble.made_resources", lambda text: [])],
    "'(ACR)-based' after a defined acronym is a building block": [
        ("papersift.extract.domain.rules.name_rules._BUILDING_BLOCK_AFTER", re.compile(
            r"^[*_}]*-(based|style|like|inspired|driven|guided|type|family|variant|backbone)"
            r"\b", re.I))],
    # stop 40
    "'of X, our approach surpasses' is no apposition": [
        ("papersift.extract.domain.rules.name_rules._MAIN_CLAUSE_AFTER", _NEVER)],
    "'datasets: Bing and YFCC' lists names": [
        ("papersift.extract.domain.lookup.assemble_spans._AFTER_A_LIST_OF_RESOURCES", _NEVER)],
    "'the COCO-2014 validation set' is COCO-2014": [
        ("papersift.extract.domain.assembly.assemble_names._SPLIT_AFTER",
         re.compile(r"^[ -](test|dev|val|validation)(-[A-Za-z0-9]+)?\b"))],
    "an existing benchmark only in the background of a benchmark paper": [
        ("papersift.extract.domain.assembly.assemble_names._without_background_citations",
         lambda benchmarks, found, text, spans, rejected: (benchmarks, found))],
    "a new name and its versioned twin are one entry": [
        ("papersift.extract.domain.assembly.assemble_names._VERSION_OF", _NEVER)],
    "a describing word ('Western-centric', '3D') is no benchmark": [
        ("papersift.extract.domain.rules.name_rules._DESCRIBING_COMPOUND", _NEVER),
        ("papersift.extract.domain.rules.name_rules._DIMENSION", _NEVER)],
    "'Yelp POIs' is Yelp": [
        ("papersift.extract.domain.assembly.assemble_names._PLURAL_ACRONYM_TAIL", _NEVER)],
    "a kind of signal or scan (ECG, fMRI), an OS or 'Anonymous' is no benchmark": [
        ("papersift.extract.domain.rules.established._not_benchmarks",
         lambda: _not_benchmarks_without(SIGNALS))],
    "'namely' and 'in terms of' are no naming verbs": [
        ("papersift.extract.domain.rules.name_rules.PROPOSAL_VERB", re.compile(
            r"\b(we|our|this (paper|work))\b[^.;]{0,80}?\b(propos|introduc|present|develop|"
            r"design|call|dub|nam|term|build|devis|formulat|creat|offer|instantiat|implement)"
            r"\w*|\bcalled\b|\bdubbed\b|\bnamed\b|\btermed\b|\bcoined\b|\breferred to as\b|"
            r"\(ours\)", re.I))],
    "a term carrying a person's name is a lowercase term ('hidden Markov model (HMM)')": [
        ("papersift.extract.domain.rules.name_rules.eponyms", frozenset)],
    "a name built on 'Bench' is a benchmark": [
        ("papersift.extract.domain.assembly.assemble.bench_shaped",
         lambda text, drafted: [])],
}


@contextmanager
def switched_off(patches: list[tuple[str, Any]]) -> Iterator[None]:
    with ExitStack() as stack:
        for target, replacement in patches:
            stack.enter_context(mock.patch(target, replacement))
        yield


def _clear_caches() -> None:
    """Rules cache their answers per text; a switched rule must not read the other's."""
    from papersift.extract.domain.rules import benchmark_candidates, context_rules

    for module in (benchmark_candidates, context_rules):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def figures(pools: dict[str, tuple[str, ...]], sets: Any,
            weights: Callable[[], Weights] | None = None) -> dict[str, dict[str, Any]]:
    _clear_caches()
    if weights is None:
        results = scores(sets)
    else:
        with mock.patch("bench.decision.regrade.load_weights", weights), \
                mock.patch("papersift.extract.domain.assembly.assemble_methods.load_weights",
                           weights):
            results = scores(sets)
    return {label: pooled(results, labels) for label, labels in pools.items()}


def _line(label: str, now: dict[str, Any], base: dict[str, Any] | None) -> str:
    parts = []
    for name, key in FIELDS:
        m = now[key]
        delta = "" if base is None else f" ({m['f1'] - base[key]['f1']:+.3f})"
        parts.append(f"{name} {m['precision']:.3f}/{m['recall']:.3f}/{m['f1']:.3f}{delta}")
    return f"  {label:40} " + "  ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", action="store_true", help="the tune sets, pooled")
    args = parser.parse_args()
    if args.tune:
        pools = {"tune sets, 1.5B": tuple(label for label, _, _ in TUNE if "0.5B" not in label)}
        sets = TUNE
    else:
        pools = {label: labels for label, labels in POOLS.items()
                 if label.startswith(("all held-out, 1.5B", "clean random held-out, never"))}
        sets = HELDOUT
    base = figures(pools, sets)
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for rule, patches in SWITCHES.items():
        with switched_off(patches):
            rows[rule] = figures(pools, sets)
    for label, commit in EARLIER_WEIGHTS:
        rows[label] = figures(pools, sets, shipped_weights(commit, label))
    for pool in pools:
        print(pool)
        print(_line("all rules on", base[pool], None))
        for rule, result in rows.items():
            label = rule if rule.startswith("with ") else f"without {rule}"
            print(_line(label, result[pool], base[pool]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
