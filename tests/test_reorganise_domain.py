"""tools/reorganise_domain.py: its rewrites land every reference in the module's new home,
say the same thing when run again, and a module it has no home for stops it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "reorganise_domain", ROOT / "tools" / "reorganise_domain.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SOURCE = '''\
from papersift.extract.domain import assemble, fields, ingest  # noqa: F401
from papersift.extract.domain import (
    topics,
    wholeword as ww,
)
from papersift.extract.domain.assemble_spans import find_name
TARGET = "papersift.extract.domain.method_decision.load_weights"
# see extract/domain/name_rules.py and domain.evaluate; extract/domain/prices.toml stays
'''


def test_every_kind_of_reference_moves_and_a_second_run_changes_nothing(
        tool: ModuleType) -> None:
    once = tool.rewrite_text(SOURCE)
    assert once.splitlines() == [
        "from papersift.extract.domain.assembly import assemble  # noqa: F401",
        "from papersift.extract.domain import fields  # noqa: F401",
        "from papersift.extract.domain.reading import ingest  # noqa: F401",
        "from papersift.extract.domain import topics",
        "from papersift.extract.domain.lookup import wholeword as ww",
        "from papersift.extract.domain.lookup.assemble_spans import find_name",
        'TARGET = "papersift.extract.domain.rules.method_decision.load_weights"',
        "# see extract/domain/rules/name_rules.py and domain.evaluation.evaluate; "
        "extract/domain/prices.toml stays",
    ]
    assert tool.rewrite_text(once) == once


def test_package_data_follows_its_files(tool: ModuleType) -> None:
    text = ('"papersift.extract.domain" = ["prices.toml", "established.toml"]\n'
            '"papersift.extract.domain.rules" = ["method_decision.json"]\n')
    once = tool.rewrite_pyproject(text)
    assert once.splitlines() == [
        '"papersift.extract.domain" = ["prices.toml"]',
        '"papersift.extract.domain.rules" = ["method_decision.json", "established.toml"]']
    assert tool.rewrite_pyproject(once) == once


def test_no_package_is_named_like_a_module(tool: ModuleType) -> None:
    tool.check_map()  # what makes the rewrites safe to repeat
    assert not set(tool.PACKAGES) & set(tool.DESTINATION)


def test_a_module_without_a_home_stops_it_before_any_change(
        tool: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    domain = tmp_path / "domain"
    domain.mkdir()
    for name in ("__init__.py", "assemble.py", "newcomer.py", "stray.toml"):
        (domain / name).write_text("", encoding="utf-8")
    monkeypatch.setattr(tool, "DOMAIN", domain)
    with pytest.raises(tool.RefusedError, match=r"(?s)newcomer\.py.*stray\.toml"):
        tool.plan_moves()
    assert sorted(path.name for path in domain.iterdir()) == [
        "__init__.py", "assemble.py", "newcomer.py", "stray.toml"]


def test_the_tree_is_sorted_already(tool: ModuleType) -> None:
    """Nothing at the top of domain/ is waiting to move, and every module has a home."""
    assert tool.plan_moves() == []
