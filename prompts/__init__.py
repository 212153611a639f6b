"""Prompt templates as data files, loaded strictly and versioned by content hash.

A prompt named ``NAME`` is three files beside this module:

- ``NAME.system.md``: the static instructions; ``{{examples}}`` marks where the few-shot
  examples go. Rendered once, so it is an identical prefix for every abstract.
- ``NAME.user.md``: the per-abstract message; ``{{abstract}}`` is the only variable.
- ``NAME.examples.json``: ``{"examples": [{"abstract": ..., "answer": {...}}]}``.
- ``NAME.title.md``: the line that puts an input's title before its abstract, inside the
  abstract's slot of the user message; ``{{title}}`` is its only variable. An abstract
  with no title is sent without it, exactly as before titles were sent.

Placeholders other than the known ones, or missing ones, are errors. This package
imports nothing else of the project's.

A few-shot pool (``papersift corrections pool`` writes one from reviewed papers; see
prompts/pool.py) is opt-in: ``with_pool`` returns the prompt that sends, before each
abstract, the pool's examples most like it as earlier turns of the chat; its version
covers the pool's.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papersift.errors import PapersiftError

if TYPE_CHECKING:
    from papersift.prompts.pool import FewshotPool

PROMPT_DIR = Path(__file__).parent
DEFAULT_PROMPT = "extract_v2"
LEAN_PROMPT = "extract_lean"  # short, no examples: for large remote models (--lean)
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class PromptError(PapersiftError):
    """A prompt file is missing or malformed."""


def sent_title(title: str | None) -> str:
    """The title as a request carries it (its whitespace collapsed), '' for none: what the
    prompt sends and the cache key covers."""
    return " ".join((title or "").split())


@dataclass(frozen=True)
class Example:
    abstract: str
    answer: dict[str, Any]


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str  # fully rendered, examples included
    user_template: str
    examples: tuple[Example, ...]
    version: str  # "sha256:..." over the four source files (and the pool's, with one)
    pool: FewshotPool | None = None  # examples sent before each abstract (opt-in)
    title_template: str = "Title: {{title}}"

    def user(self, abstract: str) -> str:
        """The per-abstract message: the abstract goes last."""
        return self.user_template.replace("{{abstract}}", abstract)

    def titled(self, abstract: str, title: str | None) -> str:
        """What fills the abstract's slot: the title line and a blank line before the
        abstract when the input has a title (measured on random papers: it helps the
        model tell the paper's own names), else the abstract alone."""
        title = sent_title(title)
        if not title:
            return abstract
        return f"{self.title_template.replace('{{title}}', title)}\n\n{abstract}"

    def messages(self, abstract: str) -> list[dict[str, str]]:
        """Chat messages: a static system prefix, the pool's chosen examples (if any) as
        question-and-answer turns, then the abstract."""
        turns = [{"role": "system", "content": self.system}]
        for example in self.pool.choose(abstract) if self.pool is not None else ():
            answer = json.dumps(example.answer, ensure_ascii=False, separators=(",", ":"))
            turns.append({"role": "user", "content": self.user(example.abstract)})
            turns.append({"role": "assistant", "content": answer})
        turns.append({"role": "user", "content": self.user(abstract)})
        return turns


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise PromptError(f"prompt file not found: {path}") from error


def _check_placeholders(path: Path, text: str, allowed: set[str]) -> None:
    found = set(_PLACEHOLDER.findall(text))
    unknown = found - allowed
    missing = allowed - found
    if unknown:
        raise PromptError(f"{path.name}: unknown placeholder(s) {sorted(unknown)}")
    if missing:
        raise PromptError(f"{path.name}: missing placeholder(s) {sorted(missing)}")


def _load_examples(path: Path) -> tuple[Example, ...]:
    try:
        data = json.loads(_read(path))
    except json.JSONDecodeError as error:
        message = f"{path.name}: invalid JSON at line {error.lineno}: {error.msg}"
        raise PromptError(message) from error
    if not isinstance(data, dict) or set(data) - {"_comment", "examples"}:
        raise PromptError(f"{path.name}: expected an object with keys 'examples' and '_comment'")
    examples = []
    for index, item in enumerate(data.get("examples", []), start=1):
        if not isinstance(item, dict) or set(item) != {"abstract", "answer"}:
            raise PromptError(f"{path.name}: example {index} needs exactly 'abstract' and 'answer'")
        examples.append(Example(abstract=item["abstract"], answer=item["answer"]))
    return tuple(examples)


def _render_examples(examples: tuple[Example, ...]) -> str:
    blocks = []
    for example in examples:
        answer = json.dumps(example.answer, ensure_ascii=False, separators=(",", ":"))
        blocks.append(
            f'Example abstract (made up for this prompt):\n"""\n{example.abstract}\n"""\n\n'
            f"Example answer:\n{answer}"
        )
    return "\n\n".join(blocks)


def load_prompt(name: str = DEFAULT_PROMPT, directory: Path = PROMPT_DIR) -> Prompt:
    """Load, check and render prompt ``name``."""
    system_path = directory / f"{name}.system.md"
    user_path = directory / f"{name}.user.md"
    examples_path = directory / f"{name}.examples.json"
    title_path = directory / f"{name}.title.md"
    system_source = _read(system_path)
    user_source = _read(user_path)
    examples_source = _read(examples_path)
    title_source = _read(title_path)
    _check_placeholders(system_path, system_source, {"examples"})
    _check_placeholders(user_path, user_source, {"abstract"})
    _check_placeholders(title_path, title_source, {"title"})
    examples = _load_examples(examples_path)
    digest = hashlib.sha256()
    for source in (system_source, user_source, examples_source, title_source):
        digest.update(hashlib.sha256(source.encode("utf-8")).digest())
    system = _PLACEHOLDER.sub(lambda _match: _render_examples(examples), system_source).strip()
    return Prompt(
        name=name,
        system=system,
        user_template=user_source.strip(),
        examples=examples,
        version="sha256:" + digest.hexdigest(),
        title_template=title_source.strip(),
    )


def field_lines(name: str) -> str:
    """The prompt lines of an optional built-in field (``field_NAME.md`` beside this
    module): sent only by runs that enable the field (`papersift run --with NAME`)."""
    path = PROMPT_DIR / f"field_{name}.md"
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise PromptError(f"the prompt lines of field {name!r} are missing: {path}") from error
