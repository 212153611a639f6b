"""Sort extract/domain/ into sub-packages by concern (issue 27, item 5), and re-run it safely.

    python tools/reorganise_domain.py            # move, rewrite, tidy imports
    python tools/reorganise_domain.py --dry-run  # say what it would do, change nothing

Every file at the top of extract/domain/ (a module, or a data file named like one:
prices.toml goes where prices.py goes) must have a destination in ``DESTINATION``; one that
has none stops the script before it changes anything, listing them all. A destination of
"" keeps the module where it is. Moves are ``git mv``; then every reference to a moved
module anywhere in the repository is rewritten: dotted names (imports, mock targets,
docstrings), ``extract/domain/NAME.py`` paths in docs, ``from ...domain import NAME`` lines,
and pyproject's package lists and package data. Ruff then sorts the rewritten imports.

Run it again on a newer main: what has moved stays put, stale references are rewritten
again, and a new module without a destination is refused, not guessed.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "extract" / "domain"
DOTTED = "papersift.extract.domain"

# The sub-packages, each with its one-line docstring. No name here may be a module name.
PACKAGES = {
    "reading": "Reading input: text, JSONL, CSV and Parquet rows to papers; record checks; "
               "a seeded sample.",
    "lookup": "Finding the draft's words in the abstract: quote alignment, sentence spans, "
              "whole words.",
    "rules": "Wording rules: whose name it is, names the field has, the method decision, "
             "code-found items.",
    "assembly": "From a model's draft to a grounded extraction: names, gains, attributes, "
                "methods, user fields.",
    "review": "A reviewer's edits grounded again as a model's are; a reviewed paper as a "
              "few-shot example.",
    "evaluation": "Scoring stored extractions against gold: gold files, matching, field "
                  "scores, errors.",
    "entities": "",  # already a sub-package: kept as it is
}

# module (or data file) stem -> sub-package; "" stays at the top of domain/
DESTINATION = {
    # the entry points the layers above call, and two concerns of one module each
    "fields": "", "user_draft": "", "prices": "", "topics": "",
    "ingest": "reading", "ingest_results": "reading", "ingest_tables": "reading",
    "ingest_text": "reading", "records": "reading", "sampling": "reading",
    "grounding": "lookup", "assemble_spans": "lookup", "wholeword": "lookup",
    "name_rules": "rules", "context_rules": "rules", "established": "rules",
    "method_candidates": "rules", "method_decision": "rules",
    "benchmark_candidates": "rules", "gain_candidates": "rules", "artifacts": "rules",
    "assemble": "assembly", "assemble_names": "assembly", "assemble_gains": "assembly",
    "assemble_methods": "assembly", "attributes": "assembly", "custom": "assembly",
    "corrected": "review", "fewshot": "review",
    "evaluate": "evaluation", "evaluate_gold": "evaluation", "evaluate_fields": "evaluation",
    "eval_errors": "evaluation",
}

TOP_DOC = '''"""Domain layer: pure functions of text and drafts, with no HTTP client, no LLM SDK, no
duckdb and nothing of the layers above. By concern:

{packages}

At the top: {top}.
"""
'''

# what the modules kept at the top of domain/ are, for its docstring (those that exist)
TOP_MODULES = {
    "fields": "a run's fields, the whole of grounding, rows per field: what the layers above "
              "call",
    "user_draft": "the draft class of a run with user fields",
    "prices": "the price table",
    "topics": "the topic map",
}

# text files whose references are rewritten (data such as recordings and gold is not)
SUFFIXES = {".py", ".pyi", ".md", ".toml", ".cfg", ".ini", ".sh", ".yml", ".yaml", ".rst",
            ".j2"}
NAMES = {"Makefile"}
SKIP_UNDER = ("tests/recordings/", "tests/data/")
# this script and its test name the old places on purpose
SKIP = {"tools/reorganise_domain.py", "tests/test_reorganise_domain.py"}


class RefusedError(Exception):
    """Something the script will not guess at."""


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def check_map() -> None:
    clash = sorted(set(PACKAGES) & set(DESTINATION))
    if clash:
        raise RefusedError(f"sub-package names that are also module names: {clash}")
    unknown = sorted({dest for dest in DESTINATION.values() if dest and dest not in PACKAGES})
    if unknown:
        raise RefusedError(f"destinations that are not in PACKAGES: {unknown}")


def plan_moves() -> list[tuple[Path, Path]]:
    """(source, target) for every top-level file of domain/ that moves; refuses unknowns."""
    homeless, moves = [], []
    for path in sorted(DOMAIN.iterdir()):
        if path.name in ("__init__.py", "__pycache__") or path.name.startswith("."):
            continue
        if path.is_dir():
            if path.name not in PACKAGES:
                homeless.append(f"{path.name}/ (a folder not in PACKAGES; \"\" there leaves "
                                f"it as it is)")
            continue
        dest = DESTINATION.get(path.name.split(".", 1)[0])
        if dest is None:
            homeless.append(path.name)
        elif dest and (DOMAIN / dest / path.name).exists():
            homeless.append(f"{path.name} (and {dest}/{path.name} too: which one is it?)")
        elif dest:
            moves.append((path, DOMAIN / dest / path.name))
    if homeless:
        raise RefusedError("no destination in tools/reorganise_domain.py's DESTINATION for:"
                           "\n  " + "\n  ".join(homeless))
    _check_data_readers()
    return moves


def _check_data_readers() -> None:
    """A module that names a data file of domain/ must land beside it."""
    def home(name: str) -> str:
        return DESTINATION.get(name.split(".", 1)[0], "")
    data = [p.name for p in DOMAIN.rglob("*") if p.suffix in (".toml", ".json")
            and p.parent.name in (*PACKAGES, "domain") and p.parent.name != "entities"]
    modules = [p for p in DOMAIN.rglob("*.py") if "entities" not in p.parts]
    apart = [f"{module.name} reads {name}" for module in modules
             for name in data if f'"{name}"' in module.read_text(encoding="utf-8")
             and home(module.name) != home(name)]
    if apart:
        raise RefusedError("modules would be parted from their data files:\n  "
                           + "\n  ".join(apart))


def write_packages(dry_run: bool) -> list[Path]:
    """Each sub-package's __init__.py is its docstring; domain's lists them all."""
    listing = "\n".join(
        textwrap.fill(f"- {name}/: " + (doc or "canonical entities, one id per name."),
                      width=92, subsequent_indent="  ", break_on_hyphens=False)
        for name, doc in PACKAGES.items())
    inits = {DOMAIN / name / "__init__.py": f'"""{doc}"""\n'
             for name, doc in PACKAGES.items() if doc}
    top = "; ".join(f"{name}.py ({doc})" for name, doc in TOP_MODULES.items()
                    if (DOMAIN / f"{name}.py").exists())
    inits[DOMAIN / "__init__.py"] = TOP_DOC.format(packages=listing,
                                                   top=textwrap.fill(top, width=80))
    written = []
    for init, text in inits.items():
        if init.exists():
            tree = ast.parse(init.read_text(encoding="utf-8"))
            if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
                print(f"note: {init.relative_to(ROOT)} holds more than a docstring; left alone")
                continue
            if init.read_text(encoding="utf-8") == text:
                continue
        print(f"write {init.relative_to(ROOT)}")
        written.append(init)
        if not dry_run:
            init.parent.mkdir(exist_ok=True)
            init.write_text(text, encoding="utf-8")
            _git("add", str(init.relative_to(ROOT)))
    return written


def move(moves: list[tuple[Path, Path]], dry_run: bool) -> None:
    tracked = set(_git("ls-files", "extract/domain").split())
    for source, target in moves:
        print(f"move {source.relative_to(ROOT)} -> {target.relative_to(ROOT)}")
        if dry_run:
            continue
        if str(source.relative_to(ROOT)) in tracked:
            _git("mv", str(source.relative_to(ROOT)), str(target.relative_to(ROOT)))
        else:
            source.rename(target)  # an untracked module moves all the same


def _moved() -> dict[str, str]:
    return {name: dest for name, dest in DESTINATION.items() if dest}


def rewrite_text(text: str) -> str:
    """Every reference to a moved module, in its new place; unchanged when run again."""
    moved = _moved()
    text = _IMPORT_PAREN.sub(lambda m: _split_import(m, moved), text)
    text = _IMPORT_LINE.sub(lambda m: _split_import(m, moved), text)
    names = "|".join(sorted(moved, key=len, reverse=True))
    # domain.NAME and domain/NAME, in dotted names, paths and prose alike
    pattern = re.compile(rf"(?<![\w-])domain([./])({names})(?![\w-])")
    return pattern.sub(lambda m: f"domain{m[1]}{moved[m[2]]}{m[1]}{m[2]}", text)


_IMPORT_PAREN = re.compile(r"^([ \t]*)from (papersift\.extract\.domain) import \(([^)]*)\)"
                           r"([^\n]*)$", re.MULTILINE)
_IMPORT_LINE = re.compile(r"^([ \t]*)from (papersift\.extract\.domain) import ([^(\n#]+?)"
                          r"([ \t]*#[^\n]*)?$", re.MULTILINE)


def _split_import(match: re.Match[str], moved: dict[str, str]) -> str:
    """``from papersift.extract.domain import a, b as c``: one line per new home."""
    indent, package, names, tail = match[1], match[2], match[3], match[4] or ""
    by_home: dict[str, list[str]] = {}
    for item in (part.strip() for part in re.sub(r"#[^\n]*", "", names).split(",")):
        if item:
            home = moved.get(item.split()[0], "")
            by_home.setdefault(f"{package}.{home}" if home else package, []).append(item)
    if list(by_home) == [package]:
        return match[0]
    lines = [f"{indent}from {home} import {', '.join(items)}" for home, items in by_home.items()]
    if re.search(r"noqa|type: *ignore", tail):
        return "\n".join(line + tail for line in lines)  # it may speak for any of them
    return "\n".join([lines[0] + tail, *lines[1:]])


def rewrite_pyproject(text: str) -> str:
    """Package lists gain the sub-packages; package data follows its files."""
    def packages(match: re.Match[str]) -> str:
        listed = ast.literal_eval(match[2])
        if f"{DOTTED}" not in listed:
            return match[0]
        extra = [f"{DOTTED}.{name}" for name in PACKAGES if f"{DOTTED}.{name}" not in listed]
        if not extra:
            return match[0]
        body = match[2].rstrip()[:-1].rstrip().rstrip(",")
        lines = textwrap.wrap(", ".join(f'"{e}"' for e in extra), width=86,
                              break_on_hyphens=False)
        return f"{match[1]}{body},\n" + "\n".join(f"{' ' * 12}{line}" for line in lines) + "]"
    text = re.sub(r"^(packages = )(\[[^\]]*\])", packages, text, flags=re.MULTILINE)

    return _move_package_data(text)


def _move_package_data(text: str) -> str:
    """Data files listed under domain's package data go to their sub-package's entry."""
    top = re.search(rf'^"{re.escape(DOTTED)}" = (\[[^\]]*\])$', text, flags=re.MULTILINE)
    if top is None:
        return text
    stay: list[str] = []
    away: dict[str, list[str]] = {}
    for name in ast.literal_eval(top[1]):
        home = _moved().get(name.split(".", 1)[0])
        if home:
            away.setdefault(home, []).append(name)
        else:
            stay.append(name)
    if not away:
        return text
    lines = [f'"{DOTTED}" = {_toml_list(stay)}'] if stay else []
    for home, names in away.items():
        key = f'"{DOTTED}.{home}"'
        old = re.search(rf"^{re.escape(key)} = (\[[^\]]*\])\n", text, flags=re.MULTILINE)
        listed = [] if old is None else ast.literal_eval(old[1])
        if old is not None:
            text = text[:old.start()] + text[old.end():]
        lines.append(f"{key} = {_toml_list([*listed, *names])}")
    top = re.search(rf'^"{re.escape(DOTTED)}" = \[[^\]]*\]$', text, flags=re.MULTILINE)
    assert top is not None
    return text[:top.start()] + "\n".join(lines) + text[top.end():]


def _toml_list(names: list[str]) -> str:
    return "[" + ", ".join(f'"{name}"' for name in dict.fromkeys(names)) + "]"


def text_files() -> list[Path]:
    listed = _git("ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    paths = []
    for name in sorted(set(listed)):
        path = ROOT / name
        if name.startswith(SKIP_UNDER) or name in SKIP or path.is_symlink() \
                or not path.is_file():
            continue
        if path.suffix in SUFFIXES or path.name in NAMES or name.startswith(".ci/"):
            paths.append(path)
    return paths


def rewrite_all(dry_run: bool) -> list[Path]:
    changed = []
    for path in text_files():
        text = path.read_text(encoding="utf-8")
        new = rewrite_text(text)
        if path.name == "pyproject.toml":
            new = rewrite_pyproject(new)
        if new != text:
            changed.append(path)
            print(f"rewrite {path.relative_to(ROOT)}")
            if not dry_run:
                path.write_text(new, encoding="utf-8")
    return changed


def _ruff() -> list[str] | None:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    return [found] if found else None


def tidy(changed: list[Path]) -> bool:
    """Sort the rewritten imports (their module paths changed) and list long lines; False
    when something is left to do by hand."""
    python = [str(p.relative_to(ROOT)) for p in changed if p.suffix == ".py"]
    if not python:
        return True
    ruff = _ruff()
    if ruff is None:
        print("ruff is not installed here: run `ruff check --select I001 --fix` on the "
              "rewritten files (the venv's python runs this script with it)")
        return False
    check = [*ruff, "check", "--quiet"]
    subprocess.run([*check, "--select", "I001", "--fix", *python], cwd=ROOT, check=False)
    long = subprocess.run([*check, "--select", "E501", *python], cwd=ROOT, check=False)
    if long.returncode:
        print("the lines above grew past the line length: shorten them by hand")
    return long.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="say what it would do")
    args = parser.parse_args()
    try:
        check_map()
        moves = plan_moves()
    except RefusedError as error:
        print(f"reorganise_domain: {error}", file=sys.stderr)
        return 1
    written = write_packages(args.dry_run)
    move(moves, args.dry_run)
    changed = rewrite_all(args.dry_run) + written
    tidied = args.dry_run or tidy(changed)
    print(f"{len(moves)} moved, {len(changed)} files rewritten"
          + (" (dry run: nothing changed)" if args.dry_run else ""))
    return 0 if tidied else 1


if __name__ == "__main__":
    sys.exit(main())
