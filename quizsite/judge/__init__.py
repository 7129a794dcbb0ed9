"""Placeholder judge (replaced by the full answer-line judge): exact/fuzzy match on the whole line."""

from dataclasses import dataclass

from rapidfuzz import fuzz

JUDGE_VERSION = "0.1"


@dataclass(frozen=True)
class Ruling:
    verdict: str
    prompt: str = ""
    score: float = 0.0
    matched: str = ""


def judge(answerline: str, given: str, question_text: str | None = None, word_index: int | None = None) -> Ruling:
    import re

    line = re.sub(r"<[^>]+>|[{}]", "", answerline or "").split("[")[0].split("(")[0].strip().lower()
    given = (given or "").strip().lower()
    if not given:
        return Ruling("reject")
    score = fuzz.ratio(line, given) / 100
    return Ruling("accept" if score >= 0.8 else "reject", score=score, matched=line if score >= 0.8 else "")
