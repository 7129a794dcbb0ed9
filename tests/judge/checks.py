"""Shared checks of the judge tests (imported by the test modules)."""

from __future__ import annotations

from quizsite.judge import RULES, judge


def assert_ruling(line: str, given: str, expected: str) -> None:
    """The verdict a moderator gives, decided by a rule the ruling report can name."""
    ruling = judge(line, given)
    assert ruling.verdict == expected, f"{given!r} on {line!r}: {ruling}"
    assert ruling.rule in RULES
