"""The console's web page: GET / serves index.html, /static/ its scripts and styles."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).with_name("static")


def mount_page(app: FastAPI) -> None:
    """Serve the console page at / and its assets under /static/ (no build step, no network)."""

    @app.get("/", include_in_schema=False)
    async def console_page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
