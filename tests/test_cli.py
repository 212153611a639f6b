"""The command line: every command has help; commands are thin and errors are clean."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.interface.cli import cli
from papersift.testing.mock import FakeModel
from tests.conftest import CORPUS, stored_rows


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found.extend(_commands(command, (*prefix, name)))
    return found


@pytest.mark.parametrize("path", _commands(cli), ids=" ".join)
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    assert command.help and len(command.help) > 20
    assert command.help.split("\n")[0] in " ".join(result.output.split())


@pytest.fixture
def filled_db(tmp_path: Path) -> Path:
    db = tmp_path / "w.duckdb"
    run_inputs([str(CORPUS)], RunSettings(db=db), transport=FakeModel().transport(),
               endpoint=Endpoint(base_url="http://fake.test/v1", model="fake", mode="json"))
    return db


def test_sql_prints_table_csv_and_json(filled_db: Path) -> None:
    runner = CliRunner()
    query = "SELECT count(*) AS n FROM papers"
    table = runner.invoke(cli, ["sql", query, "--db", str(filled_db)])
    assert table.exit_code == 0 and "63" in table.output
    as_csv = runner.invoke(cli, ["sql", query, "--db", str(filled_db), "--format", "csv"])
    assert as_csv.output == "n\n63\n"
    as_json = runner.invoke(cli, ["sql", query, "--db", str(filled_db), "--format", "json"])
    assert json.loads(as_json.output) == [{"n": 63}]


def test_sql_refuses_writes_with_a_clean_message(filled_db: Path) -> None:
    result = CliRunner().invoke(cli, ["sql", "DROP TABLE papers", "--db", str(filled_db)])
    assert result.exit_code == 1
    assert "Error:" in result.output and "read-only" in result.output
    assert "Traceback" not in result.output
    again = CliRunner().invoke(cli, ["sql", "SELECT count(*) FROM papers", "--db",
                                     str(filled_db), "--format", "csv"])
    assert again.output.endswith("63\n")


def test_saved_queries_list_and_run(filled_db: Path) -> None:
    runner = CliRunner()
    listing = runner.invoke(cli, ["query"])
    assert "most_used_benchmarks" in listing.output
    result = runner.invoke(cli, ["query", "papers_without_numbers", "--db", str(filled_db),
                                 "--format", "csv"])
    # the fake answers give no gains; code adds results written with a unit
    # (gain_candidates), so the papers left are those where the abstract states none
    [(without,)] = stored_rows(filled_db, "SELECT count(*) FROM papers p WHERE NOT EXISTS ("
                                         "SELECT 1 FROM gains g WHERE g.paper_id = p.paper_id "
                                         "AND g.value IS NOT NULL)")
    assert 40 <= without < 63
    assert result.exit_code == 0 and result.output.count("\n") == without + 1
    missing = runner.invoke(cli, ["query", "no_such_query"])
    assert missing.exit_code == 1 and "no saved query" in missing.output


def test_export_runs_and_cache_commands(filled_db: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["export", "--db", str(filled_db), "--format", "csv",
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code == 0 and "papers.csv  63 rows" in result.output
    runs = runner.invoke(cli, ["runs", "--db", str(filled_db), "--format", "csv"])
    assert runs.exit_code == 0 and "finished" in runs.output
    stats = runner.invoke(cli, ["cache", "stats", "--db", str(filled_db)])
    assert json.loads(stats.output)["entries"] == 63
    cleared = runner.invoke(cli, ["cache", "clear", "--db", str(filled_db), "--yes"])
    assert "deleted 63" in cleared.output


def test_missing_key_for_openai_is_a_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", str(CORPUS), "--db", str(tmp_path / "w.duckdb"),
                                      "--provider", "openai"])
    assert result.exit_code == 1
    assert "OPENAI_API_KEY" in result.output and "Traceback" not in result.output


def test_compatible_provider_needs_a_model(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", str(CORPUS), "--db", str(tmp_path / "w.duckdb"),
                                      "--base-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 1 and "--model" in result.output


def test_dry_run_counts_and_estimates_without_writing_or_asking(tmp_path: Path) -> None:
    from papersift.extract.access.endpoints import EndpointOptions, plan_endpoint
    from papersift.extract.interface.app import RunSettings, estimate_run, run_inputs
    from papersift.testing.mock import FakeModel
    from tests.conftest import CORPUS

    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(cli, ["run", str(CORPUS), "--db", str(db), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "63 abstracts: 63 to send, 0 cached" in result.output
    assert not db.exists()  # nothing written, no server started, nothing asked

    options = EndpointOptions(provider="compatible", base_url="http://fake.test/v1",
                              model="gpt-4o-mini")
    settings = RunSettings(db=db, endpoint=options)
    before = estimate_run([str(CORPUS)], settings)
    assert (before.to_send, before.cached) == (63, 0)
    assert before.prompt_tokens > 60 * 1000  # about 2,100 tokens an abstract
    assert before.cost_usd == pytest.approx(
        (before.prompt_tokens * 0.15 + before.completion_tokens * 0.60) / 1e6)
    model = FakeModel()
    run_inputs([str(CORPUS)], settings, transport=model.transport(),
               endpoint=plan_endpoint(options).endpoint)
    after = estimate_run([str(CORPUS)], settings)  # everything is cached now
    assert (after.to_send, after.cached, after.prompt_tokens, after.cost_usd) == (0, 63, 0, 0.0)
