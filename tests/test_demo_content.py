"""Checks on the hand-written demo content in quizsite/items/demo/.

Plain pytest: no Django, no database. It reads the JSON lines files and checks their shape against
the formats in DATA.md (quizbowl, archaeology, ghigliottina 4-choice form, romqa closed setting).
"""

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parent.parent / "quizsite" / "items" / "demo"

# How the app splits a tossup into clues (after the power mark is removed).
SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
POWER = "(*)"

TOSSUP_CATEGORIES = ["Literature", "History", "Science", "Fine Arts", "Geography", "Mythology/Religion"]
OPTIONAL_TOSSUP_CATEGORIES = ["Social Science"]
DIFFICULTIES = {"easy", "medium", "hard"}


def load(name):
    path = DEMO / name
    rows = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            assert line.strip(), f"{name}:{lineno} is blank"
            rows.append(json.loads(line))
    return rows


def answer_form(answer):
    if "<b>" in answer or "<u>" in answer:
        return "html"
    if "{" in answer:
        return "braces"
    return "plain"


def clues(question):
    return SENTENCE_SPLIT.split(question.replace(" " + POWER, ""))


@pytest.fixture(scope="module")
def tossups():
    return load("tossups.jsonl")


@pytest.fixture(scope="module")
def archaeology():
    return load("archaeology.jsonl")


@pytest.fixture(scope="module")
def ghigliottina():
    return load("ghigliottina.jsonl")


@pytest.fixture(scope="module")
def romqa():
    return load("romqa.jsonl")


def test_readme_exists():
    text = (DEMO / "README.md").read_text(encoding="utf-8")
    assert "DATA.md" in text


# --- quizbowl tossups -------------------------------------------------------------------------------


def test_tossup_count_and_fields(tossups):
    assert len(tossups) >= 60
    for t in tossups:
        for field in ("id", "question", "answer", "category", "difficulty", "source"):
            assert isinstance(t.get(field), str) and t[field].strip(), (t.get("id"), field)
        assert t["difficulty"] in DIFFICULTIES, t["id"]
        assert t["source"] == "Thinkalike demo", t["id"]
        assert t["category"] in TOSSUP_CATEGORIES + OPTIONAL_TOSSUP_CATEGORIES, t["id"]


def test_tossup_ids_and_answers_unique(tossups):
    ids = [t["id"] for t in tossups]
    assert len(set(ids)) == len(ids)
    answers = [t["answer"] for t in tossups]
    assert len(set(answers)) == len(answers)


def test_every_category_has_ten_tossups(tossups):
    counts = Counter(t["category"] for t in tossups)
    for category in TOSSUP_CATEGORIES:
        assert counts[category] >= 10, (category, counts[category])


def test_tossups_have_four_to_six_clues(tossups):
    for t in tossups:
        sentences = clues(t["question"])
        assert 4 <= len(sentences) <= 6, (t["id"], len(sentences))
        for s in sentences:
            assert s[-1] in ".!?", (t["id"], s)


def test_tossups_end_with_giveaway(tossups):
    for t in tossups:
        last = clues(t["question"])[-1]
        assert last.startswith(("For 10 points,", "For ten points,")), t["id"]


def test_tossups_have_one_power_mark_between_words(tossups):
    for t in tossups:
        q = t["question"]
        assert q.count(POWER) == 1, t["id"]
        assert f" {POWER} " in q, t["id"]
        # The power mark falls after the lead-in and before the giveaway.
        raw = SENTENCE_SPLIT.split(q)
        where = next(i for i, s in enumerate(raw) if POWER in s)
        assert 0 < where < len(raw) - 1, t["id"]


def test_tossups_avoid_abbreviations_that_break_clue_splitting(tossups):
    bad = re.compile(r"\b(?:Dr|St|Mt|Mr|Mrs|Ms|Jr|Sr|vs|etc)\.|\b[A-Z]\.\s|\d\.\d|e\.g\.|i\.e\.")
    for t in tossups:
        assert not bad.search(t["question"]), (t["id"], bad.search(t["question"]).group())


def test_all_three_answer_line_forms(tossups):
    forms = Counter(answer_form(t["answer"]) for t in tossups)
    for form in ("html", "braces", "plain"):
        assert forms[form] >= 15, forms
    for t in tossups:
        a = t["answer"]
        if answer_form(a) == "html":
            assert re.search(r"<b><u>[^<]+</u></b>", a), t["id"]
        if answer_form(a) == "braces":
            assert re.search(r"\{[^{}]+\}", a), t["id"]
            assert a.count("{") == a.count("}"), t["id"]


# --- question archaeology ---------------------------------------------------------------------------


def test_archaeology_count_and_fields(archaeology):
    assert len(archaeology) >= 30
    ids = [a["id"] for a in archaeology]
    assert len(set(ids)) == len(ids)
    for a in archaeology:
        for field in ("id", "text", "true_question", "other_question_1", "other_question_2", "author"):
            assert isinstance(a.get(field), str) and a[field].strip(), (a.get("id"), field)
        questions = [a["true_question"], a["other_question_1"], a["other_question_2"]]
        assert len(set(questions)) == 3, a["id"]
        assert all(q.endswith("?") for q in questions), a["id"]
        assert 60 <= len(a["text"].split()) <= 120, (a["id"], len(a["text"].split()))


# --- La Ghigliottina --------------------------------------------------------------------------------


def test_ghigliottina_count_and_fields(ghigliottina):
    assert len(ghigliottina) >= 40
    ids = [g["id"] for g in ghigliottina]
    assert len(set(ids)) == len(ids)
    for g in ghigliottina:
        words = [g[f"w{i}"] for i in range(1, 6)]
        assert all(isinstance(w, str) and w and w == w.lower() for w in words), g["id"]
        assert len(set(words)) == 5, g["id"]
        assert isinstance(g["solution"], str) and g["solution"], g["id"]
        assert len(g["links"]) == 5 and all(isinstance(s, str) and s for s in g["links"]), g["id"]


def test_ghigliottina_label_points_at_solution(ghigliottina):
    for g in ghigliottina:
        assert len(g["choices"]) == 4 and len(set(g["choices"])) == 4, g["id"]
        assert isinstance(g["label"], int) and 0 <= g["label"] < 4, g["id"]
        assert g["choices"][g["label"]] == g["solution"], g["id"]
    # The solution is not always in the same place.
    assert len({g["label"] for g in ghigliottina}) == 4


def test_ghigliottina_solution_and_distractors_are_not_clues(ghigliottina):
    for g in ghigliottina:
        words = {g[f"w{i}"] for i in range(1, 6)}
        assert g["solution"] not in words, g["id"]
        for d in g["choices"]:
            assert d not in words, (g["id"], d)
            if d != g["solution"]:
                assert len(d) <= len(g["solution"]) + 1, (g["id"], d)


# --- RoMQA ------------------------------------------------------------------------------------------


def test_romqa_clusters(romqa):
    ids = [r["id"] for r in romqa]
    assert len(set(ids)) == len(ids)
    clusters = defaultdict(list)
    for r in romqa:
        clusters[r["cluster_id"]].append(r)
    assert len(clusters) >= 4
    for cid, rows in clusters.items():
        assert 3 <= len(rows) <= 4, cid
        # Questions in a cluster share candidates and differ by constraints.
        candidate_sets = {frozenset(c["text"] for c in r["candidates"]) for r in rows}
        assert len(candidate_sets) == 1, cid
        assert len({tuple(r["constraints"]) for r in rows}) == len(rows), cid
        assert len({r["question"] for r in rows}) == len(rows), cid


def test_romqa_answers(romqa):
    for r in romqa:
        assert isinstance(r["question"], str) and r["question"].endswith("?"), r["id"]
        assert r["constraints"] and all(isinstance(c, str) and c for c in r["constraints"]), r["id"]
        cands = r["candidates"]
        assert 6 <= len(cands) <= 10, r["id"]
        texts = [c["text"] for c in cands]
        assert len(set(texts)) == len(texts), r["id"]
        assert all(isinstance(c["is_answer"], bool) for c in cands), r["id"]
        answers = [c["text"] for c in cands if c["is_answer"]]
        assert len(answers) >= 1, r["id"]
        assert len(cands) - len(answers) >= 2, r["id"]
        assert sorted(r["complete_answer"]) == sorted(answers), r["id"]


def test_ghigliottina_distractors_are_not_on_the_default_blocklist(ghigliottina):
    # The import warns of such a choice on every load (quizsite/items/blocklist.py); the demo's own
    # choices should not make the quickstart's first screen a warning. "pesce" was one (LDNOOBW lists it).
    from quizsite.items.blocklist import blocklist_open

    blocked = blocklist_open(spec="glin-profanity")
    hits = [(g["id"], c) for g in ghigliottina for c in g["choices"] if c != g["solution"] and c in blocked]
    assert not hits, hits
