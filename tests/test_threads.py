"""Prompt threads that follow the machine's load (extract/access/threads.py).

The watch loop is driven here with a hand-written fake of llama_cpp (it records the
thread changes) and scripted CPU samples; no llama.cpp runs.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from papersift.extract.access import local_server, threads
from papersift.extract.access.threads import Governor, changes_in, other_load, parse_range


def test_the_governor_lowers_after_two_busy_windows_and_raises_after_five_calm_ones() -> None:
    governor = Governor(low=1, high=2, current=2)
    assert governor.observe(0.9) is None  # one busy window is a blip
    assert governor.observe(0.1) is None
    assert governor.observe(0.9) is None
    assert governor.observe(1.0) == 1
    assert governor.observe(1.0) is None  # already low
    assert [governor.observe(0.1) for _ in range(4)] == [None] * 4
    assert governor.observe(0.4) is None  # between calm and busy: the calm streak ends
    assert [governor.observe(0.0) for _ in range(5)] == [None] * 4 + [2]
    assert governor.current == 2


def test_the_range_comes_from_the_parent_and_a_bad_one_is_refused() -> None:
    generation, governor = parse_range("1:1:2:1")
    assert generation == 1 and (governor.low, governor.high, governor.current) == (1, 2, 1)
    for bad in ("1:2:1:1", "0:1:2:2", "1:1:2:3", "1:1:2"):
        with pytest.raises(ValueError):
            parse_range(bad)


def test_other_load_leaves_out_the_servers_own_cpu_time() -> None:
    # 200 jiffies passed over 2 CPUs; 150 busy, of which the server itself used 100
    assert other_load((1000, 5000, 300), (1150, 5200, 400), cpus=2) == pytest.approx(0.5)
    assert other_load((1000, 5000, 300), (1100, 5200, 400), cpus=2) == 0.0  # only itself
    assert other_load((1000, 5000, 300), (1000, 5000, 300), cpus=2) == 0.0


def test_the_watch_moves_the_servers_prompt_threads_and_logs_each_change(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[tuple[Any, int, int]] = []
    fake_llama = types.ModuleType("llama_cpp")
    fake_llama.llama_set_n_threads = lambda ctx, n, nb: calls.append((ctx, n, nb))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", fake_llama)
    model = types.SimpleNamespace(ctx="ctx", n_threads_batch=2)
    monkeypatch.setattr(threads, "_served_model", lambda: model)
    monkeypatch.setattr(threads.time, "sleep", lambda _s: None)
    # (machine busy, machine total, own): others busy 1 CPU for 3 windows, then idle
    busy, total, own = 0, 0, 0
    samples: list[tuple[int, int, int] | None] = [(busy, total, own)]
    for others in (100, 100, 100, 0, 0, 0, 0, 0):
        busy, total, own = busy + others + 100, total + 200, own + 100
        samples.append((busy, total, own))
    samples.append(None)  # /proc went away: the watch ends
    monkeypatch.setattr(threads, "_sample", lambda: samples.pop(0))
    threads._watch(1, Governor(low=1, high=2, current=2), cpus=2)
    assert calls == [("ctx", 1, 1), ("ctx", 1, 2)]
    assert model.n_threads_batch == 2
    log = capsys.readouterr().err
    changes = changes_in(log)
    assert len(changes) == 2
    assert changes[0].startswith("1 at ") and "other processes busy: 1.00 CPUs" in changes[0]
    assert changes[1].startswith("2 at ") and "busy: 0.00 CPUs" in changes[1]


def test_the_server_is_asked_to_follow_the_load_only_when_papersift_chose_the_threads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(local_server, "available_cpu_count", lambda: 2)
    monkeypatch.setattr(local_server, "machine_load", lambda: 0.1)
    chosen = local_server.LocalServer(model, n_threads=1)
    assert chosen._environment()[threads.RANGE_VARIABLE] == "1:1:2:2"
    pinned = local_server.LocalServer(model, n_threads=1, n_threads_batch=2)
    assert threads.RANGE_VARIABLE not in pinned._environment()
    monkeypatch.setattr(local_server, "available_cpu_count", lambda: 1)
    one_cpu = local_server.LocalServer(model, n_threads=1)
    assert threads.RANGE_VARIABLE not in one_cpu._environment()  # nothing to move between


def test_changes_in_the_log_become_one_note_of_the_run(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(local_server, "available_cpu_count", lambda: 2)
    monkeypatch.setattr(local_server, "machine_load", lambda: 0.1)
    server = local_server.LocalServer(model, n_threads=1, log_path=tmp_path / "server.log")
    (tmp_path / "server.log").write_text(
        "INFO: 200 OK\n"
        f"{threads.LOG_PREFIX} 1 at 10:00:01 (other processes busy: 0.98 CPUs)\n"
        f"{threads.LOG_PREFIX} 2 at 10:02:11 (other processes busy: 0.02 CPUs)\n")
    server._read_thread_changes()
    note = server.thread_changes_note()
    assert note == ("prompt threads changed with the machine's load: 1 at 10:00:01 (other "
                    "processes busy: 0.98 CPUs); 2 at 10:02:11 (other processes busy: 0.02 "
                    "CPUs)")
    assert local_server.LocalServer(model, n_threads=1).thread_changes_note() is None
