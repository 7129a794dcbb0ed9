"""Built-in AI agent kinds. Each module registers its kinds in `base.REGISTRY` on import."""

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

__all__ = [
    "REGISTRY",
    "AgentKind",
    "Output",
    "Question",
    "question_for",
    "register",
    "tossup_positions",
    "tossup_prefix_question",
]
