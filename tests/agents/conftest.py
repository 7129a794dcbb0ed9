"""Item banks for the agent tests, built from the demo content (never from ../shared/data).

Every demo tossup has its own answer, so on the demo set alone a guesser that holds out the asked tossup
can never be right: `halves` gives a bank where answers repeat without any question being seen twice.
Each demo tossup is cut in two tossups with the same answer line: its first three clues ("halves-early")
and its last two ("halves-late"); an agent answering a late half can learn the answer only from the
early half, which is another question.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def demo(db):
    from quizsite.items.demo import demo_load

    demo_load()


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def halves(demo, tmp_path):
    from quizsite.items.importers import items_import
    from quizsite.items.models import Item

    early, late = [], []
    for item in Item.objects.filter(item_set__slug="demo-tossups").order_by("id"):
        words, ends = item.data["words"], item.data["clue_ends"]
        base = {"answer": item.answer, "category": item.category}
        early.append({**base, "id": item.external_id + "-early", "question": " ".join(words[: ends[2]])})
        late.append({**base, "id": item.external_id + "-late", "question": " ".join(words[ends[2] :])})
    items_import(fmt="quizbowl", path=_write(tmp_path / "early.jsonl", early), set_slug="halves-early")
    items_import(fmt="quizbowl", path=_write(tmp_path / "late.jsonl", late), set_slug="halves-late")
    return ["halves-early", "halves-late"]


@pytest.fixture
def demo_items(db):  # type: ignore[no-untyped-def]
    """kind -> the demo items of that kind, in id order (the files that ship in quizsite/items/demo)."""
    from quizsite.items.demo import DEMO_DIR, DEMO_SETS
    from quizsite.items.importers import items_import
    from quizsite.items.models import Item

    for filename, fmt, slug, name in DEMO_SETS:
        items_import(fmt=fmt, path=DEMO_DIR / filename, set_slug=slug, set_name=name)
    by_kind: dict[str, list[Item]] = {}
    for item in Item.objects.order_by("id"):
        by_kind.setdefault(item.kind, []).append(item)
    return by_kind


class FakeChatServer:
    """An OpenAI-compatible `/chat/completions` on loopback, in a thread. `script` holds the next replies
    (status, content, delay, headers); when it is empty `reply(body)` makes a 200 answer."""

    def __init__(self) -> None:
        import http.server
        import json
        import threading
        import time

        self.requests: list[dict] = []
        self.script: list[dict] = []
        self.reply = lambda body: "A"
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # type: ignore[no-untyped-def]
                pass

            def do_POST(self):  # type: ignore[no-untyped-def]
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                step = server.script.pop(0) if server.script else {}
                time.sleep(step.get("delay", 0))
                status = step.get("status", 200)
                if status == 200:
                    content = step.get("content", server.reply(body))
                    payload = json.dumps(
                        {
                            "choices": [
                                {
                                    "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {"total_tokens": 11},
                        }
                    ).encode()
                else:
                    text = step.get("body", f"error {status}")
                    if step.get("echo_auth"):
                        text += " " + self.headers.get("Authorization", "")
                    payload = json.dumps({"error": {"message": text}}).encode()
                try:
                    self.send_response(status)
                    for k, v in step.get("headers", {}).items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat_server():  # type: ignore[no-untyped-def]
    server = FakeChatServer()
    yield server
    server.close()
