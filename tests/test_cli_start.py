"""`papersift --version` and `--help` load only the command line, not the library: no
SDK, server, DuckDB or numpy (each command imports what it uses when it runs). Checked by
the modules a fresh process has loaded, not by timing (bench/cli_start.py measures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "instructor", "fastapi", "numpy", "duckdb", "pyarrow", "httpx2")
PROBE = """
import json, sys
from papersift.extract.interface.cli import main
sys.argv = ["papersift", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def loaded_after(*args: str) -> set[str]:
    """Top-level modules loaded by a fresh process that ran `papersift ARGS`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("args", [("--version",), ("--help",)])
def test_start_loads_no_library(args: tuple[str, ...]) -> None:
    loaded = loaded_after(*args)
    assert "click" in loaded  # the probe did run the CLI
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
