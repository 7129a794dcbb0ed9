"""Which agents can sit in a play room as bots, and the `bots` room setting that lists them.

No play-service imports (services.settings_clean uses this module): errors are ValueError / LookupError,
which the callers turn into protocol errors.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import import_module
from typing import Any, ClassVar

from django.conf import settings
from django.db import transaction

from quizsite.agents.kinds import REGISTRY, AgentKind, Output, Question, load_all
from quizsite.agents.models import Agent, AgentConfig
from quizsite.agents.selectors import agentversion_latest
from quizsite.items.models import Item

MAX_BOTS = 8  # per room


@dataclass(frozen=True)
class Bot:
    """What a bot plays as: its Agent row (responses are written for it), its model, its buzz threshold."""

    name: str
    agent: Agent
    kind: AgentKind
    threshold: float


def _kinds() -> dict[str, type[AgentKind]]:
    """Every agent kind: the built-in ones (all their modules imported: `play_bot --kind qb-guesser-tfidf`
    found no guesser before) and those of AGENT_KIND_MODULES (a person's own models)."""
    load_all()
    for module in settings.AGENT_KIND_MODULES:
        import_module(module)
    return REGISTRY


def _spec(agent: Agent) -> dict[str, Any] | None:
    spec = (agent.meta or {}).get("bot")
    if not isinstance(spec, dict):
        return None
    cls = _kinds().get(str(spec.get("kind", "")))
    if cls is None or Item.Kind.TOSSUP not in cls.item_kinds:
        return None
    return spec


class HeldOut(AgentKind):
    """A trained agent (a guesser) in a room sees words, not the item, yet must not answer from the tossup
    being read, as in a run (leave-one-out). The room reads tossups of the bank, so the words seen so far
    name the bank tossups they can be the start of; the question is asked as the first of them, which the
    kind holds out (with its copies). Words that start no bank tossup get no answer."""

    name: ClassVar[str] = "held-out"
    item_kinds: ClassVar[frozenset[str]] = frozenset({Item.Kind.TOSSUP})

    def __init__(self, inner: AgentKind, items: list[Item]):
        super().__init__({})
        self.inner = inner
        self.starts = [(item.pk, item.data.get("words") or []) for item in items]

    def answer(self, question: Question) -> Output:
        seen = question.text.split()
        for pk, words in self.starts:
            if words[: len(seen)] == seen:
                return self.inner.answer(replace(question, item_id=pk))
        return Output(guess="", confidence=0.0, raw={"skipped": "the words start no tossup of the bank"})


def _live_kinds() -> dict[str, type[AgentKind]]:
    """Agent kinds that can buzz: they answer tossups with a guess and a confidence (not retrievers, whose
    answer is a ranked list judged top-k)."""
    return {
        name: cls
        for name, cls in _kinds().items()
        if Item.Kind.TOSSUP in cls.item_kinds and getattr(cls, "subtype", "") != "retriever"
    }


def _builtin_ensure() -> None:
    if not AgentConfig.objects.exists():  # a fresh install: the built-in agents, as the agents pages make them
        from quizsite.agents.services import agentconfigs_ensure_builtin

        agentconfigs_ensure_builtin()


def _config_bot(name: str) -> Bot | None:
    """An agent of the agents app (its latest version) as a bot: the version's Agent row plays, with the
    version's settings, trained on every tossup of the bank (the one being read held out)."""
    _builtin_ensure()
    config = AgentConfig.objects.filter(name=name).first()
    cls = _live_kinds().get(config.kind) if config is not None else None
    version = agentversion_latest(config) if config is not None and cls is not None else None
    if cls is None or version is None:
        return None
    items = list(Item.objects.filter(kind=Item.Kind.TOSSUP).order_by("id"))
    inner = cls(version.settings)
    inner.prepare(items)
    threshold = float(version.settings.get("bot_threshold", getattr(cls, "bot_threshold", 0.5)))
    return Bot(name=name, agent=version.agent, kind=HeldOut(inner, items), threshold=threshold)


def bot_resolve(*, name: str) -> Bot:
    """The one place that maps a bot name to (Agent row, kind instance): an agent of the agents app (its
    latest version), or an Agent of kind ai whose `meta["bot"]` names a registered kind, its settings and
    threshold (`play_bot --kind`)."""
    for agent in Agent.objects.filter(kind=Agent.Kind.AI, name=name).order_by("id"):
        spec = _spec(agent)
        if spec is not None:
            kind = REGISTRY[spec["kind"]](spec.get("settings") or {})
            return Bot(name=name, agent=agent, kind=kind, threshold=float(spec.get("threshold", 0.5)))
    bot = _config_bot(name)
    if bot is not None:
        return bot
    raise LookupError(f"no tossup-capable bot named {name!r}")


def bots_available() -> list[str]:
    """Names of the agents that can play tossups in a room, for the room's settings."""
    names = {
        a.name for a in Agent.objects.filter(kind=Agent.Kind.AI, meta__has_key="bot") if _spec(a) is not None
    }
    _builtin_ensure()
    live = _live_kinds()
    names |= set(
        AgentConfig.objects.filter(kind__in=list(live), versions__isnull=False).values_list("name", flat=True)
    )
    return sorted(names)


def bot_agent_register(
    *, name: str, kind: str, kind_settings: dict[str, Any] | None = None, threshold: float = 0.5
) -> Agent:
    """Make (or update) the Agent a bot plays as. Stand-in for agent versions (agents app)."""
    kinds = _kinds()
    cls = kinds.get(kind)
    if cls is None or Item.Kind.TOSSUP not in cls.item_kinds:
        tossup = sorted(n for n, c in kinds.items() if Item.Kind.TOSSUP in c.item_kinds)
        raise ValueError(f"{kind!r} is not a registered tossup agent kind (known: {', '.join(tossup) or 'none'})")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("threshold must be between 0 and 1")
    spec = {"kind": kind, "settings": {**cls.defaults, **(kind_settings or {})}, "threshold": threshold}
    with transaction.atomic():
        agent = Agent.objects.filter(kind=Agent.Kind.AI, name=name, meta__has_key="bot").first()
        if agent is None:
            return Agent.objects.create(
                kind=Agent.Kind.AI, name=name, external_id=f"bot:{name}", meta={"bot": spec}
            )
        agent.meta = {**agent.meta, "bot": spec}
        agent.save(update_fields=["meta"])
        return agent


# --- the `bots` room setting ---------------------------------------------------------------------------


def bots_setting_apply(*, current: list[str], value: Any) -> list[str]:
    """`bots` in a settings message: {"add": NAME}, {"remove": NAME} or the whole list. Added names must be
    available bots; the result is the room's new list (checked again by settings_clean)."""
    if isinstance(value, dict) and len(value) == 1 and set(value) <= {"add", "remove"}:
        ((op, name),) = value.items()
        if not isinstance(name, str):
            raise ValueError("bots: a bot is named by a string")
        if op == "add":
            return current if name in current else [*current, name]
        return [n for n in current if n != name]
    if isinstance(value, list):
        return value
    raise ValueError('bots must be {"add": NAME}, {"remove": NAME} or a list of names')


def bots_setting_shape(value: Any) -> list[str]:
    """The list's shape alone (no database): for a join's query string, checked fully when the room is made."""
    if not isinstance(value, list) or not all(isinstance(n, str) and 0 < len(n) <= 200 for n in value):
        raise ValueError("bots must be a list of bot names")
    names = list(dict.fromkeys(value))
    if len(names) > MAX_BOTS:
        raise ValueError(f"a room has at most {MAX_BOTS} bots")
    return names


def bots_setting_clean(value: Any) -> list[str]:
    names = bots_setting_shape(value)
    available = set(bots_available())
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ValueError(
            f"no tossup-capable bot named {unknown[0]!r}; available: {', '.join(sorted(available)) or 'none'}"
        )
    return names
