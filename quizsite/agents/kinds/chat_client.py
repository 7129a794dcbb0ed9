"""A small client for OpenAI-compatible chat endpoints (vLLM, Ollama, llama.cpp server, hosted APIs).

Only `POST {base_url}/chat/completions` is used, the one route all of them share. Failures that a retry
can cure (429, 5xx, timeouts, dropped connections) are retried with exponential backoff, honouring a
429's Retry-After; others (401, 404, a malformed reply) fail at once. Either way the error says what
happened and never carries the API key: the key is read from the environment variable that the settings
name, at call time, and is kept out of every message, log line and stored value.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

log = logging.getLogger(__name__)


class ChatEndpointError(RuntimeError):
    """The endpoint did not give an answer; the message says why (status, attempts), never the key."""


@dataclass(frozen=True)
class ChatReply:
    text: str
    tokens: int | None
    attempts: int
    latency_ms: float
    finish_reason: str | None = None


class RateLimiter:
    """At most `per_second` request starts per second, across threads (0: no limit)."""

    def __init__(self, per_second: float):
        self.interval = 1.0 / per_second if per_second and per_second > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date or nothing: fall back on the backoff


class ChatClient:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str = "",
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        rate_limit_rps: float = 0.0,
        extra_body: dict[str, Any] | None = None,
    ):
        if not base_url:
            raise ValueError("the chat adapter needs base_url (e.g. http://localhost:8000/v1)")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.extra_body = dict(extra_body or {})
        self.limiter = RateLimiter(float(rate_limit_rps))
        self._http = httpx.Client(timeout=self.timeout_s)

    def _key(self) -> str:
        if not self.api_key_env:
            return ""
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise ChatEndpointError(
                f"the environment variable {self.api_key_env} that holds the API key is not set"
            )
        return key

    def _clean(self, text: str, key: str) -> str:
        return text.replace(key, "[key]") if key else text

    def complete(
        self, messages: list[dict[str, str]], *, max_tokens: int, temperature: float = 0.0
    ) -> ChatReply:
        key = self._key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = {
            **self.extra_body,
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        started = time.perf_counter()
        last = ""
        for attempt in range(1, self.max_retries + 2):
            self.limiter.wait()
            wait: float | None = None
            try:
                response = self._http.post(self.url, json=body, headers=headers)
            except httpx.TimeoutException:
                last = f"no answer within {self.timeout_s:g} s"
            except httpx.TransportError as exc:
                last = f"connection failed ({type(exc).__name__})"
            else:
                if response.status_code == 200:
                    return self._reply(response, attempt, started, key)
                snippet = self._clean(response.text[:300], key)
                last = f"HTTP {response.status_code}: {snippet}"
                if response.status_code == 429:
                    wait = _retry_after(response)
                elif response.status_code < 500:
                    raise ChatEndpointError(f"{self.url} refused the request ({last})")
            if attempt > self.max_retries:
                break
            delay = min(self.max_backoff_s, wait if wait is not None else self.backoff_s * 2 ** (attempt - 1))
            log.warning(
                "chat endpoint %s: %s; retry %d of %d in %.2f s",
                self.url,
                last,
                attempt,
                self.max_retries,
                delay,
            )
            time.sleep(delay)
        raise ChatEndpointError(
            f"{self.url} gave no answer after {self.max_retries + 1} attempts (last: {last})"
        )

    def _reply(self, response: httpx.Response, attempt: int, started: float, key: str) -> ChatReply:
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatEndpointError(
                f"{self.url} answered 200 but not with a chat completion: {self._clean(response.text[:300], key)}"
            ) from None
        usage = data.get("usage") or {}
        tokens = usage.get("total_tokens")
        return ChatReply(
            str(text),
            int(tokens) if isinstance(tokens, int) else None,
            attempt,
            (time.perf_counter() - started) * 1000,
            choice.get("finish_reason"),
        )

    def close(self) -> None:
        self._http.close()
