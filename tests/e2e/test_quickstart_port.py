"""`quickstart` on a port something already listens on says so, names --port, and claims nothing."""

import socket
import subprocess
import sys

from .servers import REPO, app_env


def test_a_busy_port_is_named_with_the_way_out(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "manage.py", "quickstart", "--port", str(port), "--no-worker", "--no-demo"],
            cwd=REPO,
            env=app_env(tmp_path / "var"),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert out.returncode != 0
    assert f"port {port} on 127.0.0.1 is already in use" in out.stderr and "--port" in out.stderr
    assert (
        "running" not in out.stdout and "database ready" not in out.stdout
    )  # it stopped before doing anything
