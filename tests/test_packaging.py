"""The installed package owns one import name, so nothing it installs can shadow another
project's modules (or be shadowed by them). Builds the real wheel, installs it into a
folder beside unrelated `schemas`, `report`, `extract`, `prompts` and `warehouse`
packages that come first on the path, and runs the CLI from there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NAMES_OTHERS_USE = ("schemas", "report", "extract", "prompts", "warehouse")
SOURCE = ("pyproject.toml", "README.md", "papersift", *NAMES_OTHERS_USE)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source")  # a copy: the build leaves build/ behind
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, source / name)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(out), str(source)],
        capture_output=True, text=True, check=False)
    if build.returncode != 0:
        pytest.fail(f"wheel build failed:\n{build.stdout}\n{build.stderr}")
    (found,) = out.glob("papersift-*.whl")
    return found


def test_the_wheel_installs_everything_under_papersift(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"papersift", next(t for t in tops if t.endswith(".dist-info"))}
    for data in ("papersift/warehouse/migrations/0001_initial.sql",
                 "papersift/prompts/extract_v2.system.md",
                 "papersift/report/templates/report.html.j2",
                 "papersift/extract/domain/prices.toml"):
        assert data in names


def test_the_cli_runs_beside_unrelated_packages_of_the_same_names(
        wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    others = tmp_path / "others"
    for name in NAMES_OTHERS_USE:
        (others / name).mkdir(parents=True)
        (others / name / "__init__.py").write_text(f"WHO = 'someone else’s {name}'\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(others), str(site)])
    probe = ("import papersift, schemas, report; "
             "print(papersift.__file__); print(schemas.WHO); print(report.WHO)")
    where = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert where[0].startswith(str(site))
    assert where[1:] == ["someone else’s schemas", "someone else’s report"]
    db = tmp_path / "w.duckdb"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "papersift", *args, "--db", str(db)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, check=False)

    ingest = cli("ingest", str(ROOT / "examples" / "neurips-2026"))  # migrations from the wheel
    assert ingest.returncode == 0, ingest.stderr
    count = cli("sql", "SELECT count(*) AS papers FROM papers", "--format", "csv")
    assert count.returncode == 0, count.stderr
    assert count.stdout.split() == ["papers", "63"]
    saved = cli("query", "most_used_benchmarks", "--format", "csv")  # saved queries too
    assert saved.returncode == 0, saved.stderr
