"""Is the process that runs a job (a fit, an agent run) still alive? Heartbeat bounds, worker identity,
and the verdict.

A running fit's process writes a heartbeat on its FitRun row (research services.fitrun_heartbeat), an
agent run's on its AgentRun row. Its worker is
lost when the heartbeat is older than `RESEARCH_FIT_LOST_AFTER_SECONDS`, or sooner, when the reader
runs on the same machine and in the same PID namespace as that process and can see that the process is
gone (killed, exited, or its PID now belongs to another process). No Django models here: services and
the job engines of research and agents use this module, which is why it lives below both of them.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def heartbeat_s() -> float:
    """How often a running fit writes its heartbeat (at least; every progress step writes one too)."""
    return float(getattr(settings, "RESEARCH_FIT_HEARTBEAT_SECONDS", 5.0))


def lost_after_s() -> float:
    """A running fit whose heartbeat is older than this has lost its worker."""
    bound = float(getattr(settings, "RESEARCH_FIT_LOST_AFTER_SECONDS", 30.0))
    if bound <= 2 * heartbeat_s():
        raise ImproperlyConfigured(
            f"RESEARCH_FIT_LOST_AFTER_SECONDS ({bound:g}) must exceed twice RESEARCH_FIT_HEARTBEAT_SECONDS ({heartbeat_s():g})"
        )
    return bound


def reap_every_s() -> float:
    """How often each live Celery worker sends the reaper task (0: never; page views, API reads and each
    worker's start still reap). Off by default on the filesystem broker (see settings/base.py)."""
    return float(getattr(settings, "RESEARCH_FIT_REAP_EVERY_SECONDS", 10.0))


def retries_allowed() -> int:
    """How many times a fit whose worker was lost is queued again (0 unless RESEARCH_FIT_RETRY_ON_WORKER_LOSS)."""
    if not getattr(settings, "RESEARCH_FIT_RETRY_ON_WORKER_LOSS", False):
        return 0
    return max(0, int(getattr(settings, "RESEARCH_FIT_MAX_RETRIES", 1)))


# --- who runs a fit -------------------------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return None


@lru_cache(maxsize=1)
def _pid_space() -> str:
    """Boot id and PID namespace (Linux): two processes can judge each other's PIDs only when these agree."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    return f"{boot}/{namespace}" if boot else ""


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks since boot) of a process, from /proc; None when there is none."""
    text = _read(f"/proc/{pid}/stat")
    if not text or ")" not in text:
        return None
    rest = text.rsplit(")", 1)[1].split()
    try:
        return rest[0], int(rest[19])
    except (IndexError, ValueError):
        return None


def identity(node: str = "") -> dict[str, Any]:
    """This process, as a fit's `worker` field records it. `node` is the Celery worker's name, if any."""
    pid = os.getpid()
    stat = _proc_stat(pid)
    return {"host": socket.gethostname(), "pid": pid, "node": node, "space": _pid_space(),
            "start": stat[1] if stat else None}


def describe(worker: dict[str, Any]) -> str:
    if not worker:
        return "an unknown process"
    name = f" ({worker['node']})" if worker.get("node") else ""
    return f"process {worker.get('pid')} on {worker.get('host')}{name}"


def process_gone(worker: dict[str, Any]) -> bool:
    """True only when this process can tell for sure that the recorded process no longer runs."""
    pid, space = worker.get("pid"), _pid_space()
    if not isinstance(pid, int) or not space or worker.get("space") != space:
        return False  # another machine, container or boot: only the heartbeat can tell
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, under another user
    stat = _proc_stat(pid)
    if stat is None:
        return True  # exited just now
    state, start = stat
    if state in ("Z", "X"):
        return True  # killed, not yet reaped by its parent
    return worker.get("start") is not None and start != worker["start"]  # the PID was reused


def lost_reason(*, heartbeat_at: datetime | None, worker: dict[str, Any], now: datetime, bound: float) -> str | None:
    """Why the worker of a running fit counts as lost, or None while it may be alive."""
    age = (now - heartbeat_at).total_seconds() if heartbeat_at else None
    if process_gone(worker):  # the surer and sooner verdict, so it is the one given when both hold
        last = f"{age:.0f} s before" if age is not None else "never"
        return f"worker lost: {describe(worker)} is gone (last heartbeat {last})"
    if age is None or age > bound:
        last = "no heartbeat at all" if age is None else f"no heartbeat for {age:.0f} s"
        return f"worker lost: {last} (limit {bound:g} s) from {describe(worker)}"
    return None
