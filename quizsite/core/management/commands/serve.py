"""The ASGI server alone, as quickstart runs it: for production and for running several processes."""

from __future__ import annotations

import os

from django.core.management.base import BaseCommand, CommandError

from quizsite.core.asgiserver import SERVERS, server_command


class Command(BaseCommand):
    help = "Serve the app (HTTP and websockets) with uvicorn, or daphne with --server daphne. Replaces this process."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--server", choices=SERVERS, default=None, help="default: $ASGI_SERVER, else uvicorn")
        parser.add_argument("--ping", type=float, default=10.0,
                            help="seconds between pings, and to answer one, before a socket is closed (default 10)")

    def handle(self, *args, host: str, port: int, server: str | None, ping: float, **opts):
        try:
            argv = server_command(host, port, server=server, ping_interval=ping, ping_timeout=ping)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        os.execv(argv[0], argv)  # signals and the exit status are the server's own
