"""papersift uses only the public surface of openai and instructor, so an upgrade of
either cannot break it through a renamed internal. Greps the shipped source for private
members: ``openai._...``, the SDK client's ``._client`` / ``._build_request``, any
instructor name that its module does not export (``__all__``) or that sits in a module
with an underscore in its path, and a method patched onto a class (as instructor's
wrapped model once had its ``model_json_schema`` replaced). Each library is imported by
one module: instructor by the request builder, openai by the Batch API client."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import instructor

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("extract", "schemas", "prompts", "warehouse", "report", "testing", "papersift")
# Uses still allowed, each with why; empty means none is left. (file, line text)
ALLOWED: set[tuple[str, str]] = set()

PRIVATE = re.compile(r"\bopenai\._|\._client\b|\._build_request\b|\binstructor\._"
                     r"|\.model_(json_schema|validate\w*|dump\w*|construct|copy|rebuild)\s*=[^=]"
                     r"|method-assign")
# The one module that may import each library, and the names it may take from it.
IMPORTERS = {"instructor": ("extract/access/request.py",
                            {"instructor", "instructor.processing.handle_response_model"}),
             "openai": ("extract/access/batch_api.py", {"openai"})}


def _sources() -> list[Path]:
    found: list[Path] = []
    for folder in SHIPPED:
        base = ROOT / folder
        found += [p for p in base.rglob("*.py") if not p.is_symlink()
                  and "__pycache__" not in p.parts] if folder != "papersift" \
            else [p for p in base.glob("*.py")]
    return sorted(found)


def _exported(module: str) -> set[str]:
    return set(getattr(importlib.import_module(module), "__all__", ()))


def _instructor_uses(tree: ast.Module) -> list[str]:
    """instructor names used that their module does not export."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("instructor"):
            module = str(node.module)
            hidden = any(part.startswith("_") for part in module.split("."))
            public = set() if hidden else _exported(module)
            found += [f"from {module} import {alias.name}" for alias in node.names
                      if alias.name not in public]
        elif isinstance(node, ast.Import):
            found += [f"import {alias.name}" for alias in node.names
                      if alias.name.startswith("instructor.")]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == "instructor"
              and node.attr not in _exported("instructor")):
            found.append(f"instructor.{node.attr}")
    return found


def private_uses() -> list[tuple[str, str]]:
    """(file, line) of every private openai/instructor use in the shipped source."""
    uses = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        for line in text.splitlines():
            if PRIVATE.search(line):
                uses.append((name, line.strip()))
        uses += [(name, use) for use in _instructor_uses(ast.parse(text))]
    return uses


def test_no_private_openai_or_instructor_member_is_used() -> None:
    left = [use for use in private_uses() if use not in ALLOWED]
    assert not left, "private members used:\n" + "\n".join(f"{f}: {u}" for f, u in left)


def _imports(tree: ast.Module, library: str) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == library}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == library:
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def test_each_library_is_imported_by_one_module_only() -> None:
    for library, (owner, allowed) in IMPORTERS.items():
        users = {}
        for path in _sources():
            names = _imports(ast.parse(path.read_text(encoding="utf-8")), library)
            if names:
                users[str(path.relative_to(ROOT))] = names
        assert set(users) == {owner}, f"{library} imported by {sorted(users)}"
        assert users[owner] <= allowed, users[owner] - allowed


def test_the_grep_finds_what_it_looks_for(tmp_path: Path) -> None:
    """The patterns catch the kinds of use that were there before."""
    assert PRIVATE.search("from openai._models import FinalRequestOptions")
    assert PRIVATE.search("self._http = raw._client")
    assert PRIVATE.search("raw._build_request(options)")
    assert PRIVATE.search("wrapped.model_json_schema = model_json_schema")
    assert not PRIVATE.search("if wrapped.model_json_schema == other:")
    assert _instructor_uses(ast.parse(
        "from instructor.core.exceptions import InstructorRetryException\n"
        "from instructor.processing.response import handle_response_model\n"
        "import instructor\ninstructor.core.exceptions.X\n")) == [
        "from instructor.core.exceptions import InstructorRetryException",
        "from instructor.processing.response import handle_response_model",
        "instructor.core"]
    assert "reject_async_validators" not in _exported("instructor.v2.validation")
    assert "response_schema" in _exported("instructor") and instructor.response_schema
