"""Chat-endpoint agents: one prompt per item to any OpenAI-compatible server, the reply parsed and kept.

Every prompt is a `string.Template` stored in the agent version's settings (`prompt`, plus an optional
`system` message); the shipped defaults are the files in `prompts/`, copied into the settings so a stored
version records the exact text its answers came from. Temperature is 0. The API key is never in the
settings: `api_key_env` names the environment variable that holds it (see chat_client).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from string import Template
from typing import Any

from quizsite.items.models import Item

from .base import AgentKind, Output, Question, register
from .chat_client import ChatClient, ChatReply
from .parsing import lettered, parse_choice, parse_list, parse_short

PROMPTS = Path(__file__).resolve().parent / "prompts"


def prompt_file(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").rstrip("\n")


CLIENT_DEFAULTS: dict[str, Any] = {
    "base_url": "http://localhost:8000/v1",
    "model": "",
    "api_key_env": "",  # the NAME of the environment variable holding the key; "" sends none (local servers)
    "timeout_s": 60.0,
    "max_retries": 4,
    "backoff_s": 1.0,
    "max_backoff_s": 60.0,
    "rate_limit_rps": 0.0,  # request starts per second, 0: no limit
    "concurrency": 1,
    "max_tokens": 64,
    "system": "",
}


class _Chat(AgentKind):
    template_name: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.template_name:
            cls.defaults = {**CLIENT_DEFAULTS, **cls.defaults, "prompt": prompt_file(cls.template_name)}

    @classmethod
    def check_settings(cls, settings: dict[str, Any]) -> None:
        """The API key is never a setting: not under a name of its own, nor pasted as api_key_env (a
        variable's name), where it was stored and echoed."""
        for secret in ("api_key", "key", "token"):
            if settings.get(secret):
                raise ValueError(
                    f"do not store the API key in the settings ({secret!r}): set api_key_env to the "
                    "name of an environment variable that holds it"
                )
        name = settings.get("api_key_env", "")
        if not isinstance(name, str) or (name and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)):
            raise ValueError("api_key_env must be the NAME of an environment variable that holds the key "
                             "(e.g. OPENAI_API_KEY), not the key itself")

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        s = self.settings
        self.check_settings(s)
        self.template = Template(s["prompt"])
        self.client = ChatClient(
            base_url=s["base_url"],
            model=s["model"],
            api_key_env=s["api_key_env"],
            timeout_s=s["timeout_s"],
            max_retries=s["max_retries"],
            backoff_s=s["backoff_s"],
            max_backoff_s=s["max_backoff_s"],
            rate_limit_rps=s["rate_limit_rps"],
        )

    def fields(self, question: Question) -> dict[str, str]:
        raise NotImplementedError

    def parse(self, question: Question, text: str) -> tuple[str | list[str], dict[str, Any]]:
        raise NotImplementedError

    def messages(self, question: Question) -> list[dict[str, str]]:
        try:
            user = self.template.substitute(self.fields(question))
        except (KeyError, ValueError) as exc:
            raise ValueError(
                f"{self.name}: the prompt template uses an unknown or malformed field ({exc})"
            ) from None
        system = self.settings.get("system") or ""
        return ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]

    def answer(self, question: Question) -> Output:
        messages = self.messages(question)
        reply: ChatReply = self.client.complete(messages, max_tokens=int(self.settings["max_tokens"]))
        guess, parsed = self.parse(question, reply.text)
        prompt_sha1 = hashlib.sha1(messages[-1]["content"].encode()).hexdigest()
        raw = {
            "text": reply.text,
            "model": self.settings["model"],
            "attempts": reply.attempts,
            "finish_reason": reply.finish_reason,
            "prompt_sha1": prompt_sha1,
            **parsed,
        }
        return Output(guess, raw=raw, latency_ms=reply.latency_ms, tokens=reply.tokens)

    def answer_many(self, questions: Iterable[Question]) -> list[Output]:
        qs = list(questions)
        workers = max(1, int(self.settings["concurrency"]))
        if workers == 1 or len(qs) < 2:
            return [self.answer(q) for q in qs]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(self.answer, qs))  # map keeps the order of the questions


def _choice(question: Question, text: str) -> tuple[str, dict[str, Any]]:
    index = parse_choice(text, question.options)
    if index is None:
        return "", {"choice_index": None, "parse_error": "no option named in the reply"}
    return question.options[index], {"choice_index": index}


def _short(text: str) -> tuple[str, dict[str, Any]]:
    guess = parse_short(text)
    return guess, ({} if guess else {"parse_error": "empty reply"})


@register
class ChatQuizbowl(_Chat):
    """CAIMIRA's LLM protocol: the question so far (each clue prefix q_k) -> a short answer, one demonstration."""

    name = "chat-quizbowl"
    item_kinds = frozenset({Item.Kind.TOSSUP})
    per_clue = True
    template_name = "quizbowl"

    def fields(self, question: Question) -> dict[str, str]:
        return {"question": question.text, "category": question.category}

    def parse(self, question: Question, text: str) -> tuple[str, dict[str, Any]]:
        return _short(text)


@register
class ChatGhigliottinaOpen(_Chat):
    """The Italian open game: five clues -> one word (judged like a person's typed answer)."""

    name = "chat-ghigliottina-open"
    item_kinds = frozenset({Item.Kind.GHIGLIOTTINA})
    task = "ghigliottina-open"
    template_name = "ghigliottina_open"

    def fields(self, question: Question) -> dict[str, str]:
        return {"clues": ", ".join(question.clues)}

    def parse(self, question: Question, text: str) -> tuple[str, dict[str, Any]]:
        return _short(text)


@register
class ChatGhigliottinaChoose(_Chat):
    """ITA-Bench's multiple-choice prompt (letters A-D) sent as a chat message; the reply's letter is the pick."""

    name = "chat-ghigliottina-choose"
    item_kinds = frozenset({Item.Kind.GHIGLIOTTINA})
    task = "ghigliottina-choose"
    template_name = "ghigliottina_choose"
    defaults = {"max_tokens": 8}

    def fields(self, question: Question) -> dict[str, str]:
        if not question.options:
            raise ValueError(
                f"item {question.item_id}: an open game has no choices; use chat-ghigliottina-open"
            )
        return {"clues": ", ".join(question.clues), "options": lettered(question.options)}

    def parse(self, question: Question, text: str) -> tuple[str, dict[str, Any]]:
        return _choice(question, text)


@register
class ChatArchaeologyChoose(_Chat):
    name = "chat-archaeology-choose"
    item_kinds = frozenset({Item.Kind.ARCHAEOLOGY})
    task = "archaeology-choose"
    template_name = "archaeology_choose"
    defaults = {"max_tokens": 8}

    def fields(self, question: Question) -> dict[str, str]:
        return {"passage": question.text, "options": lettered(question.options)}

    def parse(self, question: Question, text: str) -> tuple[str, dict[str, Any]]:
        return _choice(question, text)


@register
class ChatArchaeologyWrite(_Chat):
    """The passage only (never the options) -> the question, scored by similarity as people's are."""

    name = "chat-archaeology-write"
    item_kinds = frozenset({Item.Kind.ARCHAEOLOGY})
    task = "archaeology-write"
    template_name = "archaeology_write"
    defaults = {"max_tokens": 96}

    def fields(self, question: Question) -> dict[str, str]:
        return {"passage": question.text}

    def parse(self, question: Question, text: str) -> tuple[str, dict[str, Any]]:
        return _short(text)


@register
class ChatRomqaSelect(_Chat):
    """RoMQA's closed setting: the question and its candidates -> the list of every answer among them."""

    name = "chat-romqa-select"
    item_kinds = frozenset({Item.Kind.ROMQA})
    task = "romqa-select"
    template_name = "romqa_select"
    defaults = {"max_tokens": 256}

    def fields(self, question: Question) -> dict[str, str]:
        return {"question": question.text, "candidates": "\n".join(f"- {c}" for c in question.options)}

    def parse(self, question: Question, text: str) -> tuple[list[str], dict[str, Any]]:
        chosen, unmatched = parse_list(text, question.options)
        return chosen, {"unmatched": unmatched}
