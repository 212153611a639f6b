"""A hand-written fake of OpenAI's Files and Batches routes (NOT a recording, not a model).

It stores uploaded files, accepts batches, and ends each batch after a chosen number of
polls with a chosen status, answering each line with drafts.first_words (plus, for a run
with user fields, the fixed answers ``user_answers`` gives for its abstract) or with a
scripted fault (an HTTP error line, broken JSON, a schema violation, a truncated answer, or
no line at all). Used through httpx2.MockTransport, so the real openai SDK talks to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from papersift.testing.bodies import chat_completion, last_abstract
from papersift.testing.drafts import first_words

FAULTS = ("http_500", "server_error", "invalid_json", "schema_violation", "length", "missing")


UserAnswers = Callable[[str], dict[str, Any]]


def answer_for(body: dict[str, Any], fault: str | None = None,
               user_answers: UserAnswers | None = None) -> dict[str, Any]:
    """A chat-completion body for one request: the fake draft (with ``user_answers`` of
    the abstract added), as a tool call when the request offers tools, else as message
    content; or the scripted fault."""
    abstract = last_abstract(body)
    draft = {**first_words(abstract), **(user_answers(abstract) if user_answers else {})}
    text = json.dumps(draft)
    if fault == "invalid_json":
        text = text[: len(text) // 2]
    elif fault == "schema_violation":
        text = json.dumps({**draft, "types": "not a list"})
    tool = body["tools"][0]["function"]["name"] if body.get("tools") else None
    return chat_completion(text, finish_reason="length" if fault == "length" else "stop",
                           prompt_tokens=1000, completion_tokens=40, tool=tool)


@dataclass
class FakeJob:
    info: dict[str, Any]
    lines: list[dict[str, Any]]
    polls: int = 0


@dataclass
class FakeBatchAPI:
    """Files and batches in memory. A batch ends after ``polls_to_finish`` retrievals with
    ``final_status``; ``faults`` maps a custom_id to one of FAULTS."""

    polls_to_finish: int = 2
    final_status: str = "completed"
    faults: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    jobs: dict[str, FakeJob] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    interrupt_on_poll: int | None = None  # raise KeyboardInterrupt at this poll (1-based)
    refuse_uploads: bool = False  # answer uploads with HTTP 400
    failing_polls: int = 0  # answer this many polls with HTTP 401
    polls: int = 0
    user_answers: UserAnswers | None = None  # a run's user fields, answered by abstract

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)

    @property
    def uploaded_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for name, data in self.files.items() if name.startswith("in")
                for line in data.decode().splitlines()]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        path = request.url.path.removeprefix("/v1")
        self.requests.append((request.method, path))
        parts = path.strip("/").split("/")
        if parts == ["files"] and request.method == "POST":
            if self.refuse_uploads:
                return httpx2.Response(400, json={"error": {"message": "file too large"}})
            return self._upload(request)
        if parts[0] == "files" and len(parts) == 3 and parts[2] == "content":
            return httpx2.Response(200, content=self.files[parts[1]])
        if parts == ["batches"] and request.method == "POST":
            return self._create(json.loads(request.content))
        if parts[0] == "batches" and len(parts) >= 2:
            job = self.jobs[parts[1]]
            if len(parts) == 3 and parts[2] == "cancel":
                job.info["status"] = "cancelling"
                job.polls = max(job.polls, self.polls_to_finish - 1)
                return httpx2.Response(200, json=job.info)
            return self._poll(job)
        return httpx2.Response(404, json={"error": {"message": f"no route {path}"}})

    def _upload(self, request: httpx2.Request) -> httpx2.Response:
        boundary = request.headers["content-type"].split("boundary=")[1].encode()
        for part in request.content.split(b"--" + boundary):
            head, _, data = part.partition(b"\r\n\r\n")
            if b'name="file"' in head:
                file_id = f"in-{len(self.files) + 1}"
                self.files[file_id] = data.removesuffix(b"\r\n")
                return httpx2.Response(200, json={
                    "id": file_id, "object": "file", "bytes": len(data), "created_at": 0,
                    "filename": "input.jsonl", "purpose": "batch", "status": "processed"})
        return httpx2.Response(400, json={"error": {"message": "no file part"}})

    def _create(self, body: dict[str, Any]) -> httpx2.Response:
        batch_id = f"batch_fake_{len(self.jobs) + 1}"
        lines = [json.loads(line) for line in self.files[body["input_file_id"]].splitlines()]
        info = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                "input_file_id": body["input_file_id"], "completion_window": "24h",
                "status": "validating", "created_at": 0, "metadata": body.get("metadata"),
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        self.jobs[batch_id] = FakeJob(info, lines)
        return httpx2.Response(200, json=info)

    def _poll(self, job: FakeJob) -> httpx2.Response:
        if self.failing_polls:
            self.failing_polls -= 1
            return httpx2.Response(401, json={"error": {"message": "bad key"}})
        self.polls += 1
        if self.interrupt_on_poll is not None and self.polls == self.interrupt_on_poll:
            raise KeyboardInterrupt  # what Ctrl-C looks like from inside a request
        job.polls += 1
        if job.info["status"] in ("completed", "expired", "cancelled", "failed"):
            return httpx2.Response(200, json=job.info)
        if job.polls < self.polls_to_finish:
            job.info["status"] = "in_progress"
            return httpx2.Response(200, json=job.info)
        final = "cancelled" if job.info["status"] == "cancelling" else self.final_status
        self._finish(job, final)
        return httpx2.Response(200, json=job.info)

    def _finish(self, job: FakeJob, status: str) -> None:
        """Answer the lines: all of them when completed, the first half otherwise."""
        lines = job.lines if status == "completed" else job.lines[: len(job.lines) // 2]
        output, errors = [], []
        for line in lines:
            fault = self.faults.get(line["custom_id"])
            if fault == "missing":
                continue
            if fault == "server_error":  # a line the provider could not run at all
                errors.append({"id": "r", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "server_error", "message": "failed"}})
                continue
            if fault == "http_500":
                errors.append({"id": "r", "custom_id": line["custom_id"], "error": None,
                               "response": {"status_code": 500, "body": {"error": {
                                   "message": "simulated server error"}}}})
                continue
            output.append({"id": "r", "custom_id": line["custom_id"], "error": None,
                           "response": {"status_code": 200,
                                        "body": answer_for(line["body"], fault,
                                                           self.user_answers)}})
        batch_id = job.info["id"]
        for kind, rows in (("output", output), ("error", errors)):
            if rows:
                file_id = f"{kind}-{batch_id}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                job.info[f"{kind}_file_id"] = file_id
        job.info["status"] = status
        job.info["request_counts"] = {"total": len(job.lines), "completed": len(output),
                                      "failed": len(errors)}
