"""The GM's workshop pages (composed in web/app.py): one page, its modules
in web/assets/workshop/, at

    GET /workshop                                   the campaigns this browser is the GM of
    GET /workshop/{campaign}                        the campaign home (a sign-in link adds #gm=TOKEN)
    GET /workshop/{campaign}/build/{draft}          the encounter builder
    GET /workshop/{campaign}/lobby/{encounter}      the lobby: invite links, who is present, Start

The page reads and writes only through the workshop API (docs/workshop-api.md,
web/workshop.py), with the GM's sign-in cookie; serving it needs no credential.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

PAGE = Path(__file__).parent / "assets" / "workshop.html"


def workshop_page_routes() -> list[Route]:
    async def page(request: Request) -> Response:
        return FileResponse(PAGE, media_type="text/html", headers={"Cache-Control": "no-cache"})

    return [
        Route("/workshop", page),
        Route("/workshop/{campaign}", page),
        Route("/workshop/{campaign}/build/{draft}", page),
        Route("/workshop/{campaign}/lobby/{encounter}", page),
    ]
