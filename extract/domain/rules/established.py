"""Names the field already has: established methods and models (the curated alias table's
methods plus established.toml) and the metric vocabulary. A small model lists them as the
paper's own methods ("GPT-4", "FedAvg", "Transformer") or as benchmarks; the grounding code
refuses them there. Only the shipped files are read, never the user's alias files, so the
same draft always grounds the same way; a change to these files changes what assembly
stores, so it bumps ASSEMBLY_VERSION like any other grounding rule."""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path

from papersift.extract.domain.entities.normalise import name_key
from papersift.extract.domain.entities.vocab import load_vocabulary

_EXTRA = Path(__file__).with_name("established.toml")


@functools.cache
def _extra() -> dict[str, list[str]]:
    return tomllib.loads(_EXTRA.read_text(encoding="utf-8"))


@functools.cache
def _not_benchmarks() -> frozenset[str]:
    names = [*_extra()["not_benchmarks"], *_extra()["eponyms"]]
    return frozenset(name_key(name) for name in names) - {""}


@functools.cache
def eponyms() -> frozenset[str]:
    """People's names that mathematical terms carry ('Markov', 'Gaussian'), as written."""
    return frozenset(_extra()["eponyms"])


@functools.cache
def _known() -> tuple[frozenset[str], frozenset[str]]:
    vocabulary = load_vocabulary(files=())
    methods = {key for kind, key in vocabulary.by_alias if kind == "method"}
    methods |= {name_key(name, "method") for name in _extra()["names"]}
    metrics = {key for kind, key in vocabulary.by_alias if kind == "metric"}
    return frozenset(methods - {""}), frozenset(metrics - {""})


@functools.cache
def _classes() -> frozenset[str]:
    return frozenset(name_key(name, "method") for name in _extra()["classes"]) - {""}


def a_class_of_models(name: str) -> bool:
    """'LLMs', 'Vision-Language Models', 'SOTA LLMs': a class of models (after words that
    only grade it), never one paper's own."""
    return name_key(_GRADING.sub("", name.strip()), "method") in _classes()


# Words that grade a class without naming one: 'SOTA LLMs', 'frontier VLMs'.
_GRADING = re.compile(r"^(?:(?:SOTA|state-of-the-art|frontier|open-source|closed-source|"
                      r"proprietary|existing|popular|leading|modern|current|recent)\s+)+",
                      re.I)


def established_method(name: str) -> bool:
    """Whether ``name`` is an established method or model (normalised comparison), or a
    size or version of one ('LLaMA-3-8B', 'Claude 3 Opus', 'Gemma-7B', 'Stable Diffusion
    XL', 'Stable Diffusion v1-5')."""
    if name_key(name, "method") in _known()[0]:
        return True
    glued = _GLUED_VERSION.fullmatch(name.strip())  # 'SAM2', 'Qwen2.5', 'Mamba2'
    if glued and name_key(glued.group(1), "method") in _known()[0]:
        return True
    family = _VARIANT.match(name.strip())
    if family is None:
        return False
    bare = re.sub(r"[-\s]?v?\d[\d.]*$", "", family.group(1))  # 'Qwen2.5' -> 'Qwen'
    return any(name_key(form, "method") in _known()[0] for form in {family.group(1), bare} if form)


# A model family's name followed only by version, size and edition words.
_GLUED_VERSION = re.compile(r"([A-Za-z][A-Za-z-]*?[A-Za-z])-?v?\d+(?:\.\d+)?")
_VARIANT = re.compile(
    r"^([A-Za-z][\w.]*?(?:\s[A-Z][a-z]+)*?(?:-?\d(?:\.\d)?)?)(?:[-\s](?:v?\d[\w.-]*|"
    r"\d+(?:\.\d+)?[BMK]|"
    r"Instruct|Chat|Turbo|mini|Mini|Opus|Sonnet|Haiku|Pro|Flash|Ultra|Large|Base|Small|Tiny|"
    r"Medium|XL|XXL|NeXT|Next|Vision|Coder|Math|Nano|Plus|Max|it|hf|HF))+$")


# A meeting in a given year: 'IEEE SaTML 2024', 'NeurIPS 2023' (a venue, not its data).
_VENUE = re.compile(r"^(?:IEEE|ACM|AAAI|IJCAI|NeurIPS|ICML|ICLR|CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|"
                    r"COLING|KDD|SIGIR|WWW|SaTML)\b[\w\s/-]*?\s'?(?:19|20)?\d\d$")


def never_a_benchmark(name: str) -> bool:
    """Organisations, tools, languages, fields and mathematical names, venues in a year,
    and pairs of languages ('Yoruba-English'): never a benchmark."""
    parts = [part for part in re.split(r"\s*(?:-|–|→|->|/)\s*", name.strip()) if part]
    return name_key(name) in _not_benchmarks() or bool(_VENUE.match(name.strip())) or (
        len(parts) > 1 and all(name_key(part) in _not_benchmarks() for part in parts))


_TASK_HEAD = re.compile(
    r"\b(answering|detection|segmentation|classification|generation|translation|retrieval|"
    r"recognition|reasoning|summari[sz]ation|forecasting|estimation|prediction|captioning|"
    r"tracking|synthesis|understanding|completion|recommendation|parsing|alignment|tagging|"
    r"label+ing|extraction|processing|modell?ing|editing|matching|planning|verification|"
    r"assessment|inference)$",
    re.I)


def task_phrase(name: str) -> bool:
    """A plain multi-word phrase that names a task ('Visual Question Answering'): no
    digits and no capitals inside words (a hyphen starts a word: 'Part-of-Speech'), ending
    in a task word."""
    words = name.split()
    return len(words) >= 2 and not any(c.isdigit() for c in name) \
        and not any(c.isupper() for word in re.split(r"[\s-]+", name) for c in word[1:]) \
        and bool(_TASK_HEAD.search(name.strip()))


def known_metric(name: str) -> bool:
    """Whether ``name`` is a metric of the vocabulary ('BLEU', 'top-1 accuracy')."""
    return name_key(name, "metric") in _known()[1]
