"""The director's page, served by the floor (Starlette): one HTML page, the floor's view pushed over
server-sent events (`/events`: no reloads, reconnects by itself, works on a phone), and the
director's commands as small POSTs that the floor turns into the tables' `cmd/*` topics."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from controller.floor.model import FloorError

PAGE = Path(__file__).with_name("static") / "index.html"
PUSH_COALESCE_SECONDS = 0.05


def make_app(service: Any) -> Starlette:
    async def page(_request: Request) -> Response:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    async def view(_request: Request) -> Response:
        return JSONResponse(service.view())

    async def events(request: Request) -> Response:
        async def stream():
            version = -1
            while not service.closing:
                if await request.is_disconnected():
                    return
                doc = service.view()
                version = doc["version"]
                yield f"data: {json.dumps(doc, separators=(',', ':'))}\n\n"
                await service.wait_change(version, timeout=5.0)
                if service.closing:
                    return
                await asyncio.sleep(PUSH_COALESCE_SECONDS)  # changes that come together go out as one push

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def confirm(request: Request) -> Response:
        return await _run(service.confirm(request.path_params["move_id"]))

    async def seat(request: Request) -> Response:
        return await _run(service.seat_directly(request.path_params["move_id"]))

    async def clock_cmd(request: Request) -> Response:
        what = request.path_params["what"]
        seconds = 0.0
        if what == "add":
            try:
                seconds = float(request.query_params.get("seconds", "60"))
            except ValueError:
                return JSONResponse({"ok": False, "message": "seconds: expected a number"}, status_code=400)
        return await _run(service.clock_command(what, seconds))

    async def csv(_request: Request) -> Response:
        return PlainTextResponse(
            service.standings_csv(),
            media_type="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{service.cfg.event}-standings.csv"'},
        )

    async def season(_request: Request) -> Response:
        return PlainTextResponse(
            service.season_csv(),
            media_type="text/csv",
            headers={"Content-Disposition": 'attachment; filename="season-standings.csv"'},
        )

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/view", view),
            Route("/events", events),
            Route("/api/moves/{move_id:path}/confirm", confirm, methods=["POST"]),
            Route("/api/moves/{move_id:path}/seat", seat, methods=["POST"]),
            Route("/api/clock/{what}", clock_cmd, methods=["POST"]),
            Route("/standings.csv", csv),
            Route("/season.csv", season),
        ]
    )


async def _run(coro: Any) -> Response:
    try:
        await coro
    except FloorError as exc:
        return JSONResponse({"ok": False, "message": str(exc)}, status_code=409)
    await asyncio.sleep(0)
    return JSONResponse({"ok": True})
