"""Server lifecycle, tested with a hand-made fake server script instead of llama.cpp."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from papersift.extract.access import local_server
from papersift.extract.access import threads as threads_module
from papersift.extract.access.local_server import (
    LocalServer,
    LocalServerError,
    pick_free_port,
    server_environment,
)

REPO_ROOT = Path(__file__).resolve().parent.parent

# A hand-made stand-in for llama_cpp.server: it accepts the same flags, answers
# GET /v1/models with the alias, and like uvicorn in llama_cpp.server it prefers
# $PORT over --port. --fake-mode selects a misbehaviour.
FAKE_SERVER = textwrap.dedent(
    """
    import argparse, json, os, signal, subprocess, sys, time
    from http.server import BaseHTTPRequestHandler, HTTPServer

    parser = argparse.ArgumentParser()
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--model_alias")
    parser.add_argument("--fake-mode", default="ok")
    args, _unknown = parser.parse_known_args()
    print("fake server argv:", " ".join(sys.argv[1:]), flush=True)

    if args.fake_mode == "die":
        print("fake failure: the model file is not a GGUF", flush=True)
        sys.exit(3)
    if args.fake_mode == "hang":
        time.sleep(600)
    if args.fake_mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.fake_mode == "grandchild":
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print(f"grandchild {helper.pid}", flush=True)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/v1/models":
                self.send_error(404)
                return
            body = json.dumps({"object": "list", "data": [{"id": args.model_alias}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args):
            pass

    if args.fake_mode == "crash-after-ready":  # answers once, then dies as from SIGSEGV
        import threading
        def crash():
            time.sleep(1.0)
            print("fake crash: general protection fault in libggml-cpu", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        threading.Thread(target=crash, daemon=True).start()

    port = int(os.environ.get("PORT", args.port))
    HTTPServer((args.host, port), Handler).serve_forever()
    """
)


class FakeServer(LocalServer):
    """LocalServer running the fake script instead of llama_cpp.server."""

    script: Path

    def server_target(self) -> str:
        return str(self.script)


@pytest.fixture
def fake_script(tmp_path: Path) -> Path:
    script = tmp_path / "fake_llama_server.py"
    script.write_text(FAKE_SERVER)
    return script


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "fake-model.gguf"
    path.write_bytes(b"GGUF hand-made fake")
    return path


def make_server(script: Path, model: Path, **options: Any) -> FakeServer:
    server = FakeServer(model, startup_timeout=options.pop("startup_timeout", 20.0), **options)
    server.script = script
    return server


def group_is_gone(process_group: int) -> bool:
    try:
        os.killpg(process_group, 0)
    except ProcessLookupError:
        return True
    return False


def wait_until(condition: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def get_models(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
        result: dict[str, Any] = json.loads(response.read())
    return result


def test_pick_free_port_returns_a_bindable_port() -> None:
    import socket

    port = pick_free_port()
    assert 0 < port < 65536
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))


def test_server_args_carry_the_settings(model_file: Path) -> None:
    server = LocalServer(
        model_file, n_ctx=4096, n_threads=3, model_alias="m", extra_args=["--n_batch", "256"]
    )
    args = server.server_args(4242)

    def value(flag: str) -> str:
        return args[args.index(flag) + 1]

    assert value("--model") == str(model_file)
    assert value("--host") == "127.0.0.1"
    assert value("--port") == "4242"
    assert value("--n_ctx") == "4096"
    assert value("--n_threads") == "3"
    assert value("--n_threads_batch") == "3"
    assert value("--model_alias") == "m"
    assert value("--logits_all") == "false"
    assert "--chat_format" not in args
    assert args[-2:] == ["--n_batch", "256"]
    assert LocalServer(model_file, chat_format="chatml").server_args(1)[-2:] == [
        "--chat_format",
        "chatml",
    ]
    assert LocalServer(model_file).model_alias == "fake-model"


@pytest.mark.parametrize(("cpus", "threads"), [(1, 1), (2, 1), (8, 7)])
def test_default_threads_leave_one_cpu_free(
    cpus: int, threads: int, model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_server, "available_cpu_count", lambda: cpus)
    monkeypatch.setattr(threads_module, "available_cpu_count", lambda: cpus)
    assert local_server.default_thread_count() == threads
    assert LocalServer(model_file).n_threads == threads
    # on a loaded machine prompt evaluation takes the generation count (issue 29)
    monkeypatch.setattr(local_server, "machine_load", lambda: 1.5)
    flags = LocalServer(model_file).server_args(8080)
    assert flags[flags.index("--n_threads_batch") + 1] == str(threads)
    # on an idle one, every CPU
    monkeypatch.setattr(local_server, "machine_load", lambda: 0.1)
    idle = LocalServer(model_file)
    assert idle.server_args(8080)[idle.server_args(8080).index("--n_threads_batch") + 1] == \
        str(cpus)
    assert idle.n_threads == threads
    assert "idle as it started (load 0.10)" in idle.threads_note() or cpus == threads
    monkeypatch.setattr(local_server, "machine_load", lambda: None)  # no load average
    assert LocalServer(model_file).n_threads_batch == threads
    flags = LocalServer(model_file, n_threads=1, n_threads_batch=cpus).server_args(8080)
    assert flags[flags.index("--n_threads") + 1] == "1"
    assert flags[flags.index("--n_threads_batch") + 1] == str(cpus)


def test_environment_drops_variables_the_server_would_obey() -> None:
    cleaned = server_environment(
        {
            "PORT": "1",
            "host": "0.0.0.0",
            "API_KEY": "k",
            "Verbose": "1",
            "CONFIG_FILE": "x",
            "PATH": "/bin",
        }
    )
    assert cleaned == {"PATH": "/bin", "PYTHONUNBUFFERED": "1"}


def test_missing_llama_cpp_gives_install_hint(
    model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_server, "_module_available", lambda _name: False)
    with pytest.raises(
        LocalServerError, match=r"pip install 'llama-cpp-python\[server\]==0\.3\.36'"
    ):
        LocalServer(model_file).start()


def test_missing_model_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(LocalServerError, match="model file not found"):
        LocalServer(tmp_path / "absent.gguf").start()


def test_lifecycle_serves_then_leaves_no_process(
    fake_script: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORT", "1")  # must not reach the child (uvicorn would obey it)
    server = make_server(fake_script, model_file, model_alias="tiny")
    with server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert get_models(server.base_url)["data"] == [{"id": "tiny"}]
        process_group = server.pid
        assert process_group is not None
        assert server.is_running()
        log_path = server.log_path
        assert log_path is not None
        assert "--logits_all false" in log_path.read_text()
    assert group_is_gone(process_group)
    assert not server.is_running()
    assert not log_path.exists()  # our own temp log is removed after a clean run
    server.stop()  # idempotent


def test_starting_twice_is_refused(fake_script: Path, model_file: Path) -> None:
    with (
        make_server(fake_script, model_file) as server,
        pytest.raises(LocalServerError, match="already"),
    ):
        server.start()


def test_stop_kills_the_whole_process_group(
    fake_script: Path, model_file: Path, tmp_path: Path
) -> None:
    log_path = tmp_path / "server.log"
    server = make_server(
        fake_script, model_file, log_path=log_path, extra_args=["--fake-mode", "grandchild"]
    )
    with server:
        process_group = server.pid
        assert process_group is not None
        assert wait_until(lambda: "grandchild" in log_path.read_text())
    grandchild = int(log_path.read_text().split("grandchild ")[1].split()[0])
    assert wait_until(lambda: group_is_gone(process_group))
    with pytest.raises(ProcessLookupError):
        os.kill(grandchild, 0)
    assert log_path.exists()  # a caller-chosen log is kept


def test_stop_escalates_to_sigkill(fake_script: Path, model_file: Path) -> None:
    server = make_server(fake_script, model_file, extra_args=["--fake-mode", "ignore-term"])
    server.stop_timeout = 0.5
    server.start()
    process_group = server.pid
    assert process_group is not None
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 5
    assert group_is_gone(process_group)


def test_child_that_dies_reports_its_log_tail(fake_script: Path, model_file: Path) -> None:
    server = make_server(fake_script, model_file, extra_args=["--fake-mode", "die"])
    with pytest.raises(LocalServerError) as caught:
        server.start()
    message = str(caught.value)
    assert "exited with code 3" in message
    assert "fake failure: the model file is not a GGUF" in message
    assert server.log_path is not None
    assert server.log_path.exists()  # kept for the user to read
    assert str(server.log_path) in message
    assert not server.is_running()
    server.log_path.unlink()


def test_a_server_that_dies_mid_run_stops_the_run_with_its_log_tail(
    fake_script: Path, model_file: Path
) -> None:
    """A crash after start-up (the AMX fault of issue 12's first run) interrupts the main
    thread like Ctrl-C, and the block ends with the reason and the log's last lines."""
    server = make_server(fake_script, model_file, extra_args=["--fake-mode", "crash-after-ready"])
    started = time.monotonic()
    with pytest.raises(LocalServerError) as caught, server:
        while time.monotonic() - started < 20:  # the run: waiting on its requests
            time.sleep(0.05)
    message = str(caught.value)
    assert "died during the run (signal SIGSEGV)" in message
    assert "fake crash: general protection fault" in message
    assert time.monotonic() - started < 15
    assert not server.is_running()


def test_startup_timeout_reports_log_tail_and_stops_child(
    fake_script: Path, model_file: Path
) -> None:
    server = make_server(
        fake_script, model_file, startup_timeout=1.0, extra_args=["--fake-mode", "hang"]
    )
    with pytest.raises(LocalServerError) as caught:
        server.start()
    message = str(caught.value)
    assert "did not answer" in message
    assert "within 1 s" in message
    assert "fake server argv:" in message
    assert not server.is_running()
    assert server.log_path is not None
    server.log_path.unlink()


def test_keyboard_interrupt_in_the_block_leaves_no_child(
    fake_script: Path, model_file: Path
) -> None:
    process_group = None
    with pytest.raises(KeyboardInterrupt), make_server(fake_script, model_file) as server:
        process_group = server.pid
        raise KeyboardInterrupt
    assert process_group is not None
    assert group_is_gone(process_group)


# A parent program that runs the fake server the way papersift runs the real one.
PARENT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from papersift.extract.access.local_server import LocalServer

    class Fake(LocalServer):
        def server_target(self):
            return sys.argv[1]

    with Fake(Path(sys.argv[2]), startup_timeout=20) as server:
        print(server.pid, flush=True)
        time.sleep(600)
    """
)


def start_parent(script: Path, model: Path) -> tuple[subprocess.Popen[str], int]:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(script), str(model)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    parent.stdout.close()
    return parent, int(line)


def test_ctrl_c_in_the_parent_stops_the_child(fake_script: Path, model_file: Path) -> None:
    parent, process_group = start_parent(fake_script, model_file)
    try:
        parent.send_signal(signal.SIGINT)
        assert parent.wait(timeout=15) != 0  # KeyboardInterrupt
        assert group_is_gone(process_group)
    finally:
        parent.kill()
        parent.wait()


def test_child_exits_when_the_parent_is_killed(fake_script: Path, model_file: Path) -> None:
    parent, process_group = start_parent(fake_script, model_file)
    parent.kill()  # SIGKILL: no atexit, no __exit__; only the stdin watchdog is left
    parent.wait()
    assert wait_until(lambda: group_is_gone(process_group), timeout=10)


@pytest.mark.local_model
def test_real_server_on_the_fast_model(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from papersift.extract.access.models import FAST_MODEL, ModelError, ensure_model

    try:
        model_path = ensure_model(FAST_MODEL, cache_dir=tmp_path)
    except ModelError as error:
        pytest.skip(f"fast model not available: {error}")
    try:
        server = LocalServer(model_path, n_ctx=2048, model_alias=FAST_MODEL)
        with server:
            assert [item["id"] for item in get_models(server.base_url)["data"]] == [FAST_MODEL]
            process_group = server.pid
            assert process_group is not None
        assert group_is_gone(process_group)
    finally:
        model_path.unlink()  # 491 MB: do not leave it in pytest's kept temp dirs


def test_prompt_threads_reach_the_server_plan() -> None:
    """--prompt-threads travels from the options to the local server's plan (issue 29)."""
    from papersift.extract.access.endpoints import EndpointOptions, plan_endpoint

    plan = plan_endpoint(EndpointOptions(provider="local", threads=1, prompt_threads=2))
    assert (plan.threads, plan.prompt_threads) == (1, 2)


def test_a_run_says_how_many_threads_the_local_server_took_and_why(
        fake_script: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan records the server's threads note, and the run summary prints it with the
    run's completion tokens per second (issue 29: a slow run says why)."""
    from click.testing import CliRunner

    from papersift.extract.access.endpoints import EndpointPlan
    from papersift.extract.access.llm import Endpoint
    from papersift.extract.interface.cli_common import print_summary
    from papersift.extract.runs.runner import RunSummary

    monkeypatch.setattr(local_server.LocalServer, "server_target", lambda self: str(fake_script))
    monkeypatch.setattr(local_server, "machine_load", lambda: 1.25)
    plan = EndpointPlan(Endpoint(base_url="", model="fake-model"), local_model=model_file)
    with plan.open() as live:
        assert live.base_url.startswith("http://127.0.0.1:")
    threads = local_server.default_thread_count()
    follows = "; prompt threads follow the load" if local_server.available_cpu_count() > \
        threads else ""
    assert plan.notes == [f"llama.cpp threads: {threads} for generation, {threads} for "
                          f"prompts (load 1.25 at start{follows})"]
    summary = RunSummary(run_id="run_x", n_abstracts=1, n_extracted=1, completion_tokens=120,
                         seconds=10.0, status="finished", notes=plan.notes)
    shown = CliRunner().invoke(_print(print_summary, summary))
    assert "12.0 completion tokens/s over the run" in shown.output
    assert "(load 1.25 at start" in shown.output


def _print(function: Any, summary: Any) -> Any:
    import click

    @click.command()
    def command() -> None:
        function(summary, Path("w.duckdb"))
    return command
