"""`python driver.py`: one Django process against the test's database that a worker-loss test drives.

It reads one JSON command per line on stdin and answers one line `@@ {json}` on stdout. Page views and API
reads go through Django's test client: the real URL conf, middleware and views, signed in as staff, so
whatever those views do (such as reaping fits whose worker died) happens as it would for a researcher.
"""

from __future__ import annotations

import io
import json
import sys
import time
import traceback
from typing import Any


def main() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from quizsite.research.models import FitAgent, FitRun

    client = Client()

    def setup(data: str) -> None:
        call_command("migrate", verbosity=0)
        call_command("import_items", data, "--format", "caimira", "--set", "tiny", stdout=io.StringIO())
        staff = get_user_model().objects.create_user("res", password="pw", is_superuser=True)  # a researcher
        client.force_login(staff)

    def manage(args: list[str]) -> str:
        out = io.StringIO()
        call_command(*args, stdout=out)
        return out.getvalue()

    def row(fit_id: int) -> dict[str, Any]:
        values = FitRun.objects.filter(pk=fit_id).values().first() or {}
        values.pop("artifact", None)
        values["n_agents"] = FitAgent.objects.filter(fit_id=fit_id).count()
        return json.loads(json.dumps(values, default=str))

    def get(path: str) -> dict[str, Any]:
        resp = client.get(path)
        return {"status": resp.status_code, "text": resp.content.decode()}

    def post(path: str) -> dict[str, Any]:
        resp = client.post(path, follow=True)
        return {"status": resp.status_code, "text": resp.content.decode()}

    def wait(fit_id: int, until: list[str], timeout: float, path: str = "", phase: str = "", every: float = 0.2) -> dict[str, Any]:
        """Poll the row (after a page view of `path`, if given) until its status is in `until` (and its
        progress phase is `phase`, if given); answers the last row and when it was read."""
        end = time.monotonic() + timeout
        while True:
            if path:
                client.get(path)
            current = row(fit_id)
            done = current.get("status") in until and (not phase or (current.get("progress") or {}).get("phase") == phase)
            if done or time.monotonic() > end:
                return {"row": current, "at": time.time()}
            time.sleep(every)

    ops = {"setup": setup, "manage": manage, "row": row, "get": get, "post": post, "wait": wait}
    for line in sys.stdin:
        command = json.loads(line)
        try:
            answer = {"ok": True, "value": ops[command["op"]](**command.get("args", {}))}
        except Exception:
            answer = {"ok": False, "error": traceback.format_exc()}
        sys.stdout.write("@@ " + json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
