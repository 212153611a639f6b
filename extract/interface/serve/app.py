"""The ASGI app: the review pages, the JSON API under /api (OpenAPI schema at
/api/openapi.json), the vendored assets, behind the Guard middleware."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from papersift.extract.interface.serve import api, pages
from papersift.extract.interface.serve.config import ServeConfig
from papersift.extract.interface.serve.security import Guard, loopback_hosts
from papersift.extract.interface.serve.state import ServerState
from papersift.warehouse.corrections import CorrectionError, VersionConflictError
from papersift.warehouse.db import WarehouseError


def create_app(config: ServeConfig) -> Any:
    """The app for one warehouse; it holds the warehouse open until it shuts down."""
    config = config.checked()
    state = ServerState.open(config)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            state.close()

    app = FastAPI(title="papersift", summary="Review and extract research-paper abstracts",
                  version="1", openapi_url="/api/openapi.json", docs_url=None,
                  redoc_url=None, lifespan=lifespan)
    app.state.papersift = state
    app.include_router(api.router)
    app.include_router(pages.router)

    @app.exception_handler(VersionConflictError)
    async def version_conflict(_request: Request, error: VersionConflictError) -> JSONResponse:
        return JSONResponse({"error": str(error), "current": api.plain(error.current)},
                            status_code=409)

    @app.exception_handler(CorrectionError)
    async def refused(_request: Request, error: CorrectionError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=error.status)

    @app.exception_handler(WarehouseError)
    async def warehouse_error(_request: Request, error: WarehouseError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=400)

    return Guard(app, token=config.token, csrf=state.csrf, read_only=config.read_only,
                 max_body_bytes=config.max_body_bytes,
                 hosts=loopback_hosts(config.port, config.host.lower()))


def inner_app(guarded: Any) -> FastAPI:
    """The FastAPI app behind the guard (its state, its OpenAPI schema)."""
    app = guarded.app
    assert isinstance(app, FastAPI)
    return app
