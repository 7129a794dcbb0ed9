"""Which agents can sit in a play room as bots, and the `bots` room setting that lists them.

No play-service imports (services.settings_clean uses this module): errors are ValueError / LookupError,
which the callers turn into protocol errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from django.conf import settings
from django.db import transaction

from quizsite.agents.kinds import REGISTRY, AgentKind
from quizsite.agents.models import Agent
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
    """The registered agent kinds, with those of AGENT_KIND_MODULES (a person's own models) imported."""
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


def bot_resolve(*, name: str) -> Bot:
    """The one place that maps a bot name to (Agent row, kind instance). Until agent versions land a bot
    is an Agent of kind ai whose `meta["bot"]` names a registered kind, its settings and threshold."""
    for agent in Agent.objects.filter(kind=Agent.Kind.AI, name=name).order_by("id"):
        spec = _spec(agent)
        if spec is not None:
            kind = REGISTRY[spec["kind"]](spec.get("settings") or {})
            return Bot(name=name, agent=agent, kind=kind, threshold=float(spec.get("threshold", 0.5)))
    raise LookupError(f"no tossup-capable bot named {name!r}")


def bots_available() -> list[str]:
    """Names of the agents that can play tossups in a room, for the room's settings."""
    names = {
        a.name for a in Agent.objects.filter(kind=Agent.Kind.AI, meta__has_key="bot") if _spec(a) is not None
    }
    return sorted(names)


def bot_agent_register(
    *, name: str, kind: str, kind_settings: dict[str, Any] | None = None, threshold: float = 0.5
) -> Agent:
    """Make (or update) the Agent a bot plays as. Stand-in for agent versions (agents app)."""
    cls = _kinds().get(kind)
    if cls is None or Item.Kind.TOSSUP not in cls.item_kinds:
        raise ValueError(
            f"{kind!r} is not a registered tossup agent kind (known: {', '.join(sorted(REGISTRY)) or 'none'})"
        )
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
