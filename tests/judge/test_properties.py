"""Properties the judge must keep on any input, checked with hypothesis.

They call ``judge_strict`` (the judge without its safety net) so that an exception cannot hide
behind the fallback ruling that ``judge`` returns in production.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizsite.judge import JUDGE_VERSION, Ruling, judge, judge_strict
from quizsite.judge.answerline import parse_answerline
from quizsite.judge.normalize import normalize

# In CI (.ci/run sets CI) the examples are derandomized: a run that lands work must not hang on which
# examples a random draw found that day; a developer's run still draws new ones every time.
SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=bool(os.environ.get("CI")),
)

# Words that are grammar in an answer line (directive keywords, separators) are left out of the
# generated answers: a line whose answer is literally "prompt on" is ambiguous by construction.
RESERVED = frozenset(
    "or and nor o oppure accept prompt on reject do not dont never allow also but either before after "
    "until once following alone only by asking ask with say saying equivalents equivalent partial "
    "antiprompt anti is are read mentioned for of the".split()
)

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzàèéìòù", min_size=2, max_size=9).filter(
    lambda w: w not in RESERVED
)
phrase = st.lists(words, min_size=1, max_size=3).map(" ".join)
optional = st.lists(words, min_size=0, max_size=2).map(" ".join)


@dataclass
class Generated:
    line: str
    required: list[str]  # the exact required text of every acceptable alternative


@st.composite
def answer_lines(draw: st.DrawFn) -> Generated:
    """Lines in one of the three forms, with the required text of each acceptable alternative."""
    form = draw(st.sampled_from(["html", "protobowl", "plain"]))
    n_alts = draw(st.integers(1, 3))
    required: list[str] = []
    if form == "plain":
        alts = [draw(phrase) for _ in range(n_alts)]
        sep = draw(st.sampled_from([" / ", " or ", "/"]))
        line = sep.join(alts)
        required.extend(alts)
    else:
        # one marking style per line: bold alone is "required" only where nothing is underlined
        style = (
            draw(
                st.sampled_from(
                    [
                        "<b><u>{}</u></b>",
                        "<u><b>{}</b></u>",
                        "<b>{}</b>",
                        "<strong>{}</strong>",
                        "__**{}**__",
                        "_{}_",
                    ]
                )
            )
            if form == "html"
            else "{{{}}}"
        )

        def marked(text: str) -> str:
            return style.format(text)

        parts = []
        for _ in range(n_alts):
            req = draw(phrase)
            pre, post = draw(optional), draw(optional)
            parts.append(" ".join(x for x in (pre, marked(req), post) if x))
            required.append(req)
        line = parts[0]
        directives = [f"or {p}" for p in parts[1:]]
        for _ in range(draw(st.integers(0, 2))):
            extra = draw(phrase)
            directives.append(f"accept {extra}")
            required.append(extra)
        # compared as the judge compares words (accents folded, plurals stemmed): "do not accept aà"
        # beside a required "aa" names the required answer itself, which the reject rightly wins
        taken = {t for r in required for t in normalize(r)}
        for kind in ("prompt on", "do not accept"):
            if draw(st.booleans()):
                other = draw(phrase.filter(lambda p: not set(normalize(p)) & taken))
                directives.append(f"{kind} {other}")
        if directives:
            line += " [" + "; ".join(directives) + "]"
    return Generated(line, required)


any_text = st.one_of(
    st.text(max_size=300), st.none(), st.just(""), st.text(alphabet=" \t\n.,;!?'\"[](){}<>/", max_size=40)
)


@SETTINGS
@given(line=any_text, answer=any_text, question=any_text, index=st.one_of(st.none(), st.integers(-5, 10**9)))
def test_never_raises(line: str | None, answer: str | None, question: str | None, index: int | None) -> None:
    ruling = judge_strict(line, answer, question, index)  # type: ignore[arg-type]
    assert isinstance(ruling, Ruling)
    assert ruling.verdict in ("accept", "prompt", "reject")
    assert 0.0 <= ruling.score <= 1.0
    assert isinstance(ruling.prompt, str) and isinstance(ruling.matched, str)


@SETTINGS
@given(line=st.text(max_size=200), answer=st.text(max_size=100))
def test_deterministic(line: str, answer: str) -> None:
    first = judge_strict(line, answer)
    parse_answerline.cache_clear()  # the second ruling re-parses the line from scratch
    assert judge_strict(line, answer) == first == judge(line, answer)


@SETTINGS
@given(generated=answer_lines())
def test_accepts_exact_required_text(generated: Generated) -> None:
    for text in generated.required:
        ruling = judge_strict(generated.line, text)
        assert ruling.verdict == "accept", (generated.line, text, ruling)


@SETTINGS
@given(
    line=st.one_of(st.text(max_size=200), answer_lines().map(lambda g: g.line)),
    blank=st.text(alphabet=" \t\n.,;:!?-'\"()[]", max_size=10),
)
def test_rejects_empty_answer(line: str, blank: str) -> None:
    assert judge_strict(line, "").verdict == "reject"
    assert judge_strict(line, blank).verdict == "reject"


def test_huge_inputs_are_cut_not_choked() -> None:
    start = time.perf_counter()
    assert (
        judge("<b><u>Monet</u></b> [" + "accept x; " * 2000 + "]", "monet " + "z" * 100_000).verdict
        == "accept"
    )
    judge("Monet " * 10_000, "Monet " * 10_000)
    judge("[(" * 5000, ")]" * 5000)
    judge("<b>" * 3000 + "x", "_" * 3000)
    assert time.perf_counter() - start < 5.0


def test_version_is_a_short_string() -> None:
    assert isinstance(JUDGE_VERSION, str) and 0 < len(JUDGE_VERSION) <= 16
