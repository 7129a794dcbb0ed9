"""How an AI agent's answer to an item is judged: the same judge as live play, the same task scores as
annotation (DATA.md "Scores by task"). Pure functions of the item's fields, no database access."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quizsite.items.models import Item
from quizsite.items.vectors import WordVectors, text_similarity
from quizsite.judge import JUDGE_VERSION, judge
from quizsite.judge.normalize import normalize

#: archaeology-write: a written question is correct at or above this similarity to the true question, the
#: default of `annotate.Campaign.similarity_threshold` (a test keeps the two equal; agents cannot import
#: annotate, which imports agents).
WRITE_SIMILARITY_THRESHOLD = 0.8


@dataclass(frozen=True)
class AgentScore:
    verdict: str  # accept / prompt / reject; a prompt counts as wrong for an agent that cannot be asked again
    correct: bool
    score: float
    word_index: int | None = None
    clue_index: int | None = None
    n_words: int | None = None
    judge_version: str = ""


def _tossup_position(item: Item, word_index: int | None, clue_index: int | None) -> tuple[int, int, int]:
    words, ends = item.data["words"], item.data["clue_ends"]
    if word_index is None:
        clue = len(ends) - 1 if clue_index is None else clue_index
        if not 0 <= clue < len(ends):
            raise ValueError(f"clue_index {clue_index} is outside 0..{len(ends) - 1}")
        word_index = ends[clue]
    if not 0 < word_index <= len(words):
        raise ValueError(f"word_index {word_index} is outside 1..{len(words)}")
    clue = next(k for k, end in enumerate(ends) if word_index - 1 < end)
    return word_index, clue, len(words)


def agent_answer_score(
    item: Item,
    guess: Any,
    *,
    word_index: int | None = None,
    clue_index: int | None = None,
    task: str = "",
    similarity_source: WordVectors | None = None,
    similarity_threshold: float = WRITE_SIMILARITY_THRESHOLD,
) -> AgentScore:
    """Judge one answer. Raises ValueError with a readable reason when the guess cannot apply to the item.

    `task` is the agent kind's `task` (an annotation task name): "archaeology-write" scores the written
    question by sentence similarity to the true question, with annotation's own function
    (`items.vectors.text_similarity`, the `SentenceVectors` default) and threshold; "ghigliottina-choose"
    counts an exact pick as annotation does; otherwise Ghigliottina answers (open games) go through the judge.
    """
    if item.kind == Item.Kind.TOSSUP:
        if not isinstance(guess, str):
            raise ValueError("a tossup guess is a string")
        w, clue, n = _tossup_position(item, word_index, clue_index)
        ruling = judge(item.answer, guess, question_text=" ".join(item.data["words"]), word_index=w)
        return AgentScore(ruling.verdict, ruling.verdict == "accept", ruling.score, w, clue, n, JUDGE_VERSION)
    if item.kind in (Item.Kind.GHIGLIOTTINA, Item.Kind.CLUE_PREFIX):
        if not isinstance(guess, str):
            raise ValueError("the guess is a string")
        if task == "ghigliottina-choose" and item.data.get("choices"):
            # a pick among the shown words, as for people: right only when it is the solution itself
            correct = normalize(guess) == normalize(item.answer)
            return AgentScore("accept" if correct else "reject", correct, float(correct))
        ruling = judge(item.answer, guess)
        return AgentScore(
            ruling.verdict, ruling.verdict == "accept", ruling.score, judge_version=JUDGE_VERSION
        )
    if item.kind == Item.Kind.ARCHAEOLOGY:
        if not isinstance(guess, str):
            raise ValueError("an archaeology guess is the text of the chosen question")
        if task == "archaeology-write":
            sim = text_similarity([(guess, item.data["true_question"])], similarity_source)[0]
            return AgentScore("accept" if sim >= similarity_threshold else "reject", sim >= similarity_threshold, sim)
        correct = normalize(guess) == normalize(item.answer)
        return AgentScore("accept" if correct else "reject", correct, float(correct))
    if item.kind == Item.Kind.ROMQA:
        if not isinstance(guess, list) or not all(isinstance(g, str) for g in guess):
            raise ValueError("a romqa guess is a list of candidate texts")
        gold = {normalize(c["text"]) for c in item.data["candidates"] if c["is_answer"]}
        chosen = {normalize(g) for g in guess}
        hits = len(gold & chosen)
        # set F1 as annotate.tasks.set_f1 computes it for people (2PR/(P+R) = 2h/(|gold|+|chosen|); two
        # empty sets agree); candidate texts are compared normalised, as a chat model may re-case them
        f1 = 2 * hits / (len(gold) + len(chosen)) if gold or chosen else 1.0
        correct = chosen == gold
        return AgentScore("accept" if correct else "reject", correct, f1)
    raise ValueError(f"items of kind {item.kind!r} cannot be scored")


def agent_topk_score(
    item: Item, candidates: list[str], *, word_index: int | None = None, clue_index: int | None = None
) -> tuple[AgentScore, list[str]]:
    """A retriever's answer: correct when the judge accepts any of its top-k titles (recall at k, as the
    CAIMIRA retrievers are scored). Returns the score (its verdict and score are the best candidate's) and
    each candidate's verdict, which the caller keeps in the raw output."""
    if not candidates:
        raise ValueError("a top-k answer needs at least one candidate")
    scored = [agent_answer_score(item, c, word_index=word_index, clue_index=clue_index) for c in candidates]
    rank = {"accept": 2, "prompt": 1}
    best = max(scored, key=lambda s: (rank.get(s.verdict, 0), s.score))
    correct = any(s.correct for s in scored)
    return (
        AgentScore(
            best.verdict,
            correct,
            best.score,
            best.word_index,
            best.clue_index,
            best.n_words,
            best.judge_version,
        ),
        [s.verdict for s in scored],
    )
