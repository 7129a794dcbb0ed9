"""Built-in AI agent kinds. Each module registers its kinds in `base.REGISTRY` on import.

`load_all()` imports every module of this package, so a new kind only needs its own module here (no list
to edit) and the runner, the command and the pages see it through `REGISTRY`.
"""

import importlib
import pkgutil

from . import chat, embedding, lmlik  # noqa: F401 - importing registers the kinds
from .base import (
    REGISTRY,
    AgentKind,
    Output,
    Question,
    question_for,
    register,
    tossup_positions,
    tossup_prefix_question,
)

_loaded = False


def load_all() -> dict[str, type[AgentKind]]:
    """Import every kind module of this package and return the registry. The package is listed once per
    process: callers (the bot catalogue on every room page) ask for it often."""
    global _loaded
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("_") and info.name != "base":
                importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True
    return REGISTRY


__all__ = [
    "REGISTRY",
    "AgentKind",
    "Output",
    "Question",
    "load_all",
    "question_for",
    "register",
    "tossup_positions",
    "tossup_prefix_question",
]
