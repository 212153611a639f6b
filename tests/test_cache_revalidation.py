"""Whatever validates once validates again: generated drafts round-trip through their
stored form, and a cached answer that no longer validates is asked again, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.ingest_files import ingest
from papersift.schemas import PaperDraft
from papersift.testing.sim import fault_profile, running
from tests.conftest import CORPUS

names = st.one_of(st.text(max_size=12), st.sampled_from(["", " ", "\t", "\ud800", "a\x00"]))
drafts = st.fixed_dictionaries({
    "tasks": st.lists(names, max_size=3),
    "methods": st.lists(names, max_size=5),
    "benchmarks": st.lists(st.fixed_dictionaries({"name": names, "new": st.booleans()}),
                           max_size=3),
    "gains": st.lists(st.fixed_dictionaries({"value": names, "metric": names}), max_size=2),
    "types": st.lists(st.sampled_from(["method", "theory", "benchmark", "nonsense"]),
                      max_size=4),
})


@settings(max_examples=500, deadline=None)
@given(drafts)
def test_an_accepted_draft_is_accepted_again_as_stored(raw: dict[str, object]) -> None:
    try:
        draft = PaperDraft.model_validate(raw)
    except ValidationError:
        return
    stored = json.loads(json.dumps(draft.model_dump(mode="json", exclude_none=True)))
    assert PaperDraft.model_validate(stored) == draft


def test_a_cached_answer_that_no_longer_validates_is_asked_again(tmp_path: Path) -> None:
    texts = [paper.text for paper in ingest([CORPUS]).papers][:5]
    path = tmp_path / "five.txt"
    path.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    with running(fault_profile()) as server:
        endpoint = Endpoint(base_url=server.base_url, model="fault", mode="json")
        settings_ = RunSettings(db=db)
        run_inputs([str(path)], settings_, endpoint=endpoint)
        con = duckdb.connect(str(db))  # what an older papersift could have stored
        con.execute("UPDATE llm_cache SET response_json = "
                    "'{\"tasks\": [], \"methods\": [], \"benchmarks\": [], \"gains\": [], "
                    "\"types\": [\"method\"]}'")
        con.close()
        _, warm = run_inputs([str(path)], settings_, endpoint=endpoint)
    assert warm.n_cache_invalid == len(texts)
    assert warm.n_extracted == len(texts) and warm.n_failed == 0
