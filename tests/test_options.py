"""The run options are declared once (extract/interface/options.py): the CLI, the settings
objects, the cache key and docs/options.md all follow the one table."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click
import pytest
from click.core import ParameterSource
from click.testing import CliRunner

from papersift.extract.access.endpoints import EndpointOptions, remote_endpoint
from papersift.extract.access.extractor import cache_key
from papersift.extract.interface import options
from papersift.extract.interface.cli import cli
from papersift.prompts import DEFAULT_PROMPT, LEAN_PROMPT, load_prompt

ROOT = Path(__file__).resolve().parent.parent


def test_every_option_fills_a_real_settings_field() -> None:
    assert options.check_targets() == []
    flags = [option.flag for option in options.ALL_OPTIONS]
    assert len(flags) == len(set(flags))


def test_docs_options_md_is_generated_from_the_declarations() -> None:
    written = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    assert written == options.options_markdown(), (
        "docs/options.md is stale: run `python -m papersift.extract.interface.options`")


@pytest.mark.parametrize("command", ["run", "extract"])
def test_each_command_offers_every_declared_option(command: str) -> None:
    text = CliRunner().invoke(cli, [command, "--help"], terminal_width=200).output
    for option in options.ALL_OPTIONS:
        assert option.flag in text, option.flag


def test_cli_values_reach_the_settings_by_declaration(tmp_path: Path) -> None:
    values: dict[str, Any] = {option.param: None for option in options.ALL_OPTIONS}
    values.update(provider="compatible", model="m", max_tokens=99, timeout=7.5,
                  concurrency=3, no_cache=True, lean=True, batch=True, poll_interval=2.0,
                  fast=False, temperature=0.0, max_chars=100, extra_kept="mine")
    settings = options.pop_settings(tmp_path / "w.duckdb", values)
    assert values == {"extra_kept": "mine"}  # only what the command declared itself stays
    assert (settings.endpoint.model, settings.endpoint.max_tokens,
            settings.endpoint.timeout_s) == ("m", 99, 7.5)
    assert (settings.concurrency, settings.use_cache, settings.max_chars) == (3, False, 100)
    assert settings.prompt == LEAN_PROMPT and settings.batch is not None
    assert settings.batch.poll_interval_s == 2.0
    plain = options.pop_settings(tmp_path / "w.duckdb", {"lean": False})
    assert plain.prompt == DEFAULT_PROMPT and plain.batch is None and plain.use_cache


def _key(**changes: Any) -> str:
    base = EndpointOptions(provider="compatible", base_url="http://127.0.0.1:9/v1",
                           model="some-model")
    chosen = dataclasses.replace(base, **changes)
    endpoint = remote_endpoint(chosen, "compatible", None)
    prompt = load_prompt(LEAN_PROMPT if chosen.lean else DEFAULT_PROMPT)
    return cache_key(endpoint, prompt.version, "An abstract.")


CHANGES: dict[str, Any] = {
    "model": "other-model", "mode": "tools", "temperature": 0.7, "max_tokens": 64,
    "lean": True, "base_url": "http://127.0.0.1:10/v1", "timeout_s": 3.0,
}


@pytest.mark.parametrize("option", [o for o in options.RUN_OPTIONS
                                    if o.group == "endpoint" and o.field in CHANGES],
                         ids=lambda o: o.flag)
def test_the_cache_key_follows_shapes_answer(option: options.Option) -> None:
    changed = _key(**{option.field: CHANGES[option.field]}) != _key()
    assert changed == option.shapes_answer


SCOPED = [o for o in options.ALL_OPTIONS if o.providers != options.PROVIDERS]


def _argv(option: options.Option, tmp_path: Path) -> list[str]:
    if option.is_flag:
        return [option.flag]
    if option.type is options.FilePath:
        (tmp_path / "given").write_text("x", encoding="utf-8")
        return [option.flag, str(tmp_path / "given")]
    return [option.flag, "2"]


def test_the_local_only_and_remote_only_flags_are_declared() -> None:
    scoped = {o.flag: o.providers for o in SCOPED}
    for flag in ("--fast", "--threads", "--model-path", "--server-log"):
        assert scoped[flag] == ("local",), flag
    for flag in ("--lean", "--api-key-file", "--base-url", "--batch"):
        assert "local" not in scoped[flag], flag


@pytest.mark.parametrize("option", SCOPED, ids=lambda o: o.flag)
def test_a_flag_for_other_providers_is_refused(option: options.Option, tmp_path: Path) -> None:
    provider = "openai" if option.providers == ("local",) else "local"
    result = CliRunner().invoke(cli, [
        "run", str(ROOT / "examples" / "neurips-2026"), "--db", str(tmp_path / "w.duckdb"),
        "--dry-run", "--provider", provider, *_argv(option, tmp_path)],
        env={"OPENAI_API_KEY": "sk-test"})
    assert result.exit_code == 2, result.output
    assert f"{option.flag} (" in result.output
    assert f"nothing for the {provider} provider" in result.output
    assert not (tmp_path / "w.duckdb").exists()  # refused before anything is opened


def test_the_refusal_says_why_that_provider(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [
        "run", str(ROOT / "examples" / "neurips-2026"), "--db", str(tmp_path / "w.duckdb"),
        "--dry-run", "--threads", "2", "--fast", "--provider", "openai"],
        env={"OPENAI_API_KEY": "sk-test"})
    assert "--fast (local provider only) and --threads (local provider only) mean nothing " \
           "for the openai provider this run uses (--provider openai)" in result.output
    # no --provider: the API key chose openai, and the message says so
    chosen = CliRunner().invoke(cli, [
        "run", str(ROOT / "examples" / "neurips-2026"), "--db", str(tmp_path / "w.duckdb"),
        "--dry-run", "--threads", "2"], env={"OPENAI_API_KEY": "sk-test"})
    assert "openai provider this run uses (an API key is set)" in chosen.output


@pytest.mark.parametrize("option", SCOPED, ids=lambda o: o.flag)
def test_a_flag_for_its_own_provider_passes(option: options.Option) -> None:
    endpoint = EndpointOptions(provider=option.providers[0], base_url="http://127.0.0.1:9/v1")
    options.refuse_misplaced([option], endpoint)  # no error


def test_a_value_from_the_environment_is_not_a_flag(tmp_path: Path) -> None:
    """PAPERSIFT_BASE_URL set for other runs does not stop a --provider local one."""
    values: dict[str, Any] = {"provider": "local", "base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(click.UsageError, match="--base-url"):
        options.pop_settings(tmp_path / "w.duckdb", dict(values))
    command = click.Command("probe", params=[click.Option(["--provider"]),
                                             click.Option(["--base-url"],
                                                          envvar="PAPERSIFT_BASE_URL")])
    context = command.make_context("probe", ["--provider", "local"],
                                   default_map=None)
    with context:
        context.params.update(values)
        context.set_parameter_source("base_url", ParameterSource.ENVIRONMENT)
        settings = options.pop_settings(tmp_path / "w.duckdb", dict(values))
    assert settings.endpoint.base_url == "http://127.0.0.1:9/v1"
