"""Every labelled case in ``cases.jsonl`` is one test.

The labels come from quizbowl judging conventions (ACF/NAQT), not from the judge's output; a case
the judge gets wrong stays in the file, marked ``xfail`` with its reason, so the failure is counted.
Each line: ``form`` (html, protobowl, plain), ``answerline``, ``given``, ``expected`` (accept,
prompt, reject), ``reason``, optionally ``question_text`` + ``word_index``, ``prompt`` (the directed
prompt text expected) and ``xfail``.

The conventions the labels follow:

1. The required part (underlined, bold where nothing is underlined, braced) must be given; the rest
   of the line is optional; extra descriptive words are fine.
2. Marked line: an incomplete required part is rejected unless the line says to prompt.
3. Unmarked line: for people the surname suffices; a generic head may be left out ("Waterloo");
   other incomplete answers are prompted; a generic word alone ("Hill", "sea") is rejected.
4. Misspellings are accepted when unambiguous and not another real word; short words must be exact.
5. Hedges are rejected; a list is accepted only if every item is acceptable.
6. Directives are honoured (accept, prompt, directed prompt, do not accept, accept either, prompt on
   partial answer, before/after a clue); a rejected answer beats a fuzzy accept.
7. Equivalents: numbers, Roman numerals, ordinals, standard abbreviations, articles, accents, plurals.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quizsite.judge import judge

CASES_FILE = Path(__file__).with_name("cases.jsonl")


def load_cases() -> list[dict]:
    with CASES_FILE.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _params() -> list:
    out = []
    for case in load_cases():
        marks = [pytest.mark.xfail(reason=case["xfail"], strict=True)] if case.get("xfail") else []
        out.append(pytest.param(case, id=f"{case['id']}-{case['form']}-{case['expected']}", marks=marks))
    return out


@pytest.mark.parametrize("case", _params())
def test_case(case: dict) -> None:
    ruling = judge(case["answerline"], case["given"], case.get("question_text"), case.get("word_index"))
    assert ruling.verdict == case["expected"], (
        f"{case['given']!r} on {case['answerline']!r}: got {ruling}, expected {case['expected']} "
        f"({case['reason']})"
    )
    if "prompt" in case:
        assert ruling.prompt == case["prompt"]


def test_case_file_shape() -> None:
    cases = load_cases()
    assert len(cases) >= 400
    assert {c["form"] for c in cases} == {"html", "protobowl", "plain"}
    for c in cases:
        assert c["expected"] in ("accept", "prompt", "reject")
        assert c["reason"]
