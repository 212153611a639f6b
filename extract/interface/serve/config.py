"""What a server is started with, and the checks made before it binds."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from papersift.errors import PapersiftError
from papersift.extract.access.http import Transport
from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings
from papersift.extract.interface.serve.defaults import DEFAULT_PORT, TOKEN_ENV

MAX_BODY_BYTES = 1_000_000  # a request body larger than this is refused (413)


class ServeError(PapersiftError):
    """The server cannot start as asked."""


def is_loopback(host: str) -> bool:
    """True when ``host`` names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return all(ipaddress.ip_address(info[4][0]).is_loopback
                       for info in socket.getaddrinfo(host, None))
        except (OSError, ValueError):
            return False


@dataclass(frozen=True)
class ServeConfig:
    """One server: its warehouse, address, access rules and how it extracts."""

    db: Path
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    read_only: bool = False
    reviewer: str | None = None
    settings: RunSettings | None = None  # how /api/extract and /api/runs extract
    max_body_bytes: int = MAX_BODY_BYTES
    # POST /api/runs reads inputs only below these folders (none given: the current one)
    inputs_roots: tuple[Path, ...] = ()
    # tests and benches: replace the network and the endpoint choice (as run_inputs takes)
    transport: Transport | None = field(default=None, compare=False)
    endpoint: Endpoint | None = field(default=None, compare=False)

    @property
    def run_settings(self) -> RunSettings:
        return self.settings or RunSettings(db=self.db)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def checked(self) -> ServeConfig:
        """This config, or ServeError when it would expose the warehouse unprotected."""
        token = self.token or os.environ.get(TOKEN_ENV) or None
        if not is_loopback(self.host) and not token:
            raise ServeError(
                f"--host {self.host} is reachable from other machines: pass --token TOKEN "
                f"(or set {TOKEN_ENV}); every request must then carry it")
        if token is not None and len(token) < 16:
            raise ServeError("the token must be at least 16 characters long")
        if not self.db.exists():
            raise ServeError(f"no warehouse at {self.db}: run `papersift run` first, "
                             "or pass --db")
        roots = tuple(root.resolve() for root in self.inputs_roots or (Path.cwd(),))
        missing = [root for root in roots if not root.is_dir()]
        if missing:
            raise ServeError(f"--inputs-root {missing[0]} is not a folder")
        return dataclasses.replace(self, token=token, inputs_roots=roots)

    def input_allowed(self, path: str) -> bool:
        """Whether a run may read ``path``: it lies (links resolved) below an inputs root."""
        try:
            resolved = Path(path).resolve()
        except (OSError, ValueError):  # a NUL byte, a link loop: nothing to read
            return False
        return any(resolved.is_relative_to(root) for root in self.inputs_roots)
