"""User fields off the main process: row workers, Ray shards and their merge. A user's
fields travel as their declarations (data) and their draft class is rebuilt where the
rows are built; the rows are those of a single-process run.

The endpoint is the HAND-WRITTEN FAKE of test_custom_fields (KeyedDrafts over
httpx2.MockTransport); the Ray test runs a local Ray instance (see test_ray_local)."""

from __future__ import annotations

import functools
import pickle
from pathlib import Path
from typing import Any

import httpx2
import pytest
from instructor import response_schema

from papersift.extract.access.llm import Endpoint
from papersift.extract.access.outcomes import plain_draft
from papersift.extract.domain.fields import FieldSet, load_fields
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.distributed import (
    ShardSettings,
    merge_into,
    run_on_ray,
    shard_corpus,
)
from papersift.testing.mock import KeyedDrafts
from tests.conftest import stored_rows
from tests.test_custom_fields import DRAFTS, ENDPOINT, EXAMPLE, RETRIEVAL, TABULAR
from tests.test_ray_local import local_ray  # noqa: F401 - the fixture

CUSTOM = ("SELECT p.text[:12], c.field, c.idx, c.value, c.unit, c.alignment, c.mention_start "
          "FROM custom c JOIN papers p USING (paper_id) ORDER BY ALL")


def _corpus(where: Path) -> Path:
    folder = where / "corpus"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text(f"{RETRIEVAL}\n\n{TABULAR}\n", encoding="utf-8")
    return folder


def _single(where: Path, row_workers: int) -> Path:
    db = where / f"w{row_workers}.duckdb"
    _, summary = run_inputs([str(_corpus(where / str(row_workers)))],
                            RunSettings(db=db, fields=EXAMPLE, row_workers=row_workers),
                            transport=httpx2.MockTransport(KeyedDrafts(DRAFTS)),
                            endpoint=ENDPOINT)
    assert (summary.n_extracted, summary.n_failed) == (2, 0)
    return db


def test_a_user_fields_draft_and_field_set_pickle_as_data() -> None:
    fields = load_fields(EXAMPLE)
    again = pickle.loads(pickle.dumps(fields))
    assert again.schema_version() == fields.schema_version()
    assert again.draft_model is fields.draft_model  # rebuilt from the same schema text
    wrapped = response_schema(fields.draft_model).model_validate(DRAFTS["FlowNet"])
    draft: Any = pickle.loads(pickle.dumps(plain_draft(wrapped)))
    assert (draft.setting, draft.model_sizes) == ("reinforcement", ["7"])


def test_row_workers_build_the_rows_of_user_fields(tmp_path: Path) -> None:
    here = stored_rows(_single(tmp_path, 0), CUSTOM)
    assert len(here) == 9
    assert stored_rows(_single(tmp_path, 1), CUSTOM) == here


@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_ray_shards_extract_and_merge_user_fields(local_ray: None,  # noqa: F811
                                                  tmp_path: Path) -> None:
    single = stored_rows(_single(tmp_path, 0), CUSTOM)
    out = tmp_path / "out"
    shards = shard_corpus([_corpus(tmp_path)], out, papers_per_shard=1, run_id="run_fields")
    declaration = FieldSet.from_declaration(load_fields(EXAMPLE).declaration()).declaration()
    endpoint = Endpoint(base_url=ENDPOINT.base_url, model=ENDPOINT.model, mode=ENDPOINT.mode)
    settings = ShardSettings(out=out, run_id="run_fields", endpoint=endpoint,
                             transport=functools.partial(httpx2.MockTransport,
                                                         KeyedDrafts(DRAFTS)),
                             fields=declaration)
    summary = run_on_ray(shards, settings, workers=2)
    assert (summary.total("n_extracted"), summary.total("n_failed")) == (2, 0)
    db = tmp_path / "sharded.duckdb"
    merge_into(db, out, "run_fields", fields=declaration)
    assert stored_rows(db, CUSTOM) == single
    assert stored_rows(db, "SELECT value FROM custom_setting ORDER BY 1") == [
        ("reinforcement",), ("self-supervised",)]
