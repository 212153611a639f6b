"""One abstract through the REAL local llama.cpp server that papersift starts itself.

Skipped unless the [local] extra is installed (llama-cpp-python and the model chunks);
CI replays recordings instead. Uses the small model to keep it to about a minute."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from papersift.extract.access.endpoints import EndpointOptions
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.warehouse.query import run_sql
from tests.conftest import CORPUS

pytestmark = pytest.mark.local_model


def _local_extra_installed() -> bool:
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    from papersift.extract.access.models import FAST_MODEL, list_models

    entry = next(e for e in list_models() if e.get("name") == FAST_MODEL)
    return entry.get("status") != "missing packages"


@pytest.mark.skipif(not _local_extra_installed(), reason="needs `pip install .[local]`")
def test_one_abstract_through_the_real_local_server(tmp_path: Path) -> None:
    source = (CORPUS / "000_1aa1e087e7a844d9.txt").read_text(encoding="utf-8")
    title, first, *_ = source.split("\n\n")
    (tmp_path / "one.txt").write_text(f"{title}\n\n{first}\n", encoding="utf-8")
    settings = RunSettings(
        db=tmp_path / "w.duckdb",
        endpoint=EndpointOptions(provider="local", fast=True, server_log=tmp_path / "srv.log"),
        max_reasks=0,
    )
    _, summary = run_inputs([str(tmp_path / "one.txt")], settings)
    assert summary.n_abstracts == 1
    assert summary.n_extracted + summary.n_failed == 1
    calls = run_sql(settings.db, "SELECT status, prompt_tokens FROM calls").rows
    assert calls and calls[0][1] > 500  # the real prompt went through
    log = (tmp_path / "srv.log").read_text(encoding="utf-8", errors="replace")
    assert "llama" in log.lower()
