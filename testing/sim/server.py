"""The one fake OpenAI server's state and routes (hand-written, NOT a model): chat
completions under latency, slots and RPM / TPM limits, with faults; files and batches."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import random
import time
from typing import Any

from papersift.testing.bodies import error_body, first_user_abstract
from papersift.testing.sim.answers import bad_chat_request, completion_for
from papersift.testing.sim.config import SimConfig, TokenBucket, reset_text, sampler
from papersift.testing.sim.faults import (
    RequestLog,
    Served,
    configured_answer,
    seconds_asked,
)
from papersift.testing.sim.tokens import rate_cost
from papersift.testing.sim.wire import (
    MAX_BODY_BYTES,
    BatchJob,
    Request,
    Response,
    Stats,
    StoredFile,
    error_response,
    json_response,
    parse_multipart,
    read_request,
    validate_batch_input,
    write_response,
)


class SimServer:
    """The simulated endpoint's state and routes; runs inside one asyncio loop."""

    def __init__(self, config: SimConfig, log: RequestLog | None = None) -> None:
        self.config = config
        self.log = log or RequestLog(config.fault_rate, config.fault_mix, config.fault_rules,
                                     config.seed)
        self.reset()

    def reset(self) -> None:
        config = self.config
        self.rng = random.Random(config.seed)
        self.latency = sampler(config.latency, self.rng)
        self.slots = asyncio.Semaphore(config.concurrency) if config.concurrency else None
        now = time.monotonic()
        self.requests_bucket = TokenBucket(config.rpm, config.burst_s, now) if config.rpm \
            else None
        self.tokens_bucket = TokenBucket(config.tpm, config.burst_s, now) if config.tpm \
            else None
        self.stats = Stats()
        self.files: dict[str, StoredFile] = {}
        self.batches: dict[str, BatchJob] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.counter = 0

    def _next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-sim{self.counter:06d}"

    # ---- routing

    async def handle(self, request: Request) -> Response:
        path = request.path
        try:
            if path in ("/v1/chat/completions", "/chat/completions"):
                if request.method != "POST":
                    return error_response(405, "use POST")
                return await self.chat(request)
            if request.method == "GET" and path in ("/v1/models", "/models"):
                return json_response(200, {"object": "list", "data": [
                    {"id": self.config.model, "object": "model"}]})
            if path == "/sim/stats":
                return json_response(200, self.stats.as_json())
            if path == "/sim/reset" and request.method == "POST":
                for task in self.tasks:
                    task.cancel()
                self.reset()
                return json_response(200, {"reset": True})
            if path.startswith("/v1/files"):
                return self.files_route(request)
            if path.startswith("/v1/batches"):
                return self.batches_route(request)
        except (ValueError, KeyError, TypeError) as problem:
            return error_response(400, f"bad request: {problem}")
        return error_response(404, f"no route {request.method} {path}", code="unknown_url")

    # ---- chat completions

    def _limit_headers(self, now: float) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.requests_bucket is not None:
            headers.update(self.requests_bucket.headers("requests", now))
        if self.tokens_bucket is not None:
            headers.update(self.tokens_bucket.headers("tokens", now))
        return headers

    def _count(self, status: int) -> None:
        key = str(status)
        self.stats.by_status[key] = self.stats.by_status.get(key, 0) + 1

    async def chat(self, request: Request) -> Response:
        stats = self.stats
        stats.requests += 1
        wall = time.time()
        stats.first_request_at = stats.first_request_at or wall
        stats.last_request_at = wall
        try:
            body = json.loads(request.body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._count(400)
            return error_response(400, "the request body is not valid JSON")
        problem = bad_chat_request(body)
        if problem:
            self._count(400)
            return error_response(400, problem)
        now = time.monotonic()
        limited = self._admit(body, now)
        if limited is not None:
            self._count(429)
            return limited
        headers = self._limit_headers(now)
        abstract, paper_id, fault = None, None, None
        config = self.config
        if config.log_requests or config.fault_rate or config.fault_rules:
            abstract = first_user_abstract(body)
            paper_id, fault = self.log.choose(abstract)
            if config.log_requests:
                self._log(paper_id, fault, request, body)
        if self.slots is not None:
            stats.queued.up()
            await self.slots.acquire()
            stats.queued.down()
        try:
            stats.in_flight.up()
            failed = self.config.error_rate > 0 and self.rng.random() < self.config.error_rate
            answer = completion_for(body, self.config.model, int(wall)) \
                if self.config.answer is None else None
            tokens = answer["usage"]["completion_tokens"] if answer else 0
            delay = self.latency() + self.config.seconds_per_token * tokens
            if delay > 0:
                await asyncio.sleep(delay)
        finally:
            stats.in_flight.down()
            if self.slots is not None:
                self.slots.release()
        stats.last_answer_at = time.time()
        if failed:
            self._count(500)
            return Response(500, json.dumps(error_body(
                "The server had an error while processing your request (simulated).",
                "server_error", None)).encode(), headers=headers)
        if answer is None or fault is not None:
            reply = await configured_answer(self.config, fault, abstract, body,
                                            request.headers, answer)
            self._count(reply.status)
            if self.config.extra_headers is not None:
                reply.headers.update(self.config.extra_headers(fault))
            return reply
        self._count(200)
        stats.tokens.add(answer["usage"])
        headers["x-request-id"] = f"req_{answer['id'][-16:]}"
        return Response(200, json.dumps(answer).encode("utf-8"), headers=headers)

    def _log(self, paper_id: str | None, fault: str | None, request: Request,
             body: dict[str, Any]) -> None:
        config = self.config
        asked = seconds_asked(config.retry_after, config.retry_after_ms) \
            if fault == "rate_limit" else None
        self.log.record(Served(time.monotonic(), paper_id, fault, asked,
                               request.headers.get("authorization"),
                               body if config.keep_bodies else None))

    def _admit(self, body: dict[str, Any], now: float) -> Response | None:
        """None when the request fits both limits (and is charged), else its 429."""
        cost = rate_cost(body) if self.tokens_bucket is not None else 0
        for kind, bucket, amount in (("requests", self.requests_bucket, 1),
                                     ("tokens", self.tokens_bucket, cost)):
            if bucket is None:
                continue
            wait = bucket.wait_for(amount, now)
            if wait > 0:
                self.stats.rate_limited[kind] += 1
                limit = int(bucket.limit)
                if kind == "requests":
                    message = (f"Rate limit reached for requests per min (RPM): Limit {limit}, "
                               f"Used {limit}, Requested 1. Please try again in "
                               f"{reset_text(wait)}.")
                else:
                    used = limit - max(0, int(bucket.level))
                    message = (f"Rate limit reached for tokens per min (TPM): Limit {limit}, "
                               f"Used {used}, Requested {amount}. Please try again in "
                               f"{reset_text(wait)}.")
                headers = self._limit_headers(now)
                headers["retry-after"] = str(max(1, math.ceil(wait)))
                headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
                return Response(429, json.dumps(error_body(
                    message, kind, "rate_limit_exceeded")).encode(), headers=headers)
        for bucket, amount in ((self.requests_bucket, 1), (self.tokens_bucket, cost)):
            if bucket is not None:
                bucket.take(amount)
        return None

    # ---- files

    def files_route(self, request: Request) -> Response:
        parts = request.path.strip("/").split("/")  # v1 files [id] [content]
        if len(parts) == 2:
            if request.method == "POST":
                return self.upload(request)
            listed = [f.describe() for f in self.files.values()]
            return json_response(200, {"object": "list", "data": listed, "has_more": False})
        stored = self.files.get(parts[2])
        if stored is None:
            return error_response(404, f"No such File object: {parts[2]}", param="id")
        if len(parts) == 3:
            return json_response(200, stored.describe())
        if len(parts) == 4 and parts[3] == "content":
            return Response(200, stored.data, content_type="application/octet-stream")
        return error_response(404, f"no route {request.path}")

    def store_file(self, filename: str, purpose: str, data: bytes) -> StoredFile:
        stored = StoredFile(self._next_id("file"), filename, purpose, data, int(time.time()))
        self.files[stored.id] = stored
        self.stats.files += 1
        return stored

    def upload(self, request: Request) -> Response:
        content_type = request.headers.get("content-type", "")
        if not content_type.startswith("multipart/form-data"):
            return error_response(400, "upload files as multipart/form-data")
        fields = parse_multipart(content_type, request.body)
        if "file" not in fields:
            return error_response(400, "missing the 'file' field", param="file")
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if purpose != "batch":
            return error_response(400, f"this simulator stores purpose 'batch' files only, "
                                  f"not {purpose!r}", param="purpose")
        filename, data = fields["file"]
        if len(data) > self.config.max_file_bytes:
            return error_response(400, f"file of {len(data):,} bytes is over the "
                                  f"{self.config.max_file_bytes:,}-byte limit", param="file")
        stored = self.store_file(filename or "upload.jsonl", purpose, data)
        return json_response(200, stored.describe())

    # ---- batches

    def batches_route(self, request: Request) -> Response:
        parts = request.path.strip("/").split("/")  # v1 batches [id] [cancel]
        if len(parts) == 2:
            if request.method == "POST":
                return self.create_batch(json.loads(request.body or b"{}"))
            return self.list_batches(request.query)
        job = self.batches.get(parts[2])
        if job is None:
            return error_response(404, f"No batch found with id '{parts[2]}'", param="id")
        if len(parts) == 3:
            return json_response(200, job.info)
        if len(parts) == 4 and parts[3] == "cancel" and request.method == "POST":
            if job.info["status"] in ("validating", "in_progress"):
                job.cancel = True
                job.info["status"] = "cancelling"
                job.info["cancelling_at"] = int(time.time())
                return json_response(200, job.info)
            return error_response(409, f"Cannot cancel a batch with status '{job.info['status']}'")
        return error_response(404, f"no route {request.path}")

    def list_batches(self, query: dict[str, str]) -> Response:
        newest_first = list(reversed(self.batches))
        after = query.get("after")
        if after in self.batches:
            newest_first = newest_first[newest_first.index(after) + 1:]
        limit = max(1, min(100, int(query.get("limit", "20"))))
        page = newest_first[:limit]
        return json_response(200, {
            "object": "list", "data": [self.batches[b].info for b in page],
            "first_id": page[0] if page else None, "last_id": page[-1] if page else None,
            "has_more": len(newest_first) > limit})

    def create_batch(self, body: dict[str, Any]) -> Response:
        input_file_id = body.get("input_file_id")
        endpoint = body.get("endpoint")
        if endpoint != "/v1/chat/completions":
            return error_response(400, f"endpoint {endpoint!r} is not supported; use "
                                  "/v1/chat/completions", param="endpoint")
        if body.get("completion_window") != "24h":
            return error_response(400, "completion_window must be '24h'",
                                  param="completion_window")
        stored = self.files.get(str(input_file_id))
        if stored is None:
            return error_response(404, f"No such File object: {input_file_id}",
                                  param="input_file_id")
        if stored.purpose != "batch":
            return error_response(400, f"file {stored.id} has purpose {stored.purpose!r}, "
                                  "not 'batch'", param="input_file_id")
        now = int(time.time())
        info: dict[str, Any] = {
            "id": self._next_id("batch"), "object": "batch", "endpoint": endpoint,
            "errors": None, "input_file_id": stored.id, "completion_window": "24h",
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": now, "in_progress_at": None, "expires_at": now + 86400,
            "finalizing_at": None, "completed_at": None, "failed_at": None, "expired_at": None,
            "cancelling_at": None, "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"), "model": None, "usage": None,
        }
        job = BatchJob(info)
        self.batches[info["id"]] = job
        self.stats.batches += 1
        task = asyncio.get_running_loop().create_task(self.run_batch(job, stored.data))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return json_response(200, info)

    def _line_fails(self, custom_id: str) -> str | None:
        """Seeded per line: None (answered), 'server' (500) or 'client' (400 body)."""
        rate = self.config.batch_failure_rate
        if rate <= 0:
            return None
        digest = hashlib.sha256(f"{self.config.seed}:{custom_id}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        if draw >= rate:
            return None
        return "server" if digest[8] % 2 else "client"

    async def run_batch(self, job: BatchJob, data: bytes) -> None:
        info = job.info
        step = self.config.batch_seconds / 3
        await asyncio.sleep(step)
        requests, errors = validate_batch_input(data, info["endpoint"])
        if len(requests) > self.config.max_batch_requests:
            errors = [{"code": "too_many_requests", "line": None, "param": None,
                       "message": f"{len(requests):,} requests, over the limit of "
                                  f"{self.config.max_batch_requests:,} per batch"}]
        if errors:
            info.update(status="failed", failed_at=int(time.time()),
                        errors={"object": "list", "data": errors})
            return
        if job.cancel:
            info.update(status="cancelled", cancelled_at=int(time.time()))
            return
        info.update(status="in_progress", in_progress_at=int(time.time()),
                    model=str(requests[0]["body"].get("model") or self.config.model))
        counts = info["request_counts"]
        counts["total"] = len(requests)
        outputs: list[str] = []
        failures: list[str] = []
        prompt_total = completion_total = 0
        started = time.monotonic()
        for index, line in enumerate(requests):
            if job.cancel:
                break
            custom_id = line["custom_id"]
            record, ok, usage = self._batch_line(info["id"], custom_id, line["body"])
            (outputs if ok else failures).append(json.dumps(record))
            counts["completed" if ok else "failed"] += 1
            prompt_total += usage[0]
            completion_total += usage[1]
            if index % 200 == 199:  # let other requests in; spread the work over step
                target = started + step * (index + 1) / len(requests)
                await asyncio.sleep(max(0.0, target - time.monotonic()))
        await asyncio.sleep(max(0.0, started + step - time.monotonic()))
        if not job.cancel:
            info.update(status="finalizing", finalizing_at=int(time.time()))
            await asyncio.sleep(step)
        shuffler = random.Random(f"{self.config.seed}:{info['id']}")
        shuffler.shuffle(outputs)
        shuffler.shuffle(failures)
        if outputs:
            info["output_file_id"] = self.store_file(
                f"{info['id']}_output.jsonl", "batch_output",
                ("\n".join(outputs) + "\n").encode("utf-8")).id
        if failures:
            info["error_file_id"] = self.store_file(
                f"{info['id']}_error.jsonl", "batch_output",
                ("\n".join(failures) + "\n").encode("utf-8")).id
        info["usage"] = {"input_tokens": prompt_total,
                         "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": completion_total,
                         "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": prompt_total + completion_total}
        done = int(time.time())
        if job.cancel:
            info.update(status="cancelled", cancelled_at=done)
        else:
            info.update(status="completed", completed_at=done)

    def _batch_line(self, batch_id: str, custom_id: str, body: dict[str, Any]) -> tuple[
            dict[str, Any], bool, tuple[int, int]]:
        """One output or error file record, whether it succeeded, and its tokens."""
        stats = self.stats
        stats.batch_lines += 1
        line_id = f"batch_req_{hashlib.sha256(f'{batch_id}:{custom_id}'.encode()).hexdigest()[:24]}"
        request_id = f"req_{line_id[-20:]}"
        fate = self._line_fails(custom_id)
        problem = bad_chat_request(body)
        if fate == "server":
            stats.batch_lines_failed += 1
            return ({"id": line_id, "custom_id": custom_id, "response": None,
                     "error": {"code": "server_error",
                               "message": "The server failed to process this request "
                                          "(simulated)."}}, False, (0, 0))
        if fate == "client" or problem:
            stats.batch_lines_failed += 1
            message = problem or "Invalid request (simulated failure)."
            return ({"id": line_id, "custom_id": custom_id,
                     "response": {"status_code": 400, "request_id": request_id,
                                  "body": error_body(message, "invalid_request_error", None)},
                     "error": None}, False, (0, 0))
        answer = completion_for(body, self.config.model, int(time.time()))
        usage = answer["usage"]
        stats.batch_tokens.add(usage)
        return ({"id": line_id, "custom_id": custom_id,
                 "response": {"status_code": 200, "request_id": request_id, "body": answer},
                 "error": None}, True, (usage["prompt_tokens"], usage["completion_tokens"]))

    # ---- connections

    async def serve_connection(self, reader: asyncio.StreamReader,
                               writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await read_request(reader)
                if request is None:
                    break
                if isinstance(request, Response):
                    await write_response(writer, request, keep_alive=False)
                    break
                response = await self.handle(request)
                if response.drop:  # a fault: the connection ends without an answer
                    break
                keep_alive = self.config.keep_alive and \
                    request.headers.get("connection", "").lower() != "close"
                await write_response(writer, response, keep_alive=keep_alive)
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()



async def serve(config: SimConfig, host: str, port: int, ready: Any,
                stop: asyncio.Event | None = None, log: RequestLog | None = None) -> None:
    """Serve until ``stop`` is set (or forever); ``ready(port)`` is called once listening."""
    state = SimServer(config, log)
    server = await asyncio.start_server(state.serve_connection, host, port, backlog=4096,
                                        limit=MAX_BODY_BYTES)
    ready(server.sockets[0].getsockname()[1])
    async with server:
        if stop is None:
            await server.serve_forever()
        else:
            await stop.wait()
