"""Run llama-cpp-python's OpenAI-compatible server as a child process.

The child gets its own session (so a terminal Ctrl-C reaches only papersift, which
then stops it cleanly) and a pipe on stdin that papersift never writes to: when
papersift dies for any reason, even SIGKILL, the pipe closes and a watchdog thread
in the child exits the server. Nothing is left running behind papersift.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import importlib.util
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from papersift.errors import PapersiftError
from papersift.extract.access.threads import (
    RANGE_VARIABLE,
    available_cpu_count,
    changes_in,
    default_prompt_thread_count,
    default_thread_count,
    machine_load,
)

SERVER_MODULE = "llama_cpp.server"
LOG_TAIL_LINES = 20
_POLL_INTERVAL = 0.25
_POLL_REQUEST_TIMEOUT = 2.0
_LOG_TAIL_BYTES = 64 * 1024

# Modules the server imports besides llama_cpp (the [server] extra).
_SERVER_DEPENDENCIES = (
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
_INSTALL_HINT = (
    f"{shlex.quote(sys.executable)} -m pip install 'llama-cpp-python[server]==0.3.36'"
    " (or 'papersift[local]')"
)

# llama_cpp.server (0.3.36) builds its settings with pydantic-settings, which reads any
# environment variable named like a setting (case-insensitively), and uvicorn.run()
# there prefers $HOST and $PORT over the command line. A stray PORT, API_KEY, VERBOSE
# or CONFIG_FILE in the user's environment would silently change the server, so the
# child gets an environment without them.
_SERVER_SETTING_NAMES = frozenset(
    {
        "model",
        "model_alias",
        "n_gpu_layers",
        "split_mode",
        "main_gpu",
        "tensor_split",
        "vocab_only",
        "use_mmap",
        "use_mlock",
        "kv_overrides",
        "rpc_servers",
        "seed",
        "n_ctx",
        "n_batch",
        "n_ubatch",
        "n_threads",
        "n_threads_batch",
        "rope_scaling_type",
        "rope_freq_base",
        "rope_freq_scale",
        "yarn_ext_factor",
        "yarn_attn_factor",
        "yarn_beta_fast",
        "yarn_beta_slow",
        "yarn_orig_ctx",
        "mul_mat_q",
        "logits_all",
        "embedding",
        "offload_kqv",
        "flash_attn",
        "last_n_tokens_size",
        "lora_base",
        "lora_path",
        "numa",
        "chat_format",
        "chat_template_kwargs",
        "clip_model_path",
        "cache",
        "cache_type",
        "cache_size",
        "hf_tokenizer_config_path",
        "hf_pretrained_model_name_or_path",
        "hf_model_repo_id",
        "draft_model",
        "draft_model_num_pred_tokens",
        "type_k",
        "type_v",
        "verbose",
        "host",
        "port",
        "ssl_keyfile",
        "ssl_certfile",
        "api_key",
        "interrupt_requests",
        "disable_ping_events",
        "root_path",
        "config_file",
    }
)

# Runs in the child: exit as soon as the parent's end of the stdin pipe closes, then
# hand over to the real server module (or, in tests, a script path).
_CHILD_BOOTSTRAP = """\
import os, runpy, sys, threading

from papersift.errors import PapersiftError

def _exit_when_parent_is_gone():
    # os.read, not sys.stdin: a daemon thread blocked inside a buffered reader
    # makes interpreter shutdown abort.
    try:
        while os.read(0, 4096):
            pass
    finally:
        os._exit(0)

threading.Thread(target=_exit_when_parent_is_gone, daemon=True).start()
target = sys.argv[1]
if not target.endswith(".py"):
    from papersift.extract.access.threads import start_from_environment
    start_from_environment()
sys.argv = [target, *sys.argv[2:]]
if target.endswith(".py"):
    runpy.run_path(target, run_name="__main__")
else:
    runpy.run_module(target, run_name="__main__", alter_sys=True)
"""


class LocalServerError(PapersiftError):
    """The local llama.cpp server could not be started."""


def pick_free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
    return port


def server_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment without variables that llama_cpp.server would obey."""
    source = dict(os.environ) if base is None else dict(base)
    cleaned = {
        key: value for key, value in source.items() if key.lower() not in _SERVER_SETTING_NAMES
    }
    cleaned["PYTHONUNBUFFERED"] = "1"
    return cleaned


def _read_log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with path.open("rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(log.tell() - _LOG_TAIL_BYTES, 0))
            text = log.read().decode("utf-8", errors="replace")
    except OSError as error:
        return f"(could not read {path}: {error})"
    return "\n".join(text.splitlines()[-lines:])


def _module_available(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _signal_group(process_group: int, signal_number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process_group, signal_number)


class LocalServer:
    """A llama.cpp OpenAI-compatible server on 127.0.0.1, started and stopped by us.

    Use as a context manager; ``base_url`` and ``model_alias`` are what an OpenAI
    client needs once it has started.
    """

    stop_timeout = 10.0

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        n_threads_batch: int | None = None,
        chat_format: str | None = None,
        startup_timeout: float = 180.0,
        log_path: Path | None = None,
        extra_args: Sequence[str] = (),
        model_alias: str | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads if n_threads is not None else default_thread_count()
        # Prompt evaluation may take more threads than generation (--prompt-threads); by
        # default all CPUs when the machine is idle as the server starts (see
        # default_prompt_thread_count), and why is kept for the run's messages. The load is
        # measured (half a second) only when that choice is left to papersift.
        self.load_at_start = machine_load() if n_threads_batch is None else None
        self.n_threads_batch = n_threads_batch if n_threads_batch is not None else (
            default_prompt_thread_count(self.n_threads, self.load_at_start))
        # Threads papersift chose itself follow the load during the run (threads.py):
        # between the generation count and every CPU; None when pinned, or with nothing
        # to move between (one CPU).
        high = max(available_cpu_count(), self.n_threads)
        self.thread_range = (self.n_threads, high) \
            if n_threads_batch is None and high > self.n_threads else None
        self.thread_changes: list[str] = []  # what the watch did, read from the log at stop
        self.chat_format = chat_format
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.extra_args = tuple(extra_args)
        self.model_alias = model_alias or self.model_path.stem
        self.host = "127.0.0.1"
        self.port: int | None = None
        self.base_url = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._remove_log_on_stop = False
        self._owner: threading.Thread | None = None
        self.died: LocalServerError | None = None

    # -- command line -------------------------------------------------------------

    def threads_note(self) -> str:
        """How many threads the server uses, and why, in one line."""
        load = self.load_at_start
        why = ("" if load is None else  # set by --prompt-threads, or no load to read
               f"the machine was idle as it started (load {load:.2f})"
               if self.n_threads_batch > self.n_threads else f"load {load:.2f} at start")
        follows = "; prompt threads follow the load" if self.thread_range is not None else ""
        return (f"llama.cpp threads: {self.n_threads} for generation, {self.n_threads_batch} "
                f"for prompts" + (f" ({why}{follows})" if why else ""))

    def thread_changes_note(self) -> str | None:
        """What the load made of the prompt threads during the run, or None."""
        if not self.thread_changes:
            return None
        shown = "; ".join(self.thread_changes[:4])
        more = f"; and {len(self.thread_changes) - 4} more" if len(self.thread_changes) > 4 else ""
        return f"prompt threads changed with the machine's load: {shown}{more}"

    def server_target(self) -> str:
        """The module (or script path) the child runs; tests substitute a fake."""
        if not _module_available("llama_cpp"):
            raise LocalServerError(
                f"llama-cpp-python is not installed. Install it with: {_INSTALL_HINT}"
            )
        missing = [name for name in _SERVER_DEPENDENCIES if not _module_available(name)]
        if missing:
            raise LocalServerError(
                f"llama-cpp-python's server extra is missing ({', '.join(missing)}). "
                f"Install it with: {_INSTALL_HINT}"
            )
        return SERVER_MODULE

    def server_args(self, port: int) -> list[str]:
        """Command-line flags for llama_cpp.server."""
        args = [
            "--model", str(self.model_path),
            "--model_alias", self.model_alias,
            "--host", self.host,
            "--port", str(port),
            "--n_ctx", str(self.n_ctx),
            # Explicit: the server's defaults are cpu_count // 2 for generation and
            # cpu_count for prompt batches. An explicit --threads sets both.
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads_batch),
            # The server defaults to True: logits for every prompt token, an
            # n_ctx x vocabulary float array (8192 x 151936 x 4 B = 5 GB for Qwen)
            # and extra work per prompt token. Only logprobs need it.
            "--logits_all", "false",
            # Page-cache-backed mmap is enough; do not pin the weights in RAM.
            "--use_mlock", "false",
        ]  # fmt: skip
        if self.chat_format is not None:
            args += ["--chat_format", self.chat_format]
        args += self.extra_args
        return args

    def build_command(self, port: int) -> list[str]:
        """The full argv of the child process."""
        return [
            sys.executable,
            "-c",
            _CHILD_BOOTSTRAP,
            self.server_target(),
            *self.server_args(port),
        ]

    # -- lifecycle ----------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """Process id (and process group id) of the running child, if any."""
        return self._process.pid if self._process is not None else None

    def is_running(self) -> bool:
        """True while the child process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Spawn the server and wait until GET /v1/models answers."""
        if self._process is not None:
            raise LocalServerError("the local server is already running")
        if not self.model_path.is_file():
            raise LocalServerError(f"model file not found: {self.model_path}")
        port = pick_free_port(self.host)
        command = self.build_command(port)
        self._owner = threading.current_thread()
        self._open_log()
        assert self._log_file is not None
        self.port = port
        self.base_url = f"http://{self.host}:{port}/v1"
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=self._log_file,
                stderr=subprocess.STDOUT,
                env=self._environment(),
                start_new_session=True,
            )
        except OSError as error:
            self._close_log()
            raise LocalServerError(f"could not start the llama.cpp server: {error}") from error
        atexit.register(self.stop)
        try:
            self._wait_until_ready()
        except BaseException:
            self._remove_log_on_stop = False  # keep it: the error points at it
            self.stop()
            raise
        self.died = None
        threading.Thread(target=self._watch, args=(self._process,), daemon=True,
                         name="papersift-llama-watch").start()

    def _watch(self, process: subprocess.Popen[bytes]) -> None:
        """Wait for the child; if it dies while still wanted (a crash, the OOM killer),
        remember why and, when the server serves the main thread, interrupt it: the run
        stops the way Ctrl-C stops it (in-flight calls stored, resumable) instead of
        failing every remaining abstract against a closed port."""
        code = process.wait()
        if self._process is not process:  # stop() took it: an orderly end
            return
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        self._remove_log_on_stop = False
        self.died = self._failure(f"the llama.cpp server died during the run ({how})")
        if self._owner is threading.main_thread():
            _thread.interrupt_main()

    def _environment(self) -> dict[str, str]:
        environment = server_environment()
        if self.thread_range is not None:
            low, high = self.thread_range
            environment[RANGE_VARIABLE] = f"{self.n_threads}:{low}:{high}:{self.n_threads_batch}"
        return environment

    def _read_thread_changes(self) -> None:
        if self.thread_range is None or self.log_path is None:
            return
        with contextlib.suppress(OSError):
            self.thread_changes = changes_in(
                self.log_path.read_text(encoding="utf-8", errors="replace"))

    def stop(self) -> None:
        """Terminate the server's process group (SIGTERM, then SIGKILL). Idempotent."""
        process = self._process
        if process is None:
            return
        self._process = None
        atexit.unregister(self.stop)
        try:
            if process.poll() is None:
                _signal_group(process.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=self.stop_timeout)
        finally:
            if process.poll() is None:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            if self._log_file is not None:
                self._log_file.flush()
            self._read_thread_changes()
            self._close_log()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
        if self.died is not None and exc_type is KeyboardInterrupt:
            raise self.died from None

    # -- helpers ------------------------------------------------------------------

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last lines of the server log."""
        if self.log_path is None:
            return ""
        if self._log_file is not None:
            self._log_file.flush()
        return _read_log_tail(self.log_path, lines)

    def _open_log(self) -> None:
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="papersift-llama-server-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
            self._remove_log_on_stop = True
        else:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = self.log_path.open("ab")

    def _close_log(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._remove_log_on_stop and self.log_path is not None:
            with contextlib.suppress(OSError):
                self.log_path.unlink()
            self.log_path = None
            self._remove_log_on_stop = False

    def _failure(self, reason: str) -> LocalServerError:
        return LocalServerError(
            f"{reason}\nlog: {self.log_path}\n"
            f"--- last lines of the server log ---\n{self.log_tail()}"
        )

    def _wait_until_ready(self) -> None:
        process = self._process
        assert process is not None
        deadline = time.monotonic() + self.startup_timeout
        while True:
            exit_code = process.poll()
            if exit_code is not None:
                raise self._failure(
                    f"the llama.cpp server exited with code {exit_code} while starting"
                )
            if self._serves_our_model():
                return
            if time.monotonic() >= deadline:
                raise self._failure(
                    f"the llama.cpp server did not answer {self.base_url}/models "
                    f"within {self.startup_timeout:g} s"
                )
            time.sleep(_POLL_INTERVAL)

    def _serves_our_model(self) -> bool:
        """True when /v1/models answers 200 and lists our alias (so it is our child)."""
        # No proxies: $HTTP_PROXY must not capture requests to 127.0.0.1.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(f"{self.base_url}/models", timeout=_POLL_REQUEST_TIMEOUT) as response:
                if response.status != 200:
                    return False
                listing = json.loads(response.read())
        except (OSError, ValueError):
            return False
        data = listing.get("data") if isinstance(listing, dict) else None
        return isinstance(data, list) and any(
            isinstance(item, dict) and item.get("id") == self.model_alias for item in data
        )
