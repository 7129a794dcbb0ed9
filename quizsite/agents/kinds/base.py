"""What an AI agent kind is, and what it may see of an item.

An agent never receives an `Item`: it receives a `Question`, built here from the item with the answer
removed (for a tossup, only the words up to the position asked about), so no agent can score by peeking.
Tests check this by giving agents questions whose answers they could not otherwise know.

Every kind answers with an `Output`, kept raw in the responses table next to its judged result.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from quizsite.items.models import Item


@dataclass(frozen=True)
class Question:
    """An item as an agent may see it: never the answer, never which option is right."""

    item_id: int
    kind: str  # Item.Kind value
    text: str  # tossup: the words revealed so far; archaeology: the passage; romqa: the question;
    #            ghigliottina: the five clues joined by " · "
    category: str = ""
    clue_index: int | None = None  # tossups: the clue being answered after (0-based); None otherwise
    word_index: int | None = None  # tossups: words revealed (len of the prefix)
    n_words: int | None = None
    clues: tuple[str, ...] = ()  # ghigliottina: the five clue words
    options: tuple[
        str, ...
    ] = ()  # archaeology: the three questions; ghigliottina: the choices; romqa: candidates


def _option_order(item_id: int, n: int) -> list[int]:
    """A fixed shuffle per item, so the true question is not always first and a rerun sees the same order."""
    rng = random.Random(hashlib.sha1(f"options:{item_id}".encode()).hexdigest())
    order = list(range(n))
    rng.shuffle(order)
    return order


def tossup_positions(item: Item) -> list[int]:
    """Word counts at the end of each clue: the cumulative items q_1..q_n of CAIMIRA."""
    return [int(end) for end in item.data["clue_ends"]]  # exclusive end index = words revealed


def question_for(item: Item, *, clue_index: int | None = None) -> Question:
    """The answer-free view of an item. For a tossup, `clue_index` k gives the words up to the end of clue k."""
    kind = item.kind
    if kind == Item.Kind.TOSSUP:
        words: list[str] = item.data["words"]
        ends = tossup_positions(item)
        k = len(ends) - 1 if clue_index is None else clue_index
        if not 0 <= k < len(ends):
            raise ValueError(f"clue_index {clue_index} is outside 0..{len(ends) - 1}")
        w = ends[k]
        return Question(item.pk, kind, " ".join(words[:w]), item.category, k, w, len(words))
    if kind == Item.Kind.ARCHAEOLOGY:
        opts = [item.data["true_question"], *item.data["other_questions"]]
        order = _option_order(item.pk, len(opts))
        return Question(item.pk, kind, item.text, item.category, options=tuple(opts[i] for i in order))
    if kind == Item.Kind.GHIGLIOTTINA:
        clues = tuple(item.data["clues"])
        choices = tuple(item.data.get("choices") or ())  # None: an open game, the agent writes a word
        return Question(item.pk, kind, item.text, item.category, clues=clues, options=choices)
    if kind == Item.Kind.ROMQA:
        cands = tuple(c["text"] for c in item.data["candidates"])
        return Question(item.pk, kind, item.text, item.category, options=cands)
    raise ValueError(f"items of kind {kind!r} have no agent view")


def tossup_prefix_question(
    words: Sequence[str], *, n_words: int | None = None, category: str = "", item_id: int = 0,
    clue_index: int | None = None,
) -> Question:
    """A tossup as a live player has seen it: any word prefix, with no Item at hand (a bot in a room
    sees words, not the item). `word_index` is the number of words seen, as a live buzz records it."""
    return Question(item_id, Item.Kind.TOSSUP, " ".join(words), category, clue_index, len(words), n_words)


@dataclass
class Output:
    """One answer. `guess` is text (tossup, archaeology, ghigliottina) or a list of texts (romqa)."""

    guess: str | list[str]
    confidence: float | None = None
    raw: dict[str, Any] = field(default_factory=dict)  # model text, scores per option, retrieved docs ...
    latency_ms: float | None = None
    tokens: int | None = None
    #: Added for retrievers: ranked candidate answers (top-k titles). When given, the answer is judged
    #: correct if the judge accepts any of them (scoring.agent_topk_score); `guess` is then the first.
    candidates: list[str] = field(default_factory=list)


class AgentKind:
    """One kind of AI agent. Subclasses set `name`, `item_kinds`, and implement `answer`.

    Lifecycle in a run: `__init__(settings)` once, `prepare(items)` once with every item of the run
    (train or index here; a guesser must hold out the tossup it answers, see `exclude` below), then
    `answer(question)` per item and position. `settings` is the agent version's JSON; `defaults` are
    merged under it so a stored version always records every value that decided its answers.
    """

    name: ClassVar[str]
    item_kinds: ClassVar[frozenset[str]]
    defaults: ClassVar[dict[str, Any]] = {}
    #: True when the kind answers each tossup at every clue prefix (one response per q_k).
    per_clue: ClassVar[bool] = False
    #: The annotation task (`Campaign.Task` value) whose scoring rule applies to this kind's answers, e.g.
    #: "archaeology-write" (similarity to the true question); "" for tossups and kinds judged by item kind.
    #: The runner passes it to `scoring.agent_answer_score(..., task=...)`.
    task: ClassVar[str] = ""
    #: Added (optional): the AgentConfig sub-type a config of this kind gets by default, and a line on the
    #: agents page. Older kinds that do not set them get "other" and the class docstring.
    subtype: ClassVar[str] = "other"
    description: ClassVar[str] = ""

    @classmethod
    def check_settings(cls, settings: dict[str, Any]) -> None:
        """Added (optional): raise ValueError with a readable reason for settings the kind cannot use.
        Called when a version is registered, before anything is stored; the default accepts anything."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = {**self.defaults, **(settings or {})}

    def prepare(self, items: Sequence[Item]) -> None:  # noqa: B027 - optional hook
        """Train or index on the run's items (and whatever collection the settings name)."""

    def answer(self, question: Question) -> Output:
        raise NotImplementedError

    def answer_many(self, questions: Iterable[Question]) -> list[Output]:
        """Batching hook: kinds whose model is faster on batches override this."""
        return [self.answer(q) for q in questions]


REGISTRY: dict[str, type[AgentKind]] = {}


def register(cls: type[AgentKind]) -> type[AgentKind]:
    if cls.name in REGISTRY:
        raise ValueError(f"agent kind {cls.name!r} is registered twice")
    REGISTRY[cls.name] = cls
    return cls
