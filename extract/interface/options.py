"""The run options, declared once.

Each :class:`Option` says its flag, type, default and help, and which settings field it
fills (``endpoint.max_tokens`` is :class:`EndpointOptions`' field, ``run.concurrency`` is
:class:`RunSettings`', ``batch.*`` builds the :class:`BatchOptions`). From this one table
come the click options of ``run`` and ``extract``, the settings objects a command hands to
the library, and the options table in ``docs/options.md`` (checked by a test, so the docs
cannot drift). ``shapes_answer`` marks the options that are part of the cache key: changing
one asks the model again; a test checks the key against it. ``providers`` names the
providers an option means something for: given on the command line for another, it is
refused (a remote run with ``--threads`` says so instead of ignoring it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from papersift.extract.access.providers import LOCAL, PROVIDERS, REMOTE
from papersift.extract.domain.reading.ingest_text import DEFAULT_MAX_CHARS
from papersift.schemas.fields import optional_fields

if TYPE_CHECKING:  # the settings classes load with the library, when a command runs
    from papersift.extract.access.endpoints import EndpointOptions
    from papersift.extract.interface.app import RunSettings

FilePath = click.Path(dir_okay=False, path_type=Path)


@dataclass(frozen=True)
class Option:
    """One command-line option and the settings field it fills."""

    flag: str
    target: str  # "endpoint.FIELD", "run.FIELD" or "batch.FIELD"
    help: str
    type: Any = None
    default: Any = None
    is_flag: bool = False
    envvar: str | None = None
    metavar: str | None = None
    invert: bool = False  # a flag that turns its field off (--no-cache -> use_cache)
    shapes_answer: bool = False  # part of the cache key
    multiple: bool = False  # repeatable: its value is a tuple
    providers: tuple[str, ...] = PROVIDERS  # the providers it means something for

    @property
    def group(self) -> str:
        return self.target.split(".", 1)[0]

    @property
    def field(self) -> str:
        return self.target.split(".", 1)[1]

    @property
    def param(self) -> str:
        """The click parameter name: the flag without dashes."""
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def scope(self) -> str | None:
        """The providers it is for, in words; None when it is for all of them."""
        if self.providers == PROVIDERS:
            return None
        return "Local provider" if self.providers == LOCAL else "Remote providers"

    @property
    def full_help(self) -> str:
        return self.help if self.scope is None else f"{self.scope} only: {self.help}"

    def click_option(self) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        kwargs: dict[str, Any] = {"help": self.full_help}
        if self.is_flag:
            kwargs["is_flag"] = True
        else:
            kwargs["type"] = self.type
            if self.default is not None:
                kwargs["default"] = self.default
                kwargs["show_default"] = True
        if self.envvar:
            kwargs["envvar"] = self.envvar
        if self.metavar:
            kwargs["metavar"] = self.metavar
        if self.multiple:
            kwargs["multiple"] = True
        return click.option(self.flag, self.param, **kwargs)


RUN_OPTIONS: tuple[Option, ...] = (
    Option("--provider", "endpoint.provider",
           "Default: local unless a base URL or OPENAI_API_KEY is set.",
           type=click.Choice(PROVIDERS), shapes_answer=True),
    Option("--base-url", "endpoint.base_url",
           "An OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.",
           envvar="PAPERSIFT_BASE_URL", shapes_answer=True, providers=REMOTE),
    Option("--model", "endpoint.model",
           "Model name (for local: a name from `papersift models`).", shapes_answer=True),
    Option("--mode", "endpoint.mode", "instructor mode; default per provider (local: json).",
           type=click.Choice(["json", "tools", "json_schema", "md_json"]), shapes_answer=True),
    Option("--api-key-file", "endpoint.api_key_file",
           "Read the API key from this file instead of OPENAI_API_KEY.", type=FilePath,
           providers=REMOTE),
    Option("--model-path", "endpoint.model_path", "any GGUF file.",
           type=FilePath, shapes_answer=True, providers=LOCAL),
    Option("--fast", "endpoint.fast",
           "the smaller, faster Qwen2.5-Coder-0.5B model.", is_flag=True,
           shapes_answer=True, providers=LOCAL),
    Option("--temperature", "endpoint.temperature", "Sampling temperature.", type=float,
           default=0.0, shapes_answer=True),
    Option("--max-tokens", "endpoint.max_tokens",
           "Cap on the answer's length; hitting it is a failure.", type=int, default=512,
           shapes_answer=True),
    Option("--timeout", "endpoint.timeout_s",
           "Seconds per HTTP request [default: 600 local, 180 remote].", type=float),
    Option("--concurrency", "run.concurrency", "Abstracts in flight at once.",
           type=click.IntRange(min=1), default=1),
    Option("--rpm", "run.rpm",
           "The endpoint's requests-per-minute limit; papersift paces itself under it "
           "[default: learned from x-ratelimit-* headers].",
           type=click.FloatRange(min=0, min_open=True)),
    Option("--tpm", "run.tpm",
           "The endpoint's tokens-per-minute limit (prompt + max_tokens per request, as "
           "OpenAI counts it) [default: learned from headers].",
           type=click.FloatRange(min=0, min_open=True)),
    Option("--max-cost", "run.max_cost",
           "Stop sending once this many US dollars are spent, re-asks and retries included; "
           "the rest are recorded as failures (reason max_cost) for a later run.",
           type=click.FloatRange(min=0)),
    Option("--price", "run.price",
           "US$ per million prompt and completion tokens for this model, instead of the "
           "price table (extract/domain/prices.toml, PAPERSIFT_PRICES).",
           type=(float, float), metavar="IN OUT"),
    Option("--sample", "run.sample",
           "Extract a seeded random sample of this many abstracts (all are ingested); the "
           "same inputs and --sample-seed give the same papers, so a rerun or a larger "
           "sample pays only for new ones.", type=click.IntRange(min=1)),
    Option("--sample-seed", "run.sample_seed", "The seed of --sample.", type=int, default=0),
    Option("--no-cache", "run.use_cache", "Ask the model even when a cached answer exists.",
           is_flag=True, invert=True),
    Option("--max-reasks", "run.max_reasks",
           "Validation re-asks per abstract [default: 1 local, 2 remote].", type=int),
    Option("--max-chars", "run.max_chars",
           "Longer abstracts are recorded as failures, not sent.", type=click.IntRange(min=1),
           default=DEFAULT_MAX_CHARS),
    Option("--server-log", "endpoint.server_log",
           "write the llama.cpp server's log here.", type=FilePath, providers=LOCAL),
    Option("--threads", "endpoint.threads",
           "llama.cpp threads [default: CPUs - 1].",
           type=click.IntRange(min=1), providers=LOCAL),
    Option("--prompt-threads", "endpoint.prompt_threads",
           "llama.cpp threads for prompt evaluation [default: every CPU when the "
           "machine is idle as the server starts (under half a CPU busy), else "
           "--threads; during the run they follow the load, down to --threads while "
           "other processes keep half a CPU busy and back once they stop]; idle, 2 of 2 "
           "CPUs took 6.7 s per abstract against 8.4 s. Given, they stay fixed.",
           type=click.IntRange(min=1), providers=LOCAL),
    Option("--lean", "endpoint.lean",
           "the short prompt extract_lean (no examples) and no schema on the "
           "wire, about a quarter of the prompt tokens; answers are validated as usual.",
           is_flag=True, shapes_answer=True, providers=REMOTE),
    Option("--fields", "run.fields",
           "Your own fields: a Python file with one pydantic model, each field annotated "
           "with a grounding (see examples/custom-fields/); added to the draft for this run "
           "(live, `--batch`, row workers and Ray shards).", type=FilePath, metavar="FILE",
           shapes_answer=True),
    Option("--with", "run.with_fields",
           "Also extract this optional built-in field, repeatable (the fields the registry, "
           "schemas/fields.py, marks optional; listed by `papersift run --help`): it is "
           "added to the draft and the prompt, so to the cache key.",
           type=click.Choice([spec.name for spec in optional_fields()]), multiple=True,
           shapes_answer=True),
    Option("--fewshot-pool", "run.fewshot_pool",
           "Also send, before each abstract, the 2 examples of this pool (from "
           "`papersift corrections pool`) whose words overlap it most, as earlier chat "
           "turns; the prompt version covers the pool's.", type=FilePath, metavar="FILE",
           shapes_answer=True),
)

BATCH_OPTIONS: tuple[Option, ...] = (
    Option("--batch", "batch.enabled",
           "Send uncached abstracts through the OpenAI Batch API (half price, answers within "
           "24 h); a killed run's batch is resumed by rerunning.", is_flag=True,
           providers=REMOTE),
    Option("--poll-interval", "batch.poll_interval_s",
           "--batch: seconds between status checks of the batch.",
           type=click.FloatRange(min=0.0), default=30.0),
)

ALL_OPTIONS = RUN_OPTIONS + BATCH_OPTIONS


def _targets() -> dict[str, type]:
    from papersift.extract.access.endpoints import EndpointOptions
    from papersift.extract.interface.app import RunSettings
    from papersift.extract.runs.batch import BatchOptions

    return {"endpoint": EndpointOptions, "run": RunSettings, "batch": BatchOptions}


def apply(options: Sequence[Option]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator that adds these options to a click command, in table order."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option.click_option()(func)
        return func

    return decorate


def pop_settings(db: Path, values: dict[str, Any]) -> RunSettings:
    """Take the declared options out of a command's keyword arguments and build the run's
    settings from them; what the command declared itself stays in ``values``."""
    groups: dict[str, dict[str, Any]] = {"endpoint": {}, "run": {}, "batch": {}}
    given = []
    for option in ALL_OPTIONS:
        if option.param not in values:
            continue
        value = values.pop(option.param)
        groups[option.group][option.field] = (not value) if option.invert else value
        if _given(option, value):
            given.append(option)
    settings = settings_from(db, groups)
    refuse_misplaced(given, settings.endpoint)
    return settings


def _given(option: Option, value: Any) -> bool:
    """Whether the user gave this option on the command line (outside click: whether it
    is set to something else than its default)."""
    context = click.get_current_context(silent=True)
    if context is not None and option.param in context.params:
        return context.get_parameter_source(option.param) is ParameterSource.COMMANDLINE
    return value not in (None, False, (), option.default)


def refuse_misplaced(given: Sequence[Option], endpoint: EndpointOptions) -> None:
    """Refuse the given options that mean nothing for the provider this run uses."""
    if all(option.providers == PROVIDERS for option in given):
        return
    from papersift.extract.access.endpoints import choose_provider, read_api_key

    key = None if endpoint.provider else read_api_key(endpoint)
    provider = choose_provider(endpoint, key)
    wrong = [option for option in given if provider not in option.providers]
    if not wrong:
        return
    if endpoint.provider:
        why = f"--provider {provider}"
    elif provider == "compatible":
        why = "a base URL is set"
    elif provider == "openai":
        why = "an API key is set"
    elif endpoint.model_path or endpoint.fast:
        why = "--fast or --model-path asks for it"
    else:
        why = "no base URL or API key is set"
    named = " and ".join(f"{option.flag} ({str(option.scope).lower()} only)"
                         for option in wrong)
    verb, it = ("means", "it") if len(wrong) == 1 else ("mean", "them")
    raise click.UsageError(
        f"{named} {verb} nothing for the {provider} provider this run uses ({why}): leave "
        f"{it} out, or choose the provider with --provider.")


def settings_from(db: Path, groups: Mapping[str, Mapping[str, Any]]) -> RunSettings:
    """RunSettings from option values grouped by target (``{"endpoint": {...}, ...}``)."""
    from papersift.extract.access.endpoints import EndpointOptions
    from papersift.extract.interface.app import RunSettings
    from papersift.extract.runs.batch import BatchOptions
    from papersift.prompts import DEFAULT_PROMPT, LEAN_PROMPT

    endpoint = EndpointOptions(**groups.get("endpoint", {}))
    batch_values = dict(groups.get("batch", {}))
    batch = BatchOptions(**{k: v for k, v in batch_values.items() if k != "enabled"}) \
        if batch_values.get("enabled") else None
    return RunSettings(db=db, endpoint=endpoint,
                       prompt=LEAN_PROMPT if endpoint.lean else DEFAULT_PROMPT,
                       batch=batch, **groups.get("run", {}))


def check_targets() -> list[str]:
    """Targets that name no field of their settings class (empty when the table is right)."""
    wrong = []
    targets = _targets()
    for option in ALL_OPTIONS:
        if option.target == "batch.enabled":
            continue
        names = {f.name for f in dataclasses.fields(targets[option.group])}
        if option.field not in names:
            wrong.append(option.target)
    return wrong


def options_markdown() -> str:
    """The options table of docs/options.md, generated from the declarations."""
    lines = [
        "<!-- generated from extract/interface/options.py by "
        "`python -m papersift.extract.interface.options`; tests/test_options.py checks it -->",
        "# Options of `papersift run` and `papersift extract`",
        "",
        "| option | default | in the cache key | what it does |",
        "|---|---|---|---|",
    ]
    for option in ALL_OPTIONS:
        default = "" if option.is_flag or option.default is None else f"`{option.default}`"
        env = f" (env `{option.envvar}`)" if option.envvar else ""
        meta = f" {option.metavar}" if option.metavar else ""
        key = "yes" if option.shapes_answer else ""
        text = option.full_help.replace("|", "\\|")
        lines.append(f"| `{option.flag}{meta}`{env} | {default} | {key} | {text} |")
    return "\n".join(lines) + "\n"


DOCS_FILE = Path(__file__).resolve().parents[2] / "docs" / "options.md"

if __name__ == "__main__":
    DOCS_FILE.write_text(options_markdown(), encoding="utf-8")
    print(f"wrote {DOCS_FILE}")
