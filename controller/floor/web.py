"""The director's page, served by the floor (Starlette): one HTML page, the floor's view pushed over
server-sent events (`/events`: no reloads, reconnects by itself, works on a phone), and the
director's commands as small POSTs that the floor turns into the tables' `cmd/*` topics.

Every route but `/login` asks for the page's login (controller.floor.auth) where one is set: a
page is sent to `/login`, the API and the push stream answer 401."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from controller.floor.auth import COOKIE, SESSION_SECONDS, Sessions
from controller.floor.model import FloorError

STATIC = Path(__file__).with_name("static")
PAGE = STATIC / "index.html"
LOGIN_PAGE = STATIC / "login.html"
PUSH_COALESCE_SECONDS = 0.05


def make_app(service: Any, sessions: Sessions | None = None) -> Starlette:
    sessions = sessions or getattr(service, "sessions", None) or Sessions(None)

    def guarded(handler: Any, page: bool = False) -> Any:
        """The handler, behind the login: a page goes to /login, anything else gets 401."""

        async def run(request: Request) -> Response:
            if sessions.valid(request.cookies.get(COOKIE)):
                return await handler(request)
            if page:
                return RedirectResponse("/login", status_code=303)
            return JSONResponse({"ok": False, "message": "log in first (/login)"}, status_code=401)

        return run

    async def login_form(request: Request) -> Response:
        if not sessions.required:
            return RedirectResponse("/", status_code=303)
        failed = request.query_params.get("failed") == "1"
        html = LOGIN_PAGE.read_text(encoding="utf-8").replace(
            "<!--failed-->", '<p class="bad" id="failed">Wrong password.</p>' if failed else ""
        )
        return HTMLResponse(html, status_code=401 if failed else 200, headers={"Cache-Control": "no-store"})

    async def login(request: Request) -> Response:
        # a urlencoded form, read here (Starlette's form() needs python-multipart, not a dependency)
        body = (await request.body())[:4096].decode("utf-8", errors="replace")
        password = (parse_qs(body).get("password") or [""])[0]
        sid = sessions.login(password)
        if sid is None:
            return RedirectResponse("/login?failed=1", status_code=303)
        out = RedirectResponse("/", status_code=303)
        out.set_cookie(COOKIE, sid, max_age=SESSION_SECONDS, httponly=True, samesite="strict", path="/")
        return out

    async def logout(request: Request) -> Response:
        sessions.logout(request.cookies.get(COOKIE))
        out = RedirectResponse("/login", status_code=303)
        out.delete_cookie(COOKIE, path="/")
        return out

    async def page(_request: Request) -> Response:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    async def table_detail(request: Request) -> Response:
        doc = service.floor.table_detail(request.path_params["table_id"])
        if doc is None:
            return JSONResponse({"ok": False, "message": "no such table in this event"}, status_code=404)
        return JSONResponse(doc)

    async def table_picture(request: Request) -> Response:
        """The table's camera picture at its last alert (JPEG, seat zones blacked out by the table)."""
        table_id = request.path_params["table_id"]
        if table_id not in service.floor.tables:
            return JSONResponse({"ok": False, "message": "no such table in this event"}, status_code=404)
        data = service.floor.picture(table_id)
        if data is None:
            return JSONResponse(
                {"ok": False, "message": "no camera picture from this table yet"}, status_code=404
            )
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

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
            Route("/login", login_form),
            Route("/login", login, methods=["POST"]),
            Route("/logout", logout, methods=["GET", "POST"]),
            Route("/", guarded(page, page=True)),
            Route("/api/view", guarded(view)),
            Route("/api/table/{table_id}", guarded(table_detail)),
            Route("/api/table/{table_id}/picture", guarded(table_picture)),
            Route("/events", guarded(events)),
            Route("/api/moves/{move_id:path}/confirm", guarded(confirm), methods=["POST"]),
            Route("/api/moves/{move_id:path}/seat", guarded(seat), methods=["POST"]),
            Route("/api/clock/{what}", guarded(clock_cmd), methods=["POST"]),
            Route("/standings.csv", guarded(csv)),
            Route("/season.csv", guarded(season)),
        ]
    )


async def _run(coro: Any) -> Response:
    try:
        await coro
    except FloorError as exc:
        return JSONResponse({"ok": False, "message": str(exc)}, status_code=409)
    await asyncio.sleep(0)
    return JSONResponse({"ok": True})
