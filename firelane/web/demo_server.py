"""The table page for `firelane demo` and `firelane run` without a `firelane serve`.

With ``--pace S`` such a command serves the page and the API itself while
its fight runs (on 127.0.0.1, port 8740 or, if taken, a free one) and slows
the engine's AI to one command every S seconds, so a person can follow the
fight in a browser. Without a pace the fight runs at full speed and the
command prints where to replay it afterwards.
"""

from __future__ import annotations

import errno
import socket

import trio
from hypercorn.trio import serve as hypercorn_serve

from firelane.actors.store import Store
from firelane.web.guard import ServedNames, hypercorn_config
from firelane.web.app import Api, make_app

DEFAULT_PORT = 8740


def _free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


async def serve_table(store: Store, nursery: trio.Nursery, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> str:
    """Serve the page and the API in ``nursery`` until it is cancelled; the base URL."""
    config = hypercorn_config(host, port if _free(host, port) else 0)
    names = ServedNames([host])
    api = Api(store, nursery)
    binds = await nursery.start(lambda task_status: hypercorn_serve(make_app(api, names), config, task_status=task_status))
    names.add_urls(binds)
    return binds[0].rstrip("/") if binds else f"http://{host}:{port}"


def table_link(api: str, campaign: str, encounter: str, token: str, *, replay: bool = False) -> str:
    return f"{api}/table/{campaign}/{encounter}#token={token}" + ("&replay" if replay else "")


__all__ = ["DEFAULT_PORT", "serve_table", "table_link"]
