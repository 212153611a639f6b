"""An endpoint that echoes the API key back transformed (hex, reversed, re-cased, split by
spaces or dashes, Base64), in an error or inside a successful answer: no form of the key
lands in the warehouse, the cache or an export."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import duckdb
import httpx2
from hypothesis import given, settings
from hypothesis import strategies as st

from papersift.extract.access.credentials import PLACEHOLDER, hide_secrets, scrub
from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.testing.bodies import chat_completion, first_user_abstract
from papersift.testing.drafts import first_words
from papersift.warehouse.export import export
from tests.conftest import CORPUS

KEY = "sk-echo-7f3a9c1e5b2d4068"  # short enough for every form to fit a name


def _split(text: str, every: int, separator: str) -> str:
    return separator.join(text[i:i + every] for i in range(0, len(text), every))


TRANSFORMS: dict[str, Callable[[str], str]] = {
    "as is": lambda k: k,
    "upper": str.upper,
    "lower": str.lower,
    "reversed": lambda k: k[::-1],
    "hex": lambda k: k.encode().hex(),
    "HEX": lambda k: k.encode().hex().upper(),
    "hex bytes spaced": lambda k: " ".join(f"{b:02x}" for b in k.encode()),
    "\\x escapes": lambda k: "".join(f"\\x{b:02x}" for b in k.encode()),
    "reversed hex": lambda k: k.encode()[::-1].hex(),
    "base64": lambda k: base64.b64encode(k.encode()).decode(),
    "base64 of the reversed key": lambda k: base64.b64encode(k[::-1].encode()).decode(),
    "spaces between letters": " ".join,
    "dashes every 4": lambda k: _split(k, 4, "-"),
    "reversed, upper, spaced every 3": lambda k: _split(k[::-1].upper(), 3, " "),
}

keys = st.builds(lambda body: "sk-" + body,
                 st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_",
                         min_size=20, max_size=48))
noise = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(keys, st.sampled_from(sorted(TRANSFORMS)), noise, noise)
def test_every_echoed_form_of_a_key_is_hidden(key: str, transform: str, before: str,
                                              after: str) -> None:
    echoed = TRANSFORMS[transform](key)
    text = f"{before} invalid api key {echoed}. {after}"
    for cleaned in (scrub(text, (key,)), hide_secrets(text, (key,))):
        assert echoed not in cleaned and PLACEHOLDER in cleaned


@settings(max_examples=200, deadline=None)
@given(keys, st.text(max_size=200))
def test_text_without_the_key_is_left_alone(key: str, text: str) -> None:
    assert hide_secrets(text, (key,)) == text


def _echoing_answer(request: httpx2.Request) -> httpx2.Response:
    """A hand-written fake endpoint (NOT a model): the first-words draft of the abstract,
    with the key echoed transformed in a task, a method and a claimed gain's evidence."""
    body = json.loads(request.content)
    draft = first_words(first_user_abstract(body) or "")
    echoes = [transform(KEY) for transform in TRANSFORMS.values()]
    draft["tasks"] = [*draft["tasks"][:1], echoes[0]]
    draft["methods"] = echoes[1:5]
    draft["benchmarks"] = [{"name": echo, "new": False} for echo in echoes[5:13]]
    draft["gains"] = [{"value": "1", "metric": echo} for echo in echoes[13:]]
    return httpx2.Response(200, json=chat_completion(json.dumps(draft)))


def test_a_key_echoed_inside_a_successful_answer_is_stored_nowhere(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    endpoint = Endpoint(base_url="http://echo.invalid/v1", model="echo", mode="json",
                        api_key=KEY)
    _, summary = run_inputs([str(CORPUS)], RunSettings(db=db),
                            transport=httpx2.MockTransport(_echoing_answer),
                            endpoint=endpoint)
    assert summary.n_extracted > 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        cells: list[str] = []
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
            for row in con.execute(f"SELECT * FROM {table}").fetchall():
                cells.extend(str(value) for value in row)
        raw = con.execute("SELECT count(*) FROM llm_cache WHERE "
                          "response_json::VARCHAR LIKE '%[REDACTED]%'").fetchone()
    finally:
        con.close()
    exported = [item.path.read_text(encoding="utf-8")
                for item in export(db, tmp_path / "out", "csv")]
    stored = "\n".join([*cells, *exported])
    assert raw is not None and raw[0] > 0  # the answers were kept, the key taken out
    for name, transform in TRANSFORMS.items():
        assert transform(KEY) not in stored, name
    assert KEY.lower() not in stored.lower()
