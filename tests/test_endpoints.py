"""Choosing the endpoint: defaults, keys, errors; nothing starts until it is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from papersift.extract.access.endpoints import (
    EndpointError,
    EndpointOptions,
    choose_provider,
    plan_endpoint,
    read_api_key,
)


def test_nothing_configured_means_the_local_model() -> None:
    assert choose_provider(EndpointOptions(), None) == "local"


def test_a_key_alone_means_openai_and_a_base_url_means_compatible() -> None:
    assert choose_provider(EndpointOptions(), "sk-x") == "openai"
    assert choose_provider(EndpointOptions(base_url="http://h/v1"), "sk-x") == "compatible"
    assert choose_provider(EndpointOptions(provider="local"), "sk-x") == "local"
    assert choose_provider(EndpointOptions(fast=True), "sk-x") == "local"


def test_key_file_wins_and_is_never_in_the_description(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    key_file = tmp_path / "key"
    key_file.write_text("sk-from-file\n", encoding="utf-8")
    options = EndpointOptions(provider="openai", api_key_file=key_file)
    assert read_api_key(options) == "sk-from-file"
    plan = plan_endpoint(options)
    assert plan.endpoint.api_key == "sk-from-file"
    assert "sk-from-file" not in repr(plan.endpoint)
    assert "sk-from-file" not in str(plan.endpoint.describe())
    assert plan.endpoint.mode == "tools"


def test_unreadable_or_empty_key_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EndpointError, match="cannot read the API key file"):
        read_api_key(EndpointOptions(api_key_file=tmp_path / "missing"))
    (tmp_path / "empty").write_text("", encoding="utf-8")
    with pytest.raises(EndpointError, match="is empty"):
        read_api_key(EndpointOptions(api_key_file=tmp_path / "empty"))


def test_local_plan_assembles_and_starts_nothing() -> None:
    plan = plan_endpoint(EndpointOptions(fast=True))
    assert plan.catalogue_model == "qwen2.5-coder-0.5b"
    assert plan.endpoint.kind == "local" and plan.endpoint.constrain_json
    assert plan.endpoint.cache_identity.startswith("gguf:sha256:")
    assert not list(Path.cwd().glob("**/*.gguf"))


def test_unknown_local_model_and_missing_file_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EndpointError, match="papersift models"):
        plan_endpoint(EndpointOptions(provider="local", model="gpt-17"))
    with pytest.raises(EndpointError, match="no model file"):
        plan_endpoint(EndpointOptions(model_path=tmp_path / "nope.gguf"))


def test_mode_override_is_checked() -> None:
    with pytest.raises(EndpointError, match="unknown mode"):
        plan_endpoint(EndpointOptions(base_url="http://h/v1", model="m", mode="xml"))
    plan = plan_endpoint(EndpointOptions(base_url="http://h/v1", model="m", mode="md_json"))
    assert plan.endpoint.mode == "md_json" and plan.local_model is None
