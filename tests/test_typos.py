"""A typo fails loudly and leaves nothing behind (issue 28): every command but `run` and
`ingest` refuses a --db that names no file, naming it, and creates nothing; inputs that
name nothing are refused before a warehouse is made; a failed export leaves no folder."""

from __future__ import annotations

import codecs
from datetime import datetime
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.warehouse import Warehouse
from papersift.warehouse.store import Batch

# The arguments each command needs besides --db to get as far as opening it.
ARGS: dict[tuple[str, ...], list[str]] = {
    ("search",): ["graph networks"],
    ("similar",): ["sha256:abc"],
    ("explain",): ["sha256:abc"],
    ("query",): ["leaderboard"],
    ("sql",): ["SELECT 1"],
    ("entities", "show"): ["benchmark:coco"],
    ("entities", "merge"): ["a", "b"],
    ("entities", "split"): ["benchmark:coco"],
    ("batch", "resume"): ["batch_1", "--base-url", "http://fake.test/v1", "--model", "m"],
    ("batch", "cancel"): ["batch_1", "--base-url", "http://fake.test/v1", "--model", "m"],
    ("cache", "clear"): ["--yes"],
    ("corrections", "pool"): ["--out", "pool.json"],
    ("index",): ["--no-areas"],
    ("extract",): ["--base-url", "http://fake.test/v1", "--model", "m"],
}
# run and ingest make a warehouse; serve refuses a missing one itself (serve/config.py)
# and would start a server if it did not.
MAKERS = {("run",), ("ingest",), ("serve",)}


def _with_db(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _with_db(command, (*prefix, name))
        elif any(p.name == "db" for p in command.params):
            found.append((*prefix, name))
    return found


@pytest.mark.parametrize("path", [p for p in _with_db(cli) if p not in MAKERS], ids=" ".join)
def test_a_mistyped_db_is_refused_and_nothing_is_made(path: tuple[str, ...],
                                                      tmp_path: Path) -> None:
    (tmp_path / "papersift.duckdb").touch()  # the one the user meant
    if path == ("eval",):
        args = ["--gold", str(Path(__file__).parents[1] / "bench/gold/neurips-2026.gold.json")]
    else:
        args = ARGS.get(path, [])
    typo = tmp_path / "papersfit.duckdb"
    result = CliRunner().invoke(cli, [*path, *args, "--db", str(typo)])
    assert result.exit_code != 0, result.output
    assert f"no warehouse at {typo}" in result.output
    assert "papersift run" in result.output and "papersift.duckdb" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["papersift.duckdb"]


def test_similar_without_id_or_text_says_what_to_give(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["similar", "--db", str(tmp_path / "w.duckdb")])
    assert result.exit_code != 0
    assert "not both" not in result.output and "--text" in result.output


def test_inputs_that_name_nothing_are_refused_before_a_warehouse_is_made(
        tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    for command in (["run", "MISSING.jsonl", "--dry-run"], ["run", "MISSING.jsonl"],
                    ["ingest", "MISSING.jsonl"]):
        result = runner.invoke(cli, [*command, "--db", str(db)])
        assert result.exit_code == 2, (command, result.output)  # nothing to process
        assert "MISSING.jsonl" in result.output and "no such file" in result.output
        assert not db.exists() and not db.with_name("w.duckdb.wal").exists()
    (tmp_path / "empty.txt").touch()  # a file that holds no abstract: nothing kept either
    for command in (["ingest", "empty.txt"], ["run", "empty.txt"]):
        result = runner.invoke(cli, [*command, "--db", str(db)])
        assert result.exit_code == 2, (command, result.output)
        assert not db.exists(), command
    # a dry run with one input missing of two still says so, and fails
    result = runner.invoke(cli, ["run", "empty.txt", "MISSING.jsonl", "--dry-run",
                                 "--db", str(db)])
    assert result.exit_code == 2 and "MISSING.jsonl: no such file" in result.output


@pytest.fixture
def cjk_db(tmp_path: Path) -> Path:
    path = tmp_path / "w.duckdb"
    with Warehouse(path) as warehouse:
        batch = Batch()
        batch.add("papers", {"paper_id": "sha256:1", "text": "図形推論のための新しい手法。",
                             "chars": 14, "text_sha256": "sha256:t1",
                             "first_seen": datetime(2026, 1, 1)})
        warehouse.write(batch)
    return path


def test_a_failed_export_leaves_no_folder(tmp_path: Path, cjk_db: Path) -> None:
    out = tmp_path / "exports"
    runner = CliRunner()
    result = runner.invoke(cli, ["export", "--db", str(tmp_path / "typo.duckdb"),
                                 "--out", str(out)])
    assert result.exit_code != 0 and not out.exists()
    cjk_db.write_bytes(b"not a duckdb file" * 100)  # fails after the folder is made
    result = runner.invoke(cli, ["export", "--db", str(cjk_db), "--out", str(out)])
    assert result.exit_code != 0 and not out.exists(), result.output


def test_export_help_lists_xlsx_and_excel_csv_has_a_bom(tmp_path: Path,
                                                        cjk_db: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(cli, ["export", "--help"]).output
    assert "xlsx" in shown.split("Options:")[0] and "--excel" in shown
    for flag, marked in (([], False), (["--excel"], True)):
        out = tmp_path / f"out{int(marked)}"
        result = runner.invoke(cli, ["export", "--db", str(cjk_db), "--out", str(out), *flag])
        assert result.exit_code == 0, result.output
        raw = (out / "papers.csv").read_bytes()
        assert raw.startswith(codecs.BOM_UTF8) is marked
        assert "図形推論" in raw.decode("utf-8-sig")
    refused = runner.invoke(cli, ["export", "--db", str(cjk_db), "--format", "parquet",
                                  "--excel", "--out", str(tmp_path / "p")])
    assert refused.exit_code != 0 and "CSV" in refused.output
