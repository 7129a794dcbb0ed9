"""Drive one HTTP request through Django's real ASGI handler, as uvicorn does, from a test.

`django.test.AsyncClient` hands the response object back to the test, which then iterates
`streaming_content` itself: Django's `ASGIHandler.send_response` (the `aiter(response)` a server sees,
where a synchronous iterator used to be read whole) never runs. Here it does, with a recording `send`.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

from asgiref.sync import async_to_sync
from django.core.handlers.asgi import ASGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

SYNC_ITERATOR_WARNING = "must consume synchronous iterators"


@dataclass
class AsgiResult:
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


def _scope(path: str, params: dict[str, str] | None, cookies: dict[str, str] | None) -> dict:
    cookie = "; ".join(f"{k}={v}" for k, v in (cookies or {}).items())
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": urlencode(params or {}, doseq=True).encode(),
        "root_path": "", "headers": [(b"host", b"testserver"), (b"cookie", cookie.encode())],
        "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
    }


async def asgi_request(
    path: str,
    params: dict[str, str] | None = None,
    *,
    cookies: dict[str, str] | None = None,
    on_body: Callable[[bytes], None] | None = None,
    disconnect_after: int | None = None,
) -> AsgiResult:
    """GET `path` through a fresh `ASGIHandler`; `on_body` sees each non-empty body message as it is sent;
    with `disconnect_after` N the client goes away once it has N of them.

    Awaited from an async test, the handler runs as under uvicorn: its thread-sensitive work (the view,
    the export's reads) goes to a thread of the request's own, with its own database connection.
    """
    result = AsgiResult()
    requested = False
    gone = asyncio.Event()

    async def receive() -> dict:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()  # unless it goes away, the handler cancels this when the response is sent
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            result.status = message["status"]
            result.headers = {k.decode().lower(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body" and message.get("body"):
            if on_body is not None:
                on_body(message["body"])
            result.chunks.append(message["body"])
            if disconnect_after is not None and len(result.chunks) >= disconnect_after:
                gone.set()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await ASGIHandler()(_scope(path, params, cookies), receive, send)
    result.warnings = [str(w.message) for w in caught]
    return result


def asgi_get(
    path: str,
    params: dict[str, str] | None = None,
    *,
    cookies: dict[str, str] | None = None,
    on_body: Callable[[bytes], None] | None = None,
) -> AsgiResult:
    """`asgi_request` from a sync test: the handler's thread-sensitive work then runs on the test's own
    thread and sees its transaction; the signals that would close that connection are held off while it
    runs, as Django's test client does."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        return async_to_sync(asgi_request)(path, params, cookies=cookies, on_body=on_body)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def count_rows(monkeypatch, owner: object, name: str) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Swap the row generator `owner.name` for one that counts, in `["read"]`, the rows it has yielded so far."""
    count = {"read": 0}
    original = getattr(owner, name)

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        for row in original(*args, **kwargs):
            count["read"] += 1
            yield row

    monkeypatch.setattr(owner, name, counting)
    return count


def session_cookies(user) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The cookies of a browser signed in as `user`, for requests sent through the ASGI handler."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    return {name: morsel.value for name, morsel in client.cookies.items()}
