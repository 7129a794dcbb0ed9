"""Start the real app in child processes (quickstart, or the ASGI server alone) for end-to-end tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from quizsite.core.asgiserver import server_command

REPO = Path(__file__).resolve().parents[2]


def app_env(var_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "quizsite.settings.local",
            "THINKALIKE_VAR_DIR": str(var_dir),
            "DEBUG": "0",
            "PYTHONUNBUFFERED": "1",
            "HF_HUB_OFFLINE": "1",
        }
    )
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=True
    )


def migrate_and_import(env: dict[str, str], items: Path, *import_args: str, timeout: float = 180) -> None:
    """`migrate` then `import_items --format quizbowl ITEMS ...` in one process: each start of a Django
    process costs seconds on a shared machine, and the two commands need nothing from each other's."""
    commands = [["migrate", "--noinput"], ["import_items", "--format", "quizbowl", str(items), *import_args]]
    code = "from django.core.management import call_command as c; " + "; ".join(f"c(*{cmd!r})" for cmd in commands)
    manage(env, "shell", "-c", code, timeout=timeout)


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {proc.stdout.read() if proc.stdout else ''}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer within {timeout}s")


def start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True
    )


def asgi_server(port: int, env: dict[str, str], log: Path, *, ping_interval: float = 10.0,
                ping_timeout: float = 10.0) -> subprocess.Popen:
    """The ASGI server as quickstart starts it (uvicorn; `ASGI_SERVER=daphne` in the environment picks daphne)."""
    cmd = server_command("127.0.0.1", port, server=env.get("ASGI_SERVER"), ping_interval=ping_interval,
                         ping_timeout=ping_timeout)
    return start(cmd, env, log)


def stop(proc: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = 20) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode
