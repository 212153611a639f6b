"""Choosing the endpoint: OpenAI, any OpenAI-compatible server, or the embedded local model.

One road to every model: whatever the provider, the result is an :class:`Endpoint` (a base
URL, a model name and an instructor mode). ``local`` starts llama.cpp's server as a child
process for the duration of the ``with`` block.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from papersift.errors import PapersiftError
from papersift.extract.access.credentials import CredentialInURLError, check_endpoint_url
from papersift.extract.access.llm import MODE_NAMES, Endpoint
from papersift.extract.access.providers import PROVIDERS

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
# The instructor mode each kind of endpoint gets unless --mode says otherwise.
# llama.cpp answers JSON_SCHEMA with HTTP 500 but constrains Mode.JSON output to the
# schema passed in response_format; OpenAI's tool calling is its most reliable road.
DEFAULT_MODES = {"local": "json", "openai": "tools", "compatible": "json"}


class EndpointError(PapersiftError):
    """The endpoint options do not make sense together, or a key is unreadable."""


@dataclass(frozen=True)
class EndpointOptions:
    provider: str | None = None
    base_url: str | None = None
    model: str | None = None
    mode: str | None = None
    api_key_file: Path | None = None
    model_path: Path | None = None
    fast: bool = False
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float | None = None  # None: 600 s local (a CPU model is slow), 180 s remote
    n_ctx: int | None = None
    server_log: Path | None = None
    threads: int | None = None  # local server: llama.cpp threads (default: CPUs - 1)
    prompt_threads: int | None = None  # local server: prompt-evaluation threads (default: threads)
    lean: bool = False  # remote: short prompt, format in the prompt, no schema on the wire


def read_api_key(options: EndpointOptions) -> str | None:
    """The key from --api-key-file, else OPENAI_API_KEY; never stored anywhere."""
    if options.api_key_file is not None:
        try:
            key = options.api_key_file.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise EndpointError(
                f"cannot read the API key file {options.api_key_file}: {error.strerror}"
            ) from error
        if not key:
            raise EndpointError(f"the API key file {options.api_key_file} is empty")
        return key
    return os.environ.get("OPENAI_API_KEY") or None


def choose_provider(options: EndpointOptions, api_key: str | None) -> str:
    """Explicit --provider wins; a base URL means 'compatible'; a key alone means OpenAI;
    nothing configured means the embedded local model."""
    if options.provider:
        if options.provider not in PROVIDERS:
            raise EndpointError(f"unknown provider {options.provider!r}; choose {PROVIDERS}")
        return options.provider
    if options.model_path is not None or options.fast:
        return "local"
    if options.base_url or os.environ.get("OPENAI_BASE_URL"):
        return "compatible"
    if api_key:
        return "openai"
    return "local"


def _mode(options: EndpointOptions, provider: str) -> str:
    mode = options.mode or DEFAULT_MODES[provider]
    if mode not in MODE_NAMES:
        raise EndpointError(f"unknown mode {mode!r}; choose one of {sorted(MODE_NAMES)}")
    return mode


def remote_endpoint(options: EndpointOptions, provider: str, api_key: str | None) -> Endpoint:
    """An endpoint for OpenAI or another OpenAI-compatible server."""
    if provider == "openai":
        base_url = options.base_url or OPENAI_BASE_URL
        model = options.model or OPENAI_DEFAULT_MODEL
        if not api_key:
            raise EndpointError(
                "the openai provider needs a key: set OPENAI_API_KEY or pass --api-key-file"
            )
    else:
        base_url = options.base_url or os.environ.get("OPENAI_BASE_URL") or ""
        if not base_url:
            raise EndpointError("the compatible provider needs --base-url (or OPENAI_BASE_URL)")
        if not options.model:
            raise EndpointError("the compatible provider needs --model (the server's model name)")
        model = options.model
    source = "--base-url" if options.base_url else "OPENAI_BASE_URL"
    try:  # the one place a URL becomes an endpoint: a credential in it stops here
        base_url = check_endpoint_url(base_url, source)
    except CredentialInURLError as error:
        raise EndpointError(str(error)) from None
    mode = _mode(options, provider)
    if options.lean:
        if options.mode not in (None, "json_schema"):
            raise EndpointError("--lean sends its own response_format: it works in "
                                "json_schema mode only (leave --mode out)")
        mode = "json_schema"  # the one mode in which instructor adds nothing to the prompt
    return Endpoint(
        base_url=base_url,
        model=model,
        mode=mode,
        plain_json=options.lean,
        api_key=api_key,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        timeout_s=options.timeout_s or 180.0,
        kind=provider,
    )


@dataclass(frozen=True)
class EndpointPlan:
    """An endpoint known before anything is started. ``endpoint`` is complete enough for
    cache keys; ``open()`` yields the live endpoint (starting a local server if needed), so
    a run whose answers are all cached starts nothing."""

    endpoint: Endpoint
    local_model: Path | None = None
    catalogue_model: str | None = None  # assembled from its chunk packages on open()
    n_ctx: int = 8192
    chat_format: str | None = None
    server_log: Path | None = None
    threads: int | None = None
    prompt_threads: int | None = None
    notes: list[str] = field(default_factory=list, compare=False)  # what the run should say

    @contextmanager
    def open(self) -> Iterator[Endpoint]:
        if self.local_model is None and self.catalogue_model is None:
            yield self.endpoint
            return
        from papersift.extract.access.local_server import LocalServer
        from papersift.extract.access.models import ensure_model

        model_path = self.local_model or ensure_model(str(self.catalogue_model))
        server = LocalServer(
            model_path,
            n_ctx=self.n_ctx,
            chat_format=self.chat_format,
            log_path=self.server_log,
            model_alias=self.endpoint.model,
            n_threads=self.threads,
            n_threads_batch=self.prompt_threads,
        )
        self.notes.append(server.threads_note())
        try:
            with server:
                yield replace(self.endpoint, base_url=server.base_url)
        finally:
            changed = server.thread_changes_note()
            if changed:
                self.notes.append(changed)


def plan_endpoint(options: EndpointOptions) -> EndpointPlan:
    """Resolve the options into an endpoint; nothing is assembled or started yet."""
    api_key = read_api_key(options)
    provider = choose_provider(options, api_key)
    if provider != "local":
        return EndpointPlan(remote_endpoint(options, provider, api_key))
    if options.lean:
        raise EndpointError("--lean is for large remote models; the local model needs the "
                            "full prompt with its examples")
    from papersift.extract.access.models import CATALOGUE, DEFAULT_MODEL, FAST_MODEL

    model_file = options.model_path
    catalogue_name = None
    if model_file is not None:
        if not model_file.is_file():
            raise EndpointError(f"no model file at {model_file}")
        identity = f"gguf:{model_file.name}:{model_file.stat().st_size}"
        name = model_file.stem
        n_ctx, chat_format = options.n_ctx or 8192, None
    else:
        name = options.model or (FAST_MODEL if options.fast else DEFAULT_MODEL)
        if name not in CATALOGUE:
            raise EndpointError(
                f"unknown local model {name!r}; `papersift models` lists them "
                "(or pass --model-path FILE.gguf)"
            )
        spec = CATALOGUE[name]
        catalogue_name = name  # assembled only if some abstract needs the model
        identity = f"gguf:sha256:{spec.sha256}"
        n_ctx, chat_format = options.n_ctx or spec.context_length, spec.chat_format
    mode = _mode(options, "local")
    endpoint = Endpoint(
        base_url="http://127.0.0.1:0/v1",  # the real port is known once the server runs
        model=name,
        mode=mode,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        timeout_s=options.timeout_s or 600.0,
        constrain_json=mode == "json",
        kind="local",
        identity=identity,
    )
    return EndpointPlan(
        endpoint,
        local_model=model_file,
        catalogue_model=catalogue_name,
        n_ctx=n_ctx,
        chat_format=chat_format,
        server_log=options.server_log,
        threads=options.threads,
        prompt_threads=options.prompt_threads,
    )


@contextmanager
def open_endpoint(options: EndpointOptions) -> Iterator[Endpoint]:
    """Yield a ready endpoint; for the local provider, a server runs until the block ends."""
    with plan_endpoint(options).open() as endpoint:
        yield endpoint
