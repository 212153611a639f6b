"""Running the simulator (a hand-written fake OpenAI endpoint): in a thread of this
process or as its own process, its self-test, and its command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from papersift.testing.sim.config import SimConfig
from papersift.testing.sim.faults import FAULTS, RequestLog, Served
from papersift.testing.sim.server import serve

REPO_ROOT = Path(__file__).resolve().parent.parent.parent  # the source tree


class SimEndpoint:
    """A running fake OpenAI server: in a background thread, or (``spawn``) in a separate
    process. A context manager; ``base_url`` ends in /v1. In this process, with
    ``config.log_requests``, ``log`` holds every chat request it served."""

    def __init__(self, config: SimConfig | None = None, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.config = config or SimConfig()
        self.host = host
        self.port = port
        self.requests = RequestLog(self.config.fault_rate, self.config.fault_mix,
                                   self.config.fault_rules, self.config.seed)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._process: subprocess.Popen[str] | None = None

    @classmethod
    def spawn(cls, config: SimConfig | None = None, host: str = "127.0.0.1") -> SimEndpoint:
        """An endpoint that runs as ``python -m papersift.testing.sim`` in its own process."""
        endpoint = cls(config, host)
        endpoint._process = subprocess.Popen(
            [sys.executable, "-m", "papersift.testing.sim", "--host", host, "--port", "0",
             "--config-json", json.dumps(endpoint.config.as_json())],
            cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        assert endpoint._process.stdout is not None
        line = endpoint._process.stdout.readline()
        match = re.match(r"listening on port (\d+)", line)
        if not match:
            endpoint._process.kill()
            raise RuntimeError(f"the simulated endpoint did not start: {line!r}")
        endpoint.port = int(match.group(1))
        return endpoint

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> SimEndpoint:
        if self._process is not None or self._thread is not None:
            return self
        started = threading.Event()
        failure: list[BaseException] = []

        def ready(port: int) -> None:
            self.port = port
            started.set()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            self._stop = asyncio.Event()
            try:
                loop.run_until_complete(serve(self.config, self.host, self.port, ready,
                                              self._stop, self.requests))
            except BaseException as problem:  # reported to the starting thread
                failure.append(problem)
                started.set()
            finally:  # end open connections and batches so no socket is left unclosed
                pending = asyncio.all_tasks(loop)
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()
                asyncio.set_event_loop(None)

        self._thread = threading.Thread(target=run, name="simendpoint", daemon=True)
        self._thread.start()
        started.wait(10)
        if failure:
            raise RuntimeError(f"the simulated endpoint did not start: {failure[0]}")
        return self

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._process = None
        if self._thread is not None and self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> SimEndpoint:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    @property
    def log(self) -> list[Served]:
        """Every chat request served so far (with ``config.log_requests``), in order."""
        return self.requests.snapshot()

    def requests_for(self, paper_id: str) -> list[Served]:
        return self.requests.requests_for(paper_id)

    def faults_by_paper(self) -> dict[str, list[str | None]]:
        """Each paper's served faults, in order (None: a valid answer)."""
        return self.requests.faults_by_paper()

    def retry_after_gaps(self) -> list[tuple[float, float]]:
        """(asked seconds, measured gap) for every 429 fault followed by another request
        for the same paper."""
        return self.requests.retry_after_gaps()

    def _call(self, method: str, path: str) -> dict[str, Any]:
        request = urllib.request.Request(self.root_url + path, method=method, data=(
            b"" if method == "POST" else None))
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback
        with direct.open(request, timeout=30) as answer:
            result: dict[str, Any] = json.loads(answer.read())
            return result

    def stats(self) -> dict[str, Any]:
        """The counters of GET /sim/stats."""
        return self._call("GET", "/sim/stats")

    def reset(self) -> None:
        """Forget counters, limits' state, files and batches (POST /sim/reset)."""
        self._call("POST", "/sim/reset")


@contextlib.contextmanager
def running(config: SimConfig | None = None) -> Iterator[SimEndpoint]:
    """A server started in this process (a thread), stopped when the block ends."""
    with SimEndpoint(config) as server:
        yield server


# --------------------------------------------------------------------------- self-test


# Sized like papersift's requests: a ~4 KB static system prompt, a ~1.5 KB abstract.
_SELFTEST_SYSTEM = "Extract the paper's tasks, methods, benchmarks and gains as JSON. " * 60
_SELFTEST_FILLER = ("The evaluation covers several settings and ablations in detail, comparing "
                    "against strong baselines under equal compute budgets and reporting the "
                    "variance across seeds. ") * 7


def _selftest_body(index: int) -> bytes:
    abstract = (f"We propose SimNet-{index}, a method for fast sorting. {_SELFTEST_FILLER}"
                f"On the SortBench benchmark it improves accuracy by {index % 50}.5% over "
                "baselines.")
    body = {"model": "sim", "max_tokens": 256, "messages": [
        {"role": "system", "content": _SELFTEST_SYSTEM},
        {"role": "user", "content": f'Abstract:\n"""\n{abstract}\n"""'}]}
    return json.dumps(body).encode()


async def _selftest_client(port: int, requests: int, connections: int) -> tuple[float, int]:
    """Fire ``requests`` chat completions over ``connections`` keep-alive connections
    (raw sockets, so the client costs little); (seconds, answers with status 200)."""
    queue = list(range(requests))
    ok = 0

    async def worker() -> None:
        nonlocal ok
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while queue:
            body = _selftest_body(queue.pop())
            writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nhost: sim\r\n"
                         b"content-type: application/json\r\ncontent-length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
            await reader.readexactly(length)
            ok += head.startswith(b"HTTP/1.1 200")
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return time.perf_counter() - started, ok


def selftest(requests: int = 2000, connections: int = 256, latency: str = "fixed:0.001") -> str:
    """Requests per second a spawned endpoint sustains with a tiny fixed latency, for
    requests sized like papersift's (~4 KB system prompt, ~1.5 KB abstract)."""
    config = SimConfig(latency=latency)
    with SimEndpoint.spawn(config) as sim:
        seconds, ok = asyncio.run(_selftest_client(sim.port, requests, connections))
        stats = sim.stats()
    return (f"selftest: {requests} requests over {connections} keep-alive connections, "
            f"latency {latency}: {seconds:.2f} s, {requests / seconds:,.0f} requests/s, "
            f"{ok} answered 200, max {stats['max_in_flight']} in processing at once")


# --------------------------------------------------------------------------- command line


def _config_from(args: argparse.Namespace) -> SimConfig:
    if args.config_json:
        values = json.loads(args.config_json)
        values["fault_mix"] = tuple(values.get("fault_mix", FAULTS))
        return SimConfig(**values)
    return SimConfig(latency=args.latency, seconds_per_token=args.seconds_per_token,
                     concurrency=args.concurrency, rpm=args.rpm, tpm=args.tpm,
                     burst_s=args.burst_s, seed=args.seed, error_rate=args.error_rate,
                     batch_seconds=args.batch_seconds,
                     batch_failure_rate=args.batch_failure_rate,
                     max_batch_requests=args.max_batch_requests)


def main(argv: list[str] | None = None) -> int:
    """Run the simulated endpoint (prints 'listening on port N'), or --selftest."""
    parser = argparse.ArgumentParser(prog="python -m papersift.testing.sim",
                                     description=main.__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--latency", default="fixed:0.2")
    parser.add_argument("--seconds-per-token", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=None)
    parser.add_argument("--rpm", type=float, default=None)
    parser.add_argument("--tpm", type=float, default=None)
    parser.add_argument("--burst-s", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--error-rate", type=float, default=0.0)
    parser.add_argument("--batch-seconds", type=float, default=1.0)
    parser.add_argument("--batch-failure-rate", type=float, default=0.0)
    parser.add_argument("--max-batch-requests", type=int, default=50_000)
    parser.add_argument("--config-json", default=None, help="a SimConfig as JSON (overrides)")
    parser.add_argument("--selftest", action="store_true",
                        help="spawn an endpoint, fire requests at it, print requests/s")
    parser.add_argument("--requests", type=int, default=2000, help="for --selftest")
    parser.add_argument("--connections", type=int, default=256, help="for --selftest")
    args = parser.parse_args(argv)
    if args.selftest:
        print(selftest(args.requests, args.connections))
        return 0
    config = _config_from(args)

    def ready(port: int) -> None:
        print(f"listening on port {port}", flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config, args.host, args.port, ready))
    return 0


def read_jsonl(data: bytes) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file's bytes (for reading output and error files)."""
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            yield json.loads(line)

