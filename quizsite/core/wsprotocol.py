"""uvicorn's websocket protocol, with a way out for clients that read nothing.

uvicorn's `send` waits while a socket's buffers are full: that is the back-pressure the play room's
outboxes rely on (play/consumers.py). But a socket that never drains can then never be closed
cleanly either: its close frame would wait behind the full buffer, and `transport.close()` (what the
ping timeout calls) waits for the buffer to flush before it lets go of the connection, which for a
client that reads nothing is never. So here both drop the connection at once (`transport.abort()`):
the buffered bytes are lost, which is the point, and the consumer's clean-up runs as for any
disconnect. Used by `asgiserver.server_command` (`--ws quizsite.core.wsprotocol:PlayWebSocketProtocol`).
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol


class PlayWebSocketProtocol(WebSocketsSansIOProtocol):
    def keepalive_timeout(self) -> None:
        super().keepalive_timeout()
        self.transport.abort()

    async def send(self, message: Any) -> None:
        if message["type"] == "websocket.close" and self.handshake_complete and not self.writable.is_set():
            self.close_sent = True
            self.transport.abort()  # connection_lost follows: a send stuck behind the buffer wakes and fails
            return
        await super().send(message)
