"""What each task type shows and how it judges a submission (no database writes here).

Kept apart from services so that a task type is one short table entry plus two small functions, and a
test can judge a submission without a request.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from quizsite.items.models import Item
from quizsite.judge import judge

from .models import Campaign

Task = Campaign.Task

TASK_KIND: dict[str, str] = {
    Task.ARCHAEOLOGY_CHOOSE: Item.Kind.ARCHAEOLOGY,
    Task.ARCHAEOLOGY_WRITE: Item.Kind.ARCHAEOLOGY,
    Task.ARCHAEOLOGY_AUTHOR: Item.Kind.ARCHAEOLOGY,
    Task.GHIGLIOTTINA_CHOOSE: Item.Kind.GHIGLIOTTINA,
    Task.GHIGLIOTTINA_OPEN: Item.Kind.GHIGLIOTTINA,
    Task.ROMQA_SELECT: Item.Kind.ROMQA,
}

DEFAULT_INSTRUCTIONS: dict[str, str] = {
    Task.ARCHAEOLOGY_CHOOSE: "Read the text. Someone wrote it to answer one of the three questions below it. "
    "Pick the question that made them write it (keys 1-3, then Enter).",
    Task.ARCHAEOLOGY_WRITE: "Read the text. Someone wrote it to answer a question. Write that question "
    "as you think they were asked it, in one sentence, then press Enter.",
    Task.ARCHAEOLOGY_AUTHOR: "Think of a question you would like answered, as a researcher would. Write it, "
    "then write a short text (a paragraph) that answers it, then two other questions that sound plausible "
    "for the same text but that it does not answer.",
    Task.GHIGLIOTTINA_CHOOSE: "Five clue words share one hidden word that links to each of them (an idiom, "
    "a title, a compound...). Pick the link among the four words (keys 1-4, then Enter).",
    Task.GHIGLIOTTINA_OPEN: "Five clue words share one hidden word that links to each of them. Type the "
    "link before the timer runs out, then press Enter.",
    Task.ROMQA_SELECT: "Tick every candidate that answers the question (keys 1-9 toggle the first nine), "
    "then press Enter. Questions of a group are related; answer each on its own.",
}

DEFAULT_CONSENT = (
    "This is a research study on how people and AI systems answer questions. Your answers and the time you "
    "take are recorded under a pseudonymous id; your name and e-mail are never part of the research data. "
    "You may stop at any time."
)

TIMER_GRACE_MS = 2000  # network latency an on-time open-game answer may still ride on


class AnnotateError(Exception):
    """A refused submission; the page shows the message and the annotator can try again."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass
class Judged:
    given: str
    correct: bool | None
    score: float | None
    verdict: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def group_key(task: str, item_id: int, data: Mapping[str, Any] | None) -> str:
    """The unit handed to one annotator: a romqa cluster (so robust F1 is defined), otherwise the item."""
    if task == Task.ROMQA_SELECT and data and data.get("cluster_id") not in (None, ""):
        return f"cluster:{data['cluster_id']}"
    return f"item:{item_id}"


def choices_for(task: str, item: Item, rng: random.Random) -> list[str] | None:
    """The options in a fresh order for one annotator (recorded, so position effects can be studied)."""
    if task == Task.ARCHAEOLOGY_CHOOSE:
        options = [item.data["true_question"], *item.data["other_questions"]]
    elif task == Task.GHIGLIOTTINA_CHOOSE:
        options = list(item.data["choices"])
    elif task == Task.ROMQA_SELECT:
        options = [c["text"] for c in item.data["candidates"]]
    else:
        return None
    rng.shuffle(options)
    return options


def set_f1(chosen: set[str], gold: set[str]) -> float:
    """Set F1; two empty sets agree perfectly."""
    if not chosen and not gold:
        return 1.0
    hits = len(chosen & gold)
    if not hits:
        return 0.0
    precision, recall = hits / len(chosen), hits / len(gold)
    return 2 * precision * recall / (precision + recall)


def _index(post: Mapping[str, Any], choices: list[str]) -> int:
    raw = post.get("choice")
    try:
        index = int(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise AnnotateError("no_choice", "Pick one of the options first.") from None
    if not 0 <= index < len(choices):
        raise AnnotateError("no_choice", "That option does not exist.")
    return index


def submission_judge(
    task: str, item: Item, choices: list[str] | None, post: Mapping[str, Any], *, elapsed_ms: int, timer_s: int
) -> Judged:
    """Turn the posted form into what the responses table records."""
    if task in (Task.ARCHAEOLOGY_CHOOSE, Task.GHIGLIOTTINA_CHOOSE):
        assert choices is not None
        index = _index(post, choices)
        given = choices[index]
        truth = item.data["true_question"] if task == Task.ARCHAEOLOGY_CHOOSE else item.answer
        correct = given == truth
        return Judged(given, correct, float(correct), "accept" if correct else "reject", {"choice_index": index})

    if task == Task.ARCHAEOLOGY_WRITE:
        text = " ".join(str(post.get("text") or "").split())
        if not text:
            raise AnnotateError("empty", "Write the question first.")
        # judged afterwards by sentence similarity (services.written_score), never during the session
        return Judged(text[:2000], None, None)

    if task == Task.GHIGLIOTTINA_OPEN:
        text = " ".join(str(post.get("text") or "").split())[:200]
        timed_out = elapsed_ms > timer_s * 1000 + TIMER_GRACE_MS
        if not text and not timed_out and elapsed_ms < timer_s * 1000 - TIMER_GRACE_MS:
            # an empty Enter with time left is a slip, not an answer; at the end of the time the page sends
            # what was typed, empty too, and that is recorded as no answer
            raise AnnotateError("empty", "Type the link word first (or skip the game).")
        if timed_out or not text:
            return Judged(text, False, 0.0, "reject", {"timeout": timed_out})
        ruling = judge(item.answer, text)
        return Judged(text, ruling.verdict == "accept", ruling.score, ruling.verdict, {"matched": ruling.matched, "rule": ruling.rule})

    if task == Task.ROMQA_SELECT:
        assert choices is not None
        picks: list[int] = []
        getlist = getattr(post, "getlist", None)
        raw = getlist("pick") if getlist else post.get("pick", [])
        for value in raw if isinstance(raw, list | tuple) else [raw]:
            try:
                index = int(value)
            except (TypeError, ValueError):
                raise AnnotateError("bad_pick", "Unknown candidate.") from None
            if not 0 <= index < len(choices):
                raise AnnotateError("bad_pick", "Unknown candidate.")
            picks.append(index)
        chosen = [choices[i] for i in sorted(set(picks))]
        gold = {c["text"] for c in item.data["candidates"] if c["is_answer"]}
        f1 = set_f1(set(chosen), gold)
        correct = set(chosen) == gold
        return Judged(json.dumps(chosen, ensure_ascii=False), correct, f1, "accept" if correct else "reject",
                      {"picked": sorted(set(picks))})

    raise AnnotateError("bad_task", f"task {task!r} has no items to answer")


def feedback_for(task: str, item: Item, judged: Judged) -> dict[str, Any]:
    """What a training item shows after it is answered (kept in the session until the feedback page).

    A multi-answer item's answer is a list, not text: `answers` (the correct candidates' texts) and `picked`
    (each ticked candidate's text and whether it is an answer) are what the page lists; `given` stays the
    stored JSON."""
    shown: dict[str, Any] = {"correct": judged.correct, "given": judged.given, "score": judged.score}
    if task == Task.ARCHAEOLOGY_CHOOSE or task == Task.ARCHAEOLOGY_WRITE:
        shown["answer"] = item.data["true_question"]
    elif task == Task.ROMQA_SELECT:
        answers = [c["text"] for c in item.data["candidates"] if c["is_answer"]]
        chosen = json.loads(judged.given or "[]")
        shown.update(
            multi=True,
            answer=", ".join(answers) or "(none)",
            answers=answers,
            picked=[{"text": text, "is_answer": text in answers} for text in chosen],
        )
    else:
        shown["answer"] = item.answer
    return shown
