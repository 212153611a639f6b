"""Ctrl-C with requests in flight: every request that reached the server is a calls row
(status `interrupted` for those cut short), and their papers are failures a rerun
extracts. A real `papersift run` process gets SIGINT; the server is the hand-written
fault server, slowed so that requests are out when the signal comes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from papersift.testing.sim import fault_profile, running
from tests.conftest import CORPUS

PAPERSIFT = Path(sys.executable).parent / "papersift"


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_requests_in_flight_at_ctrl_c_are_calls_rows(tmp_path: Path, stop: int) -> None:
    """SIGTERM (a `kill`) is handled like Ctrl-C: it lost the batch not yet written."""
    db = tmp_path / "w.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PAPERSIFT_"))}
    with running(fault_profile(latency_s=0.5)) as server:
        args = [str(PAPERSIFT), "run", str(CORPUS), "--db", str(db), "--base-url",
                server.base_url, "--model", "fault", "--concurrency", "4"]
        process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(server.log) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(stop)
        _, err = process.communicate(timeout=120)
        seen = len(server.log)
        assert process.returncode == 130, err[-2000:]
        assert "Traceback" not in err
        con = duckdb.connect(str(db), read_only=True)
        try:
            calls = con.execute("SELECT status, count(*) FROM calls GROUP BY 1").fetchall()
            interrupted = con.execute(
                "SELECT count(*) FROM failures WHERE reason = 'interrupted'").fetchone()
        finally:
            con.close()
        statuses = dict(calls)
        assert sum(statuses.values()) == seen, (statuses, seen)
        assert statuses.get("interrupted", 0) >= 1
        assert interrupted is not None and interrupted[0] == statuses["interrupted"]
    with running(fault_profile()) as fast:  # the rerun needs no slow server
        args[args.index("--base-url") + 1] = fast.base_url
        rerun = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300,
                               check=False)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "63 abstracts:" in rerun.stdout and " 0 failed" in rerun.stdout
