"""One command from a fresh checkout to a running app: migrate, demo content, ASGI server, Celery worker."""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from quizsite.core.asgiserver import server_command


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens there (SO_REUSEADDR, as the ASGI servers bind: a closing socket in
    TIME_WAIT is no obstacle, a live server is)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def free_port_after(host: str, port: int, tries: int = 50) -> int | None:
    return next((p for p in range(port + 1, min(port + 1 + tries, 65536)) if not port_in_use(host, p)), None)


def wait_listening(host: str, port: int, proc: subprocess.Popen, timeout: float = 60,
                   stop_when: Callable[[], bool] = lambda: False) -> bool:
    """Until the server accepts connections (True), or its process exits, the time runs out or
    `stop_when()` says so (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None and not stop_when():
        try:
            with socket.create_connection((host, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


class Command(BaseCommand):
    help = "Migrate, load the demo content once, then run the ASGI server and a Celery worker until Ctrl-C."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-demo", action="store_true", help="do not load the demo content")
        parser.add_argument("--no-worker", action="store_true", help="do not start a Celery worker")

    def handle(self, *args, host: str, port: int, no_demo: bool, no_worker: bool, **opts):
        self._check_port(host, port)
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("database ready")
        if not no_demo:
            call_command("load_demo", stdout=self.stdout)
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")}
        # Bots (play/bots.py) connect back to this server's own websocket address.
        local = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        env.setdefault("PLAY_BOT_WS_BASE", f"ws://{local}:{port}")
        # Handlers first: a Ctrl-C while the children start must still stop them (it used to raise
        # KeyboardInterrupt here and leave the server running without its parent).
        stopping = False

        def stop(*_: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        children: list[subprocess.Popen] = []
        code = 0
        try:
            # uvicorn (ASGI_SERVER=daphne for daphne); a socket that answers no ping for 20 s is closed
            children.append(subprocess.Popen(server_command(host, port), env=env))
            if not no_worker:
                children.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "celery", "-A", "quizsite", "worker", "--pool=solo", "--loglevel=INFO"],
                        env=env,
                    )
                )
                # Bots play for as long as a room has people: a worker of their own (threads: each bot is
                # mostly waiting on its socket), so a bot never holds up a fit, nor a fit a bot.
                children.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "celery", "-A", "quizsite", "worker", "-Q", "bots", "--pool=threads",
                         "--concurrency=8", "-n", "bots@%h", "--loglevel=INFO"],
                        env=env,
                    )
                )
            if not wait_listening(host, port, children[0], stop_when=lambda: stopping):
                if stopping:
                    return
                raise CommandError(
                    f"the server did not start listening on {host}:{port} (its output is above); "
                    f"if the port is taken, choose another with --port"
                )
            self.stdout.write(self.style.SUCCESS(f"Thinkalike is running at http://{host}:{port}/  (Ctrl-C stops it)"))
            self.stdout.flush()
            while not stopping:
                dead = [c for c in children if c.poll() is not None]
                if dead:
                    self.stderr.write(f"a child process exited ({dead[0].args!r}: code {dead[0].returncode}); stopping")
                    code = 1
                    break
                time.sleep(0.3)
        finally:
            for child in children:
                if child.poll() is None:
                    child.terminate()
            for child in children:
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
            self.stdout.write("stopped")
        if code:
            sys.exit(code)

    def _check_port(self, host: str, port: int) -> None:
        if not port_in_use(host, port):
            return
        other = free_port_after(host, port)
        hint = f" (e.g. --port {other}, which is free)" if other else ""
        raise CommandError(f"port {port} on {host} is already in use (another server?): choose another with --port{hint}")
