"""Sentinel API keys, given through OPENAI_API_KEY and through --api-key-file, to runs
against a hand-written server that fails requests and echoes the Authorization header in
its error bodies. No artefact may hold a key afterwards: the warehouse (its bytes and every
text column), the recordings, exports, stdout/stderr with the SDK's debug logging on
(papersift has no --verbose), and the output of every read command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.extract.runs.ingest_files import ingest
from papersift.testing.sim import SimConfig, SimEndpoint, fault_profile, running
from tests.conftest import CORPUS

ENV_KEY = "sk-sentinel-ENV-5c1e0f-never-store-me"
FILE_KEY = "sk-sentinel-FILE-9a7b3d-never-store-me"
USERINFO_KEY = "sk-sentinel-USERINFO-44d2c1-never-store-me"
QUERY_KEY = "sk-sentinel-QUERY-8e0a6b-never-store-me"
KEYS = (ENV_KEY, FILE_KEY, USERINFO_KEY, QUERY_KEY)
PAPERSIFT = Path(sys.executable).parent / "papersift"


def _server_config(abstracts: list[str]) -> SimConfig:
    refused = abstracts[1]

    def rule(abstract: str, n: int) -> str | None:
        if abstract == refused:
            return "unauthorized"  # 401: not retried, the failure text holds the echo
        return {1: "server_error", 2: "rate_limit"}.get(n)  # then a valid answer

    return fault_profile(rules=[rule], echo_authorization=True, echo_headers=True,
                       retry_after="0")


def _papersift(args: list[str], env: dict[str, str], status: int = 0) -> str:
    done = subprocess.run([str(PAPERSIFT), *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == status, done.stderr[-2000:]
    return done.stdout + done.stderr


def _text_cells(db: Path) -> list[str]:
    """Every value of every column of every table, as text."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [row[0] for row in con.execute(
            "SELECT table_name FROM duckdb_tables()").fetchall()]
        cells = []
        for table in tables:
            for row in con.execute(f"SELECT * FROM {table}").fetchall():
                cells.extend(str(value) for value in row)
        return cells
    finally:
        con.close()


def test_sentinel_keys_land_in_no_artefact(tmp_path: Path) -> None:
    work = tmp_path / "work"  # every artefact goes here; the key file lives outside it
    work.mkdir()
    abstracts = [paper.text for paper in ingest([CORPUS]).papers][:4]
    corpus = work / "four.txt"
    corpus.write_text("\n\n".join(abstracts) + "\n", encoding="utf-8")
    key_file = tmp_path / "key.txt"
    key_file.write_text(FILE_KEY + "\n", encoding="utf-8")
    db = work / "w.duckdb"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PAPERSIFT_"))}
    base["OPENAI_LOG"] = "debug"  # the SDK's own request logging, to stderr
    outputs = []
    server: SimEndpoint
    with running(_server_config(abstracts)) as server:
        endpoint = ["--base-url", server.base_url, "--model", "echo", "--concurrency", "4"]
        outputs.append(_papersift(
            ["run", str(corpus), "--db", str(db), *endpoint,
             "--record", str(work / "env.recording.json")],
            {**base, "OPENAI_API_KEY": ENV_KEY}))
        outputs.append(_papersift(
            ["run", str(corpus), "--db", str(db), *endpoint, "--no-cache",
             "--api-key-file", str(key_file), "--record", str(work / "file.recording.json")],
            base))
        # A key in the URL (userinfo, or a query parameter given by flag or environment)
        # is refused before anything is stored or sent, and the refusal does not show it.
        # These runs stop before the SDK is used, so they run in this process: the SDK's
        # debug logging, the reason for the subprocesses above, has nothing to log here.
        host = server.base_url.removeprefix("http://")
        no_key: dict[str, str | None] = {  # the environment of the runs above, in here
            name: None for name in [*os.environ, "OPENAI_API_KEY", "OPENAI_BASE_URL"]
            if name.startswith(("OPENAI_", "PAPERSIFT_"))}
        for url_args, env in (
            (["--base-url", f"http://user:{USERINFO_KEY}@{host}"], no_key),
            (["--base-url", f"{server.base_url}?api-version=1&api-key={QUERY_KEY}"], no_key),
            ([], {**no_key, "OPENAI_BASE_URL": f"{server.base_url}?token={QUERY_KEY}"}),
        ):
            refused = CliRunner().invoke(cli, ["run", str(corpus), "--db", str(db),
                                               "--model", "echo", *url_args], env=env)
            assert refused.exit_code == 1, refused.output
            assert "carries a credential" in refused.output
            outputs.append(refused.output)
        sent = {served.authorization for served in server.log}
    # The keys really were in the client's hands, and the server echoed them back.
    assert sent == {f"Bearer {ENV_KEY}", f"Bearer {FILE_KEY}"}
    runner = CliRunner()
    for args in (["runs"], ["cache", "stats"], ["query", "failures"],
                 ["sql", "SELECT * FROM calls"], ["sql", "SELECT * FROM failures"],
                 ["export", "--format", "csv", "--out", str(work / "csv")],
                 ["export", "--format", "jsonl", "--out", str(work / "jsonl")],
                 ["export", "--format", "parquet", "--out", str(work / "parquet")]):
        result = runner.invoke(cli, [*args, "--db", str(db)])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    cells = _text_cells(db)
    files = [path for path in work.rglob("*") if path.is_file()]
    assert {path.name for path in files} >= {"w.duckdb", "env.recording.json",
                                             "file.recording.json", "papers.csv",
                                             "papers.jsonl", "papers.parquet"}
    for key in KEYS:
        for path in files:
            assert key.encode() not in path.read_bytes(), path
        assert not [cell for cell in cells if key in cell]
        assert not [output for output in outputs if key in output]
    # The echoes were there to redact: the stored error texts say so.
    assert any("Bearer [REDACTED]" in cell for cell in cells)
    assert "http_401" in " ".join(cells)
    assert any("headers:" in cell and "Bearer [REDACTED]" in cell for cell in cells)
