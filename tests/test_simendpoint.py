"""The benchmark harness's simulated endpoint (bench/simendpoint.py, hand-written, not a
model) and synthetic corpora (bench/synth.py), driven through real HTTP clients."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from bench.synth import synth_papers, write_corpus
from papersift.extract.access.extractor import Extractor
from papersift.extract.access.llm import Endpoint
from papersift.extract.domain.assembly.assemble import assemble, result_numbers
from papersift.extract.runs.ingest_files import ingest
from papersift.prompts import load_prompt
from papersift.schemas import PaperDraft, draft_json_schema
from papersift.testing.sim import (
    SimConfig,
    SimEndpoint,
    count_tokens,
    draft_for,
    prompt_tokens,
    rate_cost,
    read_jsonl,
    reset_text,
    validate_batch_input,
)
from tests.conftest import CORPUS

ABSTRACT = ("Sorting long lists on small devices is slow. We propose FlashSort, a cache-aware "
            "merge sort. On the SortBench benchmark, FlashSort improves throughput by 12.5% "
            "over the best baseline.")


def chat_body(abstract: str = ABSTRACT, max_tokens: int = 64) -> dict[str, Any]:
    return {"model": "gpt-4o-mini", "max_tokens": max_tokens, "messages": [
        {"role": "system", "content": "Extract the paper's fields."},
        {"role": "user", "content": f'Abstract:\n"""\n{abstract}\n"""'}]}


def post(client: httpx2.Client, body: dict[str, Any]) -> httpx2.Response:
    return client.post("/chat/completions", json=body)


@pytest.fixture
def papers() -> list[Any]:
    return ingest([CORPUS]).papers[6:12]  # six abstracts, some stating result numbers


# --------------------------------------------------------------------------- tokens


def test_token_counter_follows_words_numbers_and_punctuation() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("12345") == 2  # digit groups of at most three
    assert count_tokens("internationalization") == 3  # 20 letters: one token per 7
    assert count_tokens('{"a": 1}') > count_tokens("a 1")
    assert count_tokens(ABSTRACT * 2) > count_tokens(ABSTRACT)


def test_prompt_tokens_count_messages_and_schemas_and_rate_cost_adds_max_tokens() -> None:
    body = chat_body(max_tokens=100)
    plain = prompt_tokens(body)
    assert plain == 3 + sum(3 + count_tokens(m["content"]) for m in body["messages"])
    with_schema = {**body, "response_format": {"type": "json_object",
                                               "schema": draft_json_schema()}}
    assert prompt_tokens(with_schema) > plain + 200  # the schema is billed as prompt
    assert rate_cost(body) == plain + 100
    assert rate_cost({k: v for k, v in body.items() if k != "max_tokens"}) == plain + 4096


def test_reset_durations_are_written_as_openai_writes_them() -> None:
    assert reset_text(0.12) == "120ms"
    assert reset_text(1.5) == "1.5s"
    assert reset_text(360) == "6m0s"
    assert reset_text(3725) == "1h2m5s"


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError, match="latency"):
        SimConfig(latency="gaussian:1")
    with pytest.raises(ValueError, match="concurrency"):
        SimConfig(concurrency=0)


# --------------------------------------------------------------------------- limits


def test_concurrency_limit_holds_requests_in_a_queue() -> None:
    with SimEndpoint(SimConfig(latency="fixed:0.15", concurrency=3)) as sim:
        statuses: list[int] = []

        def one() -> None:
            with httpx2.Client(base_url=sim.base_url) as client:
                statuses.append(post(client, chat_body()).status_code)

        threads = [threading.Thread(target=one) for _ in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stats = sim.stats()
    assert statuses == [200] * 10
    assert stats["max_in_flight"] == 3
    assert stats["max_queued"] >= 1
    assert stats["by_status"] == {"200": 10}


def test_requests_per_minute_limit_answers_429_with_retry_after_and_headers() -> None:
    with SimEndpoint(SimConfig(latency="fixed:0", rpm=60)) as sim, \
            httpx2.Client(base_url=sim.base_url) as client:
        first = post(client, chat_body())
        second = post(client, chat_body())
        stats = sim.stats()
    assert first.status_code == 200
    assert first.headers["x-ratelimit-limit-requests"] == "60"
    assert first.headers["x-ratelimit-remaining-requests"] == "0"
    assert first.headers["x-ratelimit-reset-requests"] == "1s"  # 1 request refills in 1 s
    assert "x-ratelimit-limit-tokens" not in first.headers  # no TPM limit configured
    assert second.status_code == 429
    error = second.json()["error"]
    assert (error["type"], error["code"]) == ("requests", "rate_limit_exceeded")
    assert second.headers["retry-after"] == "1"
    assert 0 < int(second.headers["retry-after-ms"]) <= 1000
    assert second.headers["x-ratelimit-remaining-requests"] == "0"
    assert stats["rate_limited"] == {"requests": 1, "tokens": 0}
    assert stats["by_status"] == {"200": 1, "429": 1}


def test_tokens_per_minute_limit_charges_prompt_plus_max_tokens() -> None:
    body = chat_body(max_tokens=40)
    cost = rate_cost(body)
    tpm = 60 * (cost + cost // 2)  # a 1 s bucket holds one and a half requests
    with SimEndpoint(SimConfig(latency="fixed:0", tpm=tpm)) as sim, \
            httpx2.Client(base_url=sim.base_url) as client:
        first = post(client, body)
        second = post(client, body)
    assert first.status_code == 200
    assert int(first.headers["x-ratelimit-remaining-tokens"]) == cost // 2
    assert second.status_code == 429
    assert second.json()["error"]["type"] == "tokens"
    assert f"Requested {cost}" in second.json()["error"]["message"]
    waited_ms = int(second.headers["retry-after-ms"])
    assert 0 < waited_ms <= 1000


def test_usage_matches_the_counter_and_stats_add_up() -> None:
    with SimEndpoint(SimConfig(latency="fixed:0")) as sim, \
            httpx2.Client(base_url=sim.base_url) as client:
        answers = [post(client, chat_body(ABSTRACT.replace("12.5", str(n)))).json()
                   for n in (10, 20, 30)]
        stats = sim.stats()
    for answer in answers:
        content = answer["choices"][0]["message"]["content"]
        assert answer["usage"]["completion_tokens"] == count_tokens(content)
        assert answer["usage"]["prompt_tokens"] == prompt_tokens(chat_body(
            ABSTRACT.replace("12.5", answer_value(answer))))
    assert stats["prompt_tokens"] == sum(a["usage"]["prompt_tokens"] for a in answers)
    assert stats["completion_tokens"] == sum(a["usage"]["completion_tokens"] for a in answers)
    assert stats["requests"] == 3


def answer_value(answer: dict[str, Any]) -> str:
    draft = json.loads(answer["choices"][0]["message"]["content"])
    return str(draft["gains"][0]["value"])


def test_answers_are_deterministic_and_error_rate_gives_500s() -> None:
    with SimEndpoint(SimConfig(latency="fixed:0", error_rate=1.0)) as sim, \
            httpx2.Client(base_url=sim.base_url) as client:
        failed = post(client, chat_body())
    assert failed.status_code == 500
    assert failed.json()["error"]["type"] == "server_error"
    with SimEndpoint(SimConfig(latency="uniform:0,0.01")) as sim, \
            httpx2.Client(base_url=sim.base_url) as client:
        one, two = post(client, chat_body()).json(), post(client, chat_body()).json()
        bad = client.post("/chat/completions", content=b"{not json")
    assert one["choices"] == two["choices"] and one["id"] == two["id"]
    assert bad.status_code == 400


# --------------------------------------------------------------------------- answers


def test_draft_uses_the_schema_enum_for_gains_and_names_from_the_text() -> None:
    draft = draft_for(ABSTRACT)
    assert draft["methods"] == ["FlashSort"]
    assert draft["benchmarks"] == [{"name": "SortBench", "new": False}]
    assert draft["gains"][0]["value"] == "12.5"
    assert draft["tasks"] == ["Sorting long lists on small devices is slow"]
    assert draft_for(ABSTRACT, draft_json_schema([]))["gains"] == []
    restricted = draft_for(ABSTRACT, draft_json_schema(["12.5", "7"]))
    assert [g["value"] for g in restricted["gains"]] == ["12.5"]
    PaperDraft.model_validate(draft)


@pytest.mark.parametrize(("mode", "constrain"), [("json", True), ("tools", False),
                                                 ("md_json", False)])
def test_papersift_extraction_through_instructor_is_valid_and_grounded(
        papers: list[Any], mode: str, constrain: bool) -> None:
    with SimEndpoint(SimConfig(latency="fixed:0")) as sim:
        extractor = Extractor(Endpoint(base_url=sim.base_url, model="gpt-4o-mini", mode=mode,
                                       constrain_json=constrain), load_prompt())
        try:
            outcomes = [extractor.extract(p.paper_id, p.text) for p in papers]
        finally:
            extractor.close()
        stats = sim.stats()
    assert all(o.ok and o.asks == 1 for o in outcomes), [o.failure for o in outcomes]
    grounded = {"tasks": 0, "methods": 0, "benchmarks": 0, "claimed_gains": 0}
    for paper, outcome in zip(papers, outcomes, strict=True):
        assert outcome.draft is not None
        built = assemble(outcome.draft, paper.text)
        for name, found in built.found.items():
            grounded[name] += sum(spot is not None for spot in found)
        for gain in outcome.draft.gains:
            if constrain:  # the request's enum is where the value came from
                assert gain.value in result_numbers(paper.text)
    assert grounded["tasks"] == len(papers)
    assert grounded["methods"] >= 3 and grounded["benchmarks"] >= 1
    assert grounded["claimed_gains"] >= 1
    assert stats["prompt_tokens"] == sum(o.prompt_tokens for o in outcomes)
    assert stats["completion_tokens"] == sum(o.completion_tokens for o in outcomes)


# --------------------------------------------------------------------------- batches


def batch_lines(papers: list[Any]) -> list[dict[str, Any]]:
    prompt = load_prompt()
    return [{"custom_id": p.paper_id, "method": "POST", "url": "/v1/chat/completions",
             "body": {"model": "gpt-4o-mini", "max_tokens": 256,
                      "messages": prompt.messages(p.text),
                      "response_format": {"type": "json_object"}}} for p in papers]


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@pytest.fixture
def sdk() -> Iterator[tuple[SimEndpoint, openai.OpenAI]]:
    with SimEndpoint(SimConfig(batch_seconds=0.3, batch_failure_rate=0.34, seed=1)) as sim:
        client = openai.OpenAI(base_url=sim.base_url, api_key="sk-test", max_retries=0)
        try:
            yield sim, client
        finally:
            client.close()


def wait_for(client: openai.OpenAI, batch_id: str) -> Any:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        batch = client.batches.retrieve(batch_id)
        if batch.status in ("completed", "failed", "cancelled", "expired"):
            return batch
        time.sleep(0.05)
    raise AssertionError(f"batch {batch_id} did not finish")


def test_files_and_batches_through_the_openai_sdk(sdk: tuple[SimEndpoint, openai.OpenAI],
                                                   papers: list[Any]) -> None:
    sim, client = sdk
    lines = batch_lines(papers)
    uploaded = client.files.create(file=("input.jsonl", jsonl(lines)), purpose="batch")
    assert uploaded.purpose == "batch" and uploaded.bytes == len(jsonl(lines))
    assert client.files.retrieve(uploaded.id).filename == "input.jsonl"
    assert client.files.content(uploaded.id).read() == jsonl(lines)
    created = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                    completion_window="24h", metadata={"run": "test"})
    assert created.status == "validating" and created.metadata == {"run": "test"}
    batch = wait_for(client, created.id)
    assert batch.status == "completed"
    assert batch.in_progress_at and batch.finalizing_at and batch.completed_at
    counts = batch.request_counts
    assert counts is not None and counts.total == len(lines)
    assert batch.output_file_id and batch.error_file_id  # seed 1: three of six lines fail
    outputs = list(read_jsonl(client.files.content(batch.output_file_id).read()))
    errors = list(read_jsonl(client.files.content(batch.error_file_id).read()))
    assert (counts.completed, counts.failed) == (len(outputs), len(errors))
    assert {o["custom_id"] for o in outputs} | {e["custom_id"] for e in errors} == {
        line["custom_id"] for line in lines}
    texts = {p.paper_id: p.text for p in papers}
    for output in outputs:
        assert output["error"] is None and output["response"]["status_code"] == 200
        content = output["response"]["body"]["choices"][0]["message"]["content"]
        built = assemble(PaperDraft.model_validate_json(content), texts[output["custom_id"]])
        assert built.found["tasks"][0] is not None
    kinds = {"server" if e["response"] is None else e["response"]["status_code"] for e in errors}
    assert kinds == {"server", 400}  # seed 1 gives both kinds of failed line
    assert all(e["error"] is None for e in errors if e["response"] is not None)
    assert [b.id for b in client.batches.list()] == [batch.id]
    stats = sim.stats()
    assert stats["batch_lines"] == len(lines) and stats["requests"] == 0
    assert stats["batch_prompt_tokens"] == sum(
        o["response"]["body"]["usage"]["prompt_tokens"] for o in outputs)
    assert batch.usage is not None and batch.usage.input_tokens == stats["batch_prompt_tokens"]


def test_bad_batch_input_fails_naming_the_lines(sdk: tuple[SimEndpoint, openai.OpenAI],
                                                papers: list[Any]) -> None:
    _, client = sdk
    lines = batch_lines(papers[:3])
    lines[1]["custom_id"] = lines[0]["custom_id"]
    lines[2]["url"] = "/v1/embeddings"
    data = jsonl(lines) + b"{broken\n"
    uploaded = client.files.create(file=("bad.jsonl", data), purpose="batch")
    batch = wait_for(client, client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions",
        completion_window="24h").id)
    assert batch.status == "failed" and batch.failed_at
    assert batch.errors is not None and batch.errors.data is not None
    found = {(e.code, e.line) for e in batch.errors.data}
    assert found == {("duplicate_custom_id", 2), ("invalid_url", 3), ("invalid_json_line", 4)}
    assert batch.output_file_id is None
    with pytest.raises(openai.NotFoundError):
        client.batches.create(input_file_id="file-missing", endpoint="/v1/chat/completions",
                              completion_window="24h")
    with pytest.raises(openai.BadRequestError):
        client.batches.create(input_file_id=uploaded.id, endpoint="/v1/embeddings",
                              completion_window="24h")


def test_batch_can_be_cancelled(papers: list[Any]) -> None:
    with SimEndpoint(SimConfig(batch_seconds=1.5)) as sim:
        client = openai.OpenAI(base_url=sim.base_url, api_key="sk-test", max_retries=0)
        try:
            uploaded = client.files.create(file=("in.jsonl", jsonl(batch_lines(papers))),
                                           purpose="batch")
            batch = client.batches.create(input_file_id=uploaded.id,
                                          endpoint="/v1/chat/completions",
                                          completion_window="24h")
            assert client.batches.cancel(batch.id).status == "cancelling"
            assert wait_for(client, batch.id).status == "cancelled"
            with pytest.raises(openai.ConflictError):
                client.batches.cancel(batch.id)
        finally:
            client.close()


def test_validation_accepts_a_good_file() -> None:
    lines = [{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions",
              "body": chat_body()}]
    assert validate_batch_input(jsonl(lines), "/v1/chat/completions") == (lines, [])
    assert validate_batch_input(b"", "/v1/chat/completions")[1][0]["code"] == "empty_file"


# --------------------------------------------------------------------------- processes


def test_spawned_endpoint_runs_in_its_own_process() -> None:
    with SimEndpoint.spawn(SimConfig(latency="fixed:0", rpm=6000)) as sim, \
            httpx2.Client(base_url=sim.base_url) as client:
        assert sim.base_url.endswith("/v1")
        answer = post(client, chat_body())
        assert answer.status_code == 200
        assert answer.headers["x-ratelimit-limit-requests"] == "6000"
        assert sim.stats()["requests"] == 1
        sim.reset()
        assert sim.stats()["requests"] == 0


# --------------------------------------------------------------------------- synth


def test_synthetic_corpus_is_distinct_deterministic_and_ingestible(tmp_path: Path) -> None:
    count = 150  # more than two passes over the 63 bundled abstracts
    paths = write_corpus(tmp_path / "jsonl", count, files=3, fmt="jsonl", seed=7)
    assert len(paths) == 3
    result = ingest(paths)
    assert result.problems == []
    assert len(result.papers) == count  # every abstract distinct
    ids = {paper.occurrences[0].source_id for paper in result.papers}
    assert len(ids) == count
    assert all("Synthetic" in (p.occurrences[0].title or "") for p in result.papers)
    bundled = {paper.paper_id for paper in ingest([CORPUS]).papers}
    assert not bundled & {paper.paper_id for paper in result.papers}
    again = [p.abstract for p in synth_papers(count, seed=7)]
    assert again == [" ".join(p.text.split()) for p in result.papers]
    assert again != [p.abstract for p in synth_papers(count, seed=8)]
    text = ingest(write_corpus(tmp_path / "txt", 70, fmt="txt"))
    assert len(text.papers) == 70 and text.problems == []
    assert "Synthetic" in (text.papers[0].occurrences[0].collection or "")


def test_batch_over_the_request_limit_fails(papers: list[Any]) -> None:
    with SimEndpoint(SimConfig(batch_seconds=0.1, max_batch_requests=2)) as sim:
        client = openai.OpenAI(base_url=sim.base_url, api_key="sk-test", max_retries=0)
        try:
            uploaded = client.files.create(file=("in.jsonl", jsonl(batch_lines(papers[:3]))),
                                           purpose="batch")
            batch = wait_for(client, client.batches.create(
                input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                completion_window="24h").id)
        finally:
            client.close()
    assert batch.status == "failed"
    assert batch.errors is not None and batch.errors.data is not None
    assert batch.errors.data[0].code == "too_many_requests"
