"""One root for expected errors: every public exception class papersift defines is a
PapersiftError (so the CLI prints its message instead of a traceback), except the
internal signals that never leave the code that raises them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import click
import pytest

import papersift
from papersift.errors import PapersiftError

INTERNAL = {"papersift.extract.access.transport.RetryableStatusError",
            "papersift.extract.runs.rowbuild.WorkerGoneError",  # caught where raised
            # an ask loop's end and an oversized body become the paper's failure row
            "papersift.extract.access.extractor.AskFailedError",
            "papersift.extract.access.transport.AnswerTooLargeError",
            "papersift.extract.domain.reading.ingest_tables.ParquetReadError"}  # caught by ingest


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(papersift.__path__, "papersift."):
        if info.name.endswith(("__main__", "distributed", "local_server")):
            continue  # import ray / llama_cpp lazily; checked below by name
        names.append(info.name)
    return names


def _error_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == name and not attr.startswith("_")):
                found[f"{name}.{attr}"] = value
    for name in ("papersift.extract.runs.distributed", "papersift.extract.access.local_server"):
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == name):
                found[f"{name}.{attr}"] = value
    return found


def test_every_public_error_class_has_the_one_root() -> None:
    classes = _error_classes()
    assert len(classes) >= 12  # the walk really found the project's errors
    strays = [name for name, cls in classes.items()
              if name not in INTERNAL and not issubclass(cls, PapersiftError)]
    assert strays == []


@pytest.mark.parametrize("name", sorted(n for n in _error_classes() if n not in INTERNAL))
def test_the_cli_prints_each_expected_error_as_one_line(name: str) -> None:
    from papersift.extract.interface.cli_common import known_errors

    module, _, attr = name.rpartition(".")
    cls = getattr(importlib.import_module(module), attr)

    try:
        error = cls("what went wrong, and what to do")
    except TypeError:  # a class with more required fields: its args still carry the text
        error = cls.__new__(cls, "what went wrong, and what to do")

    @known_errors
    def command() -> None:
        raise error

    with pytest.raises(click.ClickException) as caught:
        command()
    assert "what went wrong" in caught.value.message
