"""The input's title in the request (issue 26, item 5): it goes before the abstract, is
part of the cache key, and an abstract with no title is sent byte for byte as before, so
the recorded corpus (which has no titles) replays unchanged. No HTTP is made here."""

from __future__ import annotations

from papersift.extract.access.extractor import Extractor, cache_key
from papersift.extract.access.llm import Endpoint
from papersift.prompts import load_prompt

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
TEXT = "We study tile retrieval. OrbitNet improves recall by 4.2 points on TileSet."


def test_a_title_goes_into_the_request_and_its_cache_key() -> None:
    extractor = Extractor(ENDPOINT, load_prompt())
    untitled = extractor.request_body(TEXT)
    titled = extractor.request_body(TEXT, "OrbitNet: Tiles")
    assert untitled["messages"][:-1] == titled["messages"][:-1]
    assert titled["messages"][-1]["content"] == untitled["messages"][-1]["content"].replace(
        TEXT, f"Title: OrbitNet: Tiles\n\n{TEXT}")
    assert extractor.key_for(TEXT) == extractor.key_for(TEXT, None) == extractor.key_for(TEXT, "")
    assert extractor.key_for(TEXT, "OrbitNet: Tiles") != extractor.key_for(TEXT)
    # the same title written with other spacing is the same request
    assert extractor.key_for(TEXT, " OrbitNet:\n Tiles") == extractor.key_for(
        TEXT, "OrbitNet: Tiles")
    extractor.close()


def test_an_untitled_key_has_the_shape_it_had_before_titles() -> None:
    prompt = load_prompt()
    assert cache_key(ENDPOINT, prompt.version, TEXT) == cache_key(
        ENDPOINT, prompt.version, TEXT, title=None)


def test_the_dry_run_estimate_counts_the_title_a_request_carries() -> None:
    from papersift.extract.interface.app import billed_prompt_tokens

    extractor = Extractor(ENDPOINT, load_prompt())
    title = "OrbitNet: Retrieval of Tiles at Scale with Sparse Orbital Codes"
    assert billed_prompt_tokens(extractor, TEXT, title) > billed_prompt_tokens(extractor, TEXT)
    assert billed_prompt_tokens(extractor, TEXT, None) == billed_prompt_tokens(extractor, TEXT)
    extractor.close()
