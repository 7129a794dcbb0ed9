"""The judge's public contract, as the play consumer, importers and agents use it."""

from __future__ import annotations

import dataclasses

import pytest

from quizsite.judge import JUDGE_VERSION, Ruling, judge
from quizsite.judge.answerline import parse_answerline

LINE = (
    "Claude <b><u>Monet</u></b> [or Oscar-Claude <b><u>Monet</u></b>; prompt on <u>Impressionist</u>s by "
    'asking "which painter?"; do not accept "Manet"]'
)


def test_ruling_fields_and_frozen() -> None:
    ruling = judge(LINE, "Claude Monet")
    assert (ruling.verdict, ruling.prompt, ruling.score, ruling.matched) == (
        "accept",
        "",
        1.0,
        "Claude Monet",
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        ruling.verdict = "reject"  # type: ignore[misc]
    assert isinstance(JUDGE_VERSION, str)


def test_directed_prompt_text_and_matched_entry() -> None:
    ruling = judge(LINE, "the Impressionists")
    assert ruling == Ruling("prompt", "which painter?", 1.0, "Impressionists", "exact_prompt")


def test_reject_names_the_rejected_entry() -> None:
    ruling = judge(LINE, "Manet")
    assert ruling.verdict == "reject" and ruling.matched == "Manet"
    assert judge(LINE, "Renoir").matched == ""


def test_score_reflects_similarity_behind_a_reject() -> None:
    assert 0.5 < judge("Monet", "Moxet").score < 1.0
    assert judge("Monet", "Moxet").verdict == "reject"


def test_parse_is_cached() -> None:
    parse_answerline.cache_clear()
    judge(LINE, "Monet")
    judge(LINE, "Manet")
    info = parse_answerline.cache_info()
    assert info.misses == 1 and info.hits >= 1


def test_bracketed_explanations_in_the_answer_are_set_aside() -> None:
    assert judge("<b>Sand Timer</b>", "A sand timer (hourglass/egg timer)").verdict == "accept"
    assert judge("<b><u>Monet</u></b>", "(Claude Monet)").verdict == "accept"  # nothing outside: keep it


def test_non_string_inputs() -> None:
    assert judge(None, None).verdict == "reject"  # type: ignore[arg-type]
    assert judge("1984", 1984).verdict == "accept"  # type: ignore[arg-type]
    assert judge(
        '<b><u>Mars</u></b> [accept red planet before "red" is read]', "red planet", "x", "7"
    ).verdict == (
        "accept"  # a word_index that is not an int is ignored, so the condition is not applied
    )
