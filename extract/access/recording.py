"""Record real HTTP exchanges with a model server, and replay them in tests.

Recordings fake the network at the HTTP boundary, so the real openai + instructor code
runs in tests. Only the request body (canonical JSON) and path identify a request; no
request headers are stored, so no key can leak into a recording. A request that has no
recording fails loudly.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from papersift.errors import PapersiftError
from papersift.extract.access.credentials import in_every_string
from papersift.extract.access.llm import redact

KEPT_RESPONSE_HEADERS = ("content-type", "retry-after")


class MissingRecordingError(PapersiftError, LookupError):
    """The code under test made a request the recording does not have."""


def request_key(request: httpx2.Request) -> str:
    """Identify a request by method, path and canonical JSON body (not host, not headers)."""
    body = request.content
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"))
    except ValueError:
        canonical = body.decode("utf-8", "replace")
    material = f"{request.method} {request.url.path}\n{canonical}"
    return "sha256:" + hashlib.sha256(material.encode("utf-8")).hexdigest()


def _summary(request: httpx2.Request) -> dict[str, Any]:
    """A readable hint of what was asked: the model and the last message's opening."""
    try:
        body = json.loads(request.content)
    except ValueError:
        return {}
    messages = body.get("messages") or []
    last = messages[-1].get("content", "") if messages else ""
    return {
        "model": body.get("model"),
        "messages": len(messages),
        "last_message": str(last)[:160],
    }


@dataclass
class Recording:
    """A recording file: who made it, and the exchanges."""

    meta: dict[str, Any]
    interactions: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Recording:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(meta=data["recorded_with"], interactions=data["interactions"])

    def add(self, entry: dict[str, Any]) -> None:
        self.interactions.append(entry)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"recorded_with": self.meta, "interactions": self.interactions}
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


class RecordingTransport(httpx2.BaseTransport):
    """Passes requests to a real transport and keeps every exchange, secrets redacted."""

    def __init__(self, inner: httpx2.BaseTransport, recording: Recording,
                 secrets: tuple[str, ...] = ()) -> None:
        self.inner = inner
        self.recording = recording
        self.secrets = tuple(secret for secret in secrets if secret)
        self._lock = threading.Lock()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        started = time.perf_counter()
        response = self.inner.handle_request(request)
        response.read()
        try:
            body: Any = json.loads(response.content)
        except ValueError:
            body = response.text
        entry = {
            "key": request_key(request),
            "method": request.method,
            "path": request.url.path,
            "request": _summary(request),
            "status": response.status_code,
            "headers": {k: v for k, v in response.headers.items()
                        if k.lower() in KEPT_RESPONSE_HEADERS},
            "body": body,
            "latency_ms": round((time.perf_counter() - started) * 1000.0, 1),
        }
        with self._lock:
            self.recording.add(in_every_string(entry, lambda text: redact(text, self.secrets)))
        return httpx2.Response(
            response.status_code, headers=response.headers, content=response.content,
            request=request,
        )

    def close(self) -> None:
        self.inner.close()


class ReplayTransport(httpx2.BaseTransport):
    """Answers requests from a recording; counts them; fails loudly on unknown ones."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self._by_key: dict[str, list[dict[str, Any]]] = {}
        for entry in recording.interactions:
            self._by_key.setdefault(entry["key"], []).append(entry)
        self._served: dict[str, int] = {}
        self.requests = 0
        self.missing: list[str] = []  # requests with no recording (each also raised)
        self._lock = threading.Lock()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        key = request_key(request)
        with self._lock:
            self.requests += 1
            entries = self._by_key.get(key)
            if not entries:
                self.missing.append(key)
                raise MissingRecordingError(
                    f"no recorded answer for {request.method} {request.url.path} "
                    f"{json.dumps(_summary(request))[:300]} (key {key[:20]}…); "
                    "re-record with `make record`"
                )
            index = self._served.get(key, 0)
            self._served[key] = index + 1
            entry = entries[min(index, len(entries) - 1)]
        body = entry["body"]
        content = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode()
        headers = dict(entry.get("headers") or {})
        headers.setdefault("content-type", "application/json")
        return httpx2.Response(entry["status"], headers=headers, content=content, request=request)


class IncrementalRecording(Recording):
    """A recording saved to disk after every exchange, so a long session survives a crash."""

    def __init__(self, path: Path, meta: dict[str, Any]) -> None:
        super().__init__(meta=meta)
        self.path = path

    def add(self, entry: dict[str, Any]) -> None:
        super().add(entry)
        self.save(self.path)


def _local_model_description(endpoint: Any) -> str | None:
    """Model, quantisation and hash of a catalogue model, for the recording's header."""
    if endpoint.kind != "local":
        return None
    from papersift.extract.access.models import CATALOGUE

    spec = CATALOGUE.get(endpoint.model)
    if spec is None:
        return str(endpoint.cache_identity)
    return f"{spec.filename}: {spec.description}, sha256 {spec.sha256}"


def recording_transport(
    path: Path, endpoint: Any, prompt_version: str, inner: httpx2.BaseTransport | None = None
) -> RecordingTransport:
    """A transport that saves every exchange with ``endpoint`` to ``path`` as it happens."""
    from importlib.metadata import PackageNotFoundError, version

    from papersift.schemas import schema_version

    def _version(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    meta = {
        "source": "real responses recorded from a live server (not hand-written)",
        "endpoint": endpoint.describe(),
        "endpoint_identity": endpoint.stored_identity,
        "server": f"llama-cpp-python {_version('llama-cpp-python')} (python -m llama_cpp.server)"
        if endpoint.kind == "local"
        else endpoint.base_url,
        "model_file": _local_model_description(endpoint),
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "prompt_version": prompt_version,
        "schema_version": schema_version(),
        "openai": _version("openai"),
        "instructor": _version("instructor"),
    }
    recording = IncrementalRecording(path, meta)
    if path.exists():  # resume an interrupted recording session: keep what it has
        previous = Recording.load(path)
        if previous.meta.get("prompt_version") == prompt_version:
            recording.interactions.extend(previous.interactions)
    secrets = (endpoint.api_key,) if getattr(endpoint, "api_key", None) else ()
    return RecordingTransport(inner or httpx2.HTTPTransport(), recording, secrets)
