"""Streaming responses that really stream under ASGI, and still under WSGI.

The app is served by an ASGI server. Django's `StreamingHttpResponse` given a synchronous iterator cannot
pull it from the event loop, so its `__aiter__` warns ("must consume synchronous iterators") and runs
`sync_to_async(list)` over it: the whole export sits in memory and the first byte leaves after the last
row is read. Given an asynchronous iterator instead, it streams under ASGI, but under WSGI (and Django's
sync test client) `__iter__` does the reverse, `async_to_sync` of a list, with the same cost.

`ThreadedStreamingHttpResponse` keeps the synchronous chunk generator as its content, so WSGI and the sync
test client iterate it directly as before, and overrides only `__aiter__` (what Django's ASGI handler
consumes): `chunks_in_thread` pulls the chunks in batches on Django's thread-sensitive worker thread,
so a database cursor behind the generator (a server-side cursor on PostgreSQL) is created, read and
closed on one thread and one connection, the thread the view ran on. Each batch is handed to the
server before the next is read, so memory holds one batch and the first bytes go out at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar, cast

from asgiref.sync import sync_to_async
from django.http import FileResponse, StreamingHttpResponse

T = TypeVar("T")

# Bytes pulled per hop to the worker thread: few hops for per-row generators (the account download yields
# one line per row), and little held at once. Exports' own chunks are larger; a batch is then one chunk.
BATCH_BYTES = 64 * 1024


@contextmanager
def closing_iter(source: Iterable[T]) -> Iterator[Iterator[T]]:
    """Iterate `source` and close it (when it can be closed) on the way out, however the block ends.

    A chunk generator closed early (the client went away) must close the generator it reads from, and so on
    down to the database cursor, on the thread that closes it. Left to reference counting, that happens
    only when nothing else holds the inner generator; a frame kept by a traceback that Django's query
    building catches and stores (the export's own `stream_responses` frame, for one) holds it until the
    cyclic collector runs, on any thread, after the request closed its connection.
    """
    iterator = iter(source)
    try:
        yield iterator
    finally:
        close = getattr(iterator, "close", None)
        if callable(close):
            close()


def _pull(chunks: Iterator[bytes], batch_bytes: int) -> tuple[list[bytes], bool]:
    """The next chunks, up to `batch_bytes` (at least one), and whether the iterator is exhausted."""
    batch: list[bytes] = []
    size = 0
    for chunk in chunks:
        batch.append(chunk)
        size += len(chunk)
        if size >= batch_bytes:
            return batch, False
    return batch, True


async def chunks_in_thread(chunks: Iterable[bytes], *, batch_bytes: int | None = None) -> AsyncIterator[bytes]:
    """An async iterator over a synchronous chunk iterator, read in batches on the thread-sensitive thread.

    thread_sensitive=True: inside Django's ASGI handler every hop runs on the request's one sync thread
    (where the view ran and where its database connection lives), never beside another hop. The chunks
    leave one by one, so their boundaries and bytes are those of the synchronous iterator. Closing this
    iterator (a client that went away) closes the synchronous one, when it has `close`, on that same thread.
    """
    iterator = iter(chunks)
    pull = sync_to_async(_pull, thread_sensitive=True)
    size = BATCH_BYTES if batch_bytes is None else batch_bytes
    try:
        done = False
        while not done:
            batch, done = await pull(iterator, size)
            for chunk in batch:
                yield chunk
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()


class _ThreadedAiter:
    """`__aiter__` for Django's streaming responses over a synchronous iterator (see the module docstring)."""

    is_async: bool
    streaming_content: Iterator[bytes] | AsyncIterator[bytes]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.is_async:  # content replaced by an async iterator: Django's own path already streams it
            async for part in super().__aiter__():  # type: ignore[misc]
                yield part
            return
        # The sync `streaming_content` (make_bytes applied, any middleware wrapper kept); the generator
        # itself is closed by response.close(), which the handler runs on the same thread afterwards
        # (and which reaches the cursor at once only if each generator closes its source: `closing_iter`).
        async for part in chunks_in_thread(cast(Iterator[bytes], self.streaming_content)):
            yield part


class ThreadedStreamingHttpResponse(_ThreadedAiter, StreamingHttpResponse):
    """A `StreamingHttpResponse` over a synchronous chunk generator that streams under ASGI as well.

    Use it (or `streaming_response`) for every download built from a synchronous generator.
    `streaming_content` stays synchronous (WSGI, the sync test client, middleware that wraps it);
    only the ASGI handler's `aiter(response)` goes through `chunks_in_thread`.
    """


class ThreadedFileResponse(_ThreadedAiter, FileResponse):
    """`FileResponse` whose blocks are read on the worker thread under ASGI, one block a hop."""


def streaming_response(
    chunks: Iterable[bytes | str], *, content_type: str, filename: str | None = None
) -> ThreadedStreamingHttpResponse:
    """A download of `chunks` that streams under ASGI and WSGI alike, as an attachment when `filename`."""
    response = ThreadedStreamingHttpResponse(chunks, content_type=content_type)
    if filename is not None:
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
