"""La Ghigliottina raw games: a real Italian vocabulary, open games instead of refusals, the short-solution
rule, the card's split sizes, distractors that are other games' solutions no more often than chance, and
never a vulgar or offensive word."""

from __future__ import annotations

import hashlib
import json
import re
import runpy
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from quizsite.agents.kinds import REGISTRY, question_for
from quizsite.agents.scoring import agent_answer_score
from quizsite.items.blocklist import blocklist_open, participles, plurals
from quizsite.items.ghigliottina import (
    SHORT_MAX_LEN,
    DistractorPicker,
    card_split,
    italian_vocabulary,
    length_rule,
)
from quizsite.items.importers import ImportError_, items_import
from quizsite.items.models import Item
from tests.annotate.fakes import FakeVectors
from tests.conftest import REPO, SHARED_DATA

GAMES_615 = SHARED_DATA / "ghigliottina" / "games_615.jsonl"
GAME = {"w1": "pane", "w2": "gioco", "w3": "testa", "w4": "osso", "w5": "zoccolo", "solution": "duro"}


# "duro" takes words of up to 5 letters (all four); "du" up to SHORT_MAX_LEN = 4 (just "pila")
VOCAB = ["pila", "monte", "ruota", "fiume"]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


class HashVectors:
    """Any word gets a fixed pseudo-random unit vector (no meaning at all), and no vocabulary of its own."""

    name = "hash:test"

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        raw = b"".join(hashlib.sha256(w.lower().encode()).digest()[:16] for w in words)
        m = (np.frombuffer(raw, np.uint8).astype(np.float32).reshape(len(words), 16) - 127.5) / 127.5
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def vocabulary(self) -> list[str] | None:
        return None


def test_default_vocabulary_is_wordfreq_italian_not_a_hand_list():
    vocab = italian_vocabulary()
    assert len(vocab) >= 15_000 and len(set(vocab)) == len(vocab)
    assert {"casa", "chitarra", "bottiglia", "città"} <= set(vocab)
    assert not {"della", "che", "sono", "di"} & set(vocab)  # function words and 2-letter words are no choice
    picker = DistractorPicker(HashVectors())  # a source without words of its own uses it, less blocked words
    blocked = blocklist_open()
    assert picker.words == [w for w in vocab if w not in blocked]
    assert 50 < picker.blocked < 300 and picker.blocked + len(picker.words) == len(vocab)


def test_short_solution_rule():
    assert length_rule("duro") == (5, False)
    assert length_rule("uso") == (4, False)
    assert length_rule("po") == (SHORT_MAX_LEN, True) and length_rule("a") == (SHORT_MAX_LEN, True)


@pytest.mark.django_db
def test_one_letter_solution_gets_distractors_under_the_stated_minimum_and_records_it(tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", [{**GAME, "id": "s", "solution": "s"}])
    report = items_import(fmt="ghigliottina", path=path, set_slug="g", vectors=FakeVectors())
    assert report.created == 1 and report.extra["with generated distractors"] == 1
    data = Item.objects.get().data
    distractors = [c for c in data["choices"] if c != "s"]
    assert len(distractors) == 3 and all(len(w) <= SHORT_MAX_LEN for w in distractors)
    assert data["max_distractor_len"] == SHORT_MAX_LEN and "relaxed" in data["length_rule"]


@pytest.mark.django_db
def test_numeric_solution_gets_numeric_distractors(tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", [{**GAME, "id": "n", "solution": "18"}])
    items_import(fmt="ghigliottina", path=path, set_slug="g", vectors=HashVectors())
    choices = Item.objects.get().data["choices"]
    assert len(choices) == 4 and all(c.isdigit() for c in choices)


@pytest.mark.django_db
def test_a_game_without_three_distractors_is_an_open_game_named_in_the_report(tmp_path):
    path = write_jsonl(tmp_path / "raw.jsonl", [{**GAME, "id": "ok"}, {**GAME, "id": "long", "solution": "du"}])
    report = items_import(fmt="ghigliottina", path=path, set_slug="g", vectors=FakeVectors(),
                          vocabulary=VOCAB)
    assert report.created == 2
    assert report.extra == {"with generated distractors": 1, "open games (too few distractors)": 1}
    open_game = Item.objects.get(external_id="long")
    assert open_game.data["choices"] is None and open_game.data["label"] is None
    assert "only 1 of 3" in open_game.data["open_reason"]
    assert "line 2 (long)" in report.summary()


@pytest.mark.django_db
def test_a_choose_campaign_leaves_open_games_out(tmp_path):
    from quizsite.annotate.models import Campaign
    from quizsite.annotate.services import _pool, campaign_create
    from quizsite.items.models import ItemSet

    path = write_jsonl(tmp_path / "raw.jsonl", [{**GAME, "id": "ok"}, {**GAME, "id": "long", "solution": "du"}])
    items_import(fmt="ghigliottina", path=path, set_slug="g", vectors=FakeVectors(), vocabulary=VOCAB)
    assert Item.objects.get(external_id="long").data["choices"] is None
    campaign = campaign_create(slug="c", item_set=ItemSet.objects.get(slug="g"), task=Campaign.Task.GHIGLIOTTINA_CHOOSE)
    pooled = {i for ids in _pool(campaign).values() for i in ids}
    assert pooled == {Item.objects.get(external_id="ok").id}


def test_card_split_has_the_card_sizes_and_is_reproducible():
    ids = [f"g{i}" for i in range(615)]
    split = card_split(ids)
    assert sum(v == "train" for v in split.values()) == 62 and sum(v == "test" for v in split.values()) == 553
    assert card_split(list(reversed(ids))) == split


@pytest.mark.django_db
def test_split_option_is_recorded_on_the_items(tmp_path):
    rows = [{**GAME, "id": f"g{i}"} for i in range(20)] + [{**GAME, "id": "own", "split": "dev"}]
    path = write_jsonl(tmp_path / "g.jsonl", rows)
    report = items_import(fmt="ghigliottina", path=path, set_slug="g", vectors=FakeVectors(), split="card")
    splits = {i.external_id: i.data.get("split") for i in Item.objects.all()}
    assert splits["own"] == "dev"  # a game's own split wins
    assert sorted(v for k, v in splits.items() if k != "own").count("train") == 2  # 20 - floor(0.9 * 20)
    assert "split card: 2 train / 18 test" in report.summary()


class TopicVectors:
    """Clue k on axis k; `table` puts a word on some axes. Words on three axes are the best distractors
    (close to three clues, far from two); words on four axes are worse."""

    name = "topic:test"

    def __init__(self, table: dict[str, list[int]]):
        self.table = {"pane": [0], "gioco": [1], "testa": [2], "osso": [3], "zoccolo": [4], **table}

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(words), 6), np.float32)
        for i, w in enumerate(words):
            out[i, self.table.get(w.lower(), [5])] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def vocabulary(self) -> list[str] | None:
        return None


# The nearest words to the clues are vulgar: a listed word, a plural and a past participle of listed
# words, and an English entry; the innocent words are further away. "qzzzzzzz" has no Zipf frequency, so
# the frequency band favours no word and closeness alone ranks them.
VULGAR = {"cazzo": [0, 1, 2], "stronzi": [1, 2, 3], "fottuto": [2, 3, 4], "porno": [0, 3, 4]}
INNOCENT = {"pila": [0, 1, 2, 3], "mano": [1, 2, 3, 4], "rete": [0, 2, 3, 4]}
CLUES = ["pane", "gioco", "testa", "osso", "zoccolo"]


def test_blocklist_matches_listed_words_and_their_plurals_and_participles_not_prefixes_or_genders():
    blocked = blocklist_open()
    assert {"cazzo", "cazzi", "stronzi", "puttane", "troie", "coglioni", "fottuto", "incazzato", "porno"} <= blocked.blocked
    assert "Cazzo" in blocked and "MERDE" in blocked
    # no prefix, substring or gender match; a far more frequent plural is another word (monta -> monte)
    for word in ("montagna", "monte", "segale", "ballerina", "classe", "fico", "topo", "tetto", "cappello", "scopa"):
        assert word not in blocked, word
    assert plurals("cazzo") == {"cazzi"} and plurals("finocchio") == {"finocchi"} and plurals("fica") == {"fiche"}
    assert plurals("battere") == set() and participles("fottere") == {"fottuto", "fottuta", "fottuti", "fottute"}


def test_a_minus_word_takes_back_a_form_alone_or_a_word_with_all_its_forms(tmp_path):
    """`-word` subtracts after the forms are expanded: `-cazzi` takes back that plural only, `-cazzo` the
    word and its forms (it once took back only the listed word, and `-cazzi` nothing). Words are read in
    order, so a word listed after a `-word` (here, or in a later source) is blocked again."""
    form, word, again = tmp_path / "form.txt", tmp_path / "word.txt", tmp_path / "again.txt"
    form.write_text("-cazzi\n", encoding="utf-8")
    # scopare (to sweep) back; scopata, listed on its own and one of scopare's forms, blocked again
    word.write_text("-cazzo -scopare scopata\n", encoding="utf-8")
    again.write_text("cazzo\n", encoding="utf-8")
    default = blocklist_open("glin-profanity")
    assert {"cazzo", "cazzi", "scopare", "scopato", "scopata", "scopate"} <= default.blocked

    only_form = blocklist_open(f"glin-profanity,{form}")
    assert only_form.blocked == default.blocked - {"cazzi"} and only_form.listed == default.listed

    whole = blocklist_open(f"glin-profanity,{word}")
    assert not {"cazzo", "cazzi", "scopare", "scopato", "scopati"} & whole.blocked
    assert {"scopata", "scopate"} <= whole.blocked and whole.listed == default.listed - 2

    relisted = blocklist_open(f"glin-profanity,{word},{again}")
    assert {"cazzo", "cazzi"} <= relisted.blocked


def test_a_blocked_word_nearest_to_the_clues_is_never_a_distractor():
    """The three nearest words are vulgar ones (a listed word, a plural, a participle) and an English
    entry; the picker must pass over all of them to the innocent words further away."""
    source = TopicVectors({**VULGAR, **INNOCENT})
    picker = DistractorPicker(source, vocabulary=[*VULGAR, *INNOCENT])
    assert sorted(picker.pick(CLUES, "qzzzzzzz")) == sorted(INNOCENT)
    assert picker.words == list(INNOCENT) and picker.blocked == len(VULGAR)
    # with the filter off, the vulgar words win on closeness: the test's vectors do what it says
    unfiltered = DistractorPicker(source, vocabulary=[*VULGAR, *INNOCENT], blocklist=blocklist_open("none"))
    assert set(unfiltered.pick(CLUES, "qzzzzzzz")) <= set(VULGAR)


GAME_FAR = {"w1": "pane", "w2": "gioco", "w3": "testa", "w4": "osso", "w5": "zoccolo", "solution": "qzzzzzzz"}


def _import_one(tmp_path: Path, set_slug: str, vocab: list[str], source: TopicVectors, **options):
    """(the distractors, the item's data, the report) of GAME_FAR imported alone with `options`."""
    path = write_jsonl(tmp_path / f"{set_slug}.jsonl", [{**GAME_FAR, "id": set_slug}])
    report = items_import(fmt="ghigliottina", path=path, set_slug=set_slug, vectors=source, vocabulary=vocab,
                          **options)
    data = Item.objects.get(item_set__slug=set_slug).data
    return set(data["choices"]) - {GAME_FAR["solution"]}, data, report


@pytest.mark.django_db
def test_blocklist_import_option_none_a_file_or_the_default(tmp_path):
    """The default is glin-profanity; `blocklist` can turn it off, or name files that add words or take
    listed ones back (-word); each item records the blocklist, and the report says how many words it left out."""
    vocab = [*VULGAR, *INNOCENT, "sole"]
    source = TopicVectors({**VULGAR, **INNOCENT, "sole": [0, 1, 2, 3, 4]})

    distractors, data, report = _import_one(tmp_path, "default", vocab, source)
    assert distractors == set(INNOCENT) and data["distractor_blocklist"].startswith("glin-profanity ")
    assert "4 of 8 candidate words left out as vulgar or offensive" in report.summary()

    distractors, data, _ = _import_one(tmp_path, "off", vocab, source, blocklist="none")
    assert distractors <= set(VULGAR) and data["distractor_blocklist"] == "none"

    extra = tmp_path / "extra.txt"
    extra.write_text("# ours\npila mano\n-cazzo  # not here\n", encoding="utf-8")
    distractors, data, _ = _import_one(tmp_path, "file", vocab, source, blocklist=f"glin-profanity,{extra}")
    assert distractors == {"cazzo", "rete", "sole"} and data["distractor_blocklist"].endswith(" + extra.txt")

    with pytest.raises(ImportError_, match="not 'glin-profanity', 'none' or a file of words"):
        _import_one(tmp_path, "missing", vocab, source, blocklist=str(tmp_path / "nope.txt"))


@pytest.mark.django_db
def test_a_wrong_blocklist_is_an_error_on_every_import_not_only_when_distractors_are_picked(tmp_path):
    """It was read only for raw games new in the set, so a re-import (or a 4-choice file) ignored a
    mistyped path in silence."""
    source = TopicVectors({**VULGAR, **INNOCENT})
    _import_one(tmp_path, "again", [*VULGAR, *INNOCENT], source)
    missing = str(tmp_path / "nope.txt")
    with pytest.raises(ImportError_, match="nope.txt'?: not 'glin-profanity'"):
        _import_one(tmp_path, "again", [*VULGAR, *INNOCENT], source, blocklist=missing)
    given = write_jsonl(tmp_path / "given.jsonl", [{**GAME, "id": "g", "choices": ["pila", "duro", "mano", "rete"], "label": 1}])
    with pytest.raises(ImportError_, match="not 'glin-profanity'"):
        items_import(fmt="ghigliottina", path=given, set_slug="given", blocklist=missing)
    assert not Item.objects.filter(item_set__slug="given").exists()


def _import_command(tmp_path: Path, *options: str) -> Path:
    """`import_items --format ghigliottina` on one raw game with these options; returns the games file."""
    games = write_jsonl(tmp_path / "g.jsonl", [{**GAME, "id": "g1"}])
    call_command("import_items", str(games), "--format", "ghigliottina", "--set", "gg", *options)
    return games


GOOD_VEC = b"6 3\npane 1 0 0\nduro 0 1 0\npila 0 0 1\nmano 1 1 0\nrete 0 1 1\nsole 1 0 1\n"


@pytest.mark.django_db
def test_a_vector_file_imports(tmp_path):
    """The base of the refusals below: this file, changed on one line, is what they refuse."""
    vectors = tmp_path / "v.vec"
    vectors.write_bytes(GOOD_VEC)
    _import_command(tmp_path, "--vectors", str(vectors), "--blocklist", "none")
    assert Item.objects.get(item_set__slug="gg").data["distractor_source"] == "fasttext:v.vec"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("line", "bad", "words"),
    [
        (3, b"duro 0 1 x", "the vector of 'duro' holds 'x', not a number"),
        (2, b"pane nan nan nan", "the vector of 'pane' is not finite"),
        (4, b"pila 0 inf 1", "the vector of 'pila' is not finite"),
        (4, b"pila 0 -Infinity 1", "the vector of 'pila' is not finite"),
        (7, b"sole 1e39 0 1", "the vector of 'sole' is not finite"),  # beyond float32: Infinity once read
        (1, b"\xff\xfe 3", "not a fastText .vec file"),
    ],
    ids=["text", "nan", "inf", "minus-infinity", "overflow", "bad-header"],
)
def test_a_bad_vector_file_is_refused_with_its_own_name_and_line(tmp_path, line, bad, words):
    """The error once named the games file with no line ("g.jsonl: could not convert string to float: 'x'"),
    and NaN or Infinity vectors imported in silence, to make every similarity NaN."""
    lines = GOOD_VEC.split(b"\n")
    lines[line - 1] = bad
    vectors = tmp_path / "v.vec"
    vectors.write_bytes(b"\n".join(lines))
    with pytest.raises(CommandError) as exc:
        _import_command(tmp_path, "--vectors", str(vectors), "--blocklist", "none")
    assert str(exc.value).startswith(f"nothing imported: {vectors}:{line}: {words}"), str(exc.value)
    assert "g.jsonl" not in str(exc.value) and "\n" not in str(exc.value)
    assert not Item.objects.exists()


@pytest.mark.django_db
def test_a_blocklist_file_with_bad_bytes_is_refused_with_its_own_name_and_line(tmp_path):
    """The raw codec error was blamed on the games file: "g.jsonl: 'utf-8' codec can't decode byte 0xe9 ..."."""
    blocklist = tmp_path / "b.txt"
    blocklist.write_bytes(b"# ours\npila mano\ncaf\xe9\n")
    with pytest.raises(CommandError) as exc:
        _import_command(tmp_path, "--blocklist", str(blocklist))
    assert str(exc.value) == f"nothing imported: {blocklist}:3: not valid UTF-8 (byte 0xe9)"
    assert not Item.objects.exists()


@pytest.mark.django_db
def test_a_re_import_names_existing_items_with_a_blocked_distractor_and_leaves_them_unchanged(tmp_path):
    """Items imported before the blocklist (here: with it off) keep their choices, which responses may
    already refer to; the report counts and names them instead."""
    source = TopicVectors({**VULGAR, **INNOCENT})
    vocab = [*VULGAR, *INNOCENT]
    _, before, _ = _import_one(tmp_path, "old", vocab, source, blocklist="none")
    vulgar = sorted(set(before["choices"]) & set(VULGAR))
    assert vulgar
    _, after, report = _import_one(tmp_path, "old", vocab, source)
    assert after == before and report.existing == 1 and report.created == 0
    assert report.metrics["items_with_blocked_distractor"] == 1
    assert f"line 1 (old): {', '.join(w for w in before['choices'] if w in vulgar)}" in report.summary()
    assert "warning: 1 item keeps a distractor on the blocklist" in report.summary()


@pytest.mark.django_db
def test_the_readme_way_to_new_distractors_deletes_unanswered_items_only_and_re_imports(tmp_path):
    """README: an item no one has answered can be deleted and the file imported again, which picks its
    distractors afresh under the blocklist; an answered item cannot be deleted, so it keeps its choices."""
    from django.db.models import ProtectedError

    from quizsite.agents.models import Agent
    from quizsite.items.models import Response

    source = TopicVectors({**VULGAR, **INNOCENT})
    vocab = [*VULGAR, *INNOCENT]
    rows = [{**GAME_FAR, "id": "answered"}, {**GAME_FAR, "id": "fresh"}]
    path = write_jsonl(tmp_path / "two.jsonl", rows)
    items_import(fmt="ghigliottina", path=path, set_slug="two", vectors=source, vocabulary=vocab, blocklist="none")
    answered = Item.objects.get(external_id="answered")
    before = answered.data["choices"]
    Response.objects.create(agent=Agent.objects.create(kind="human", name="p"), item=answered, source="annotation")
    with pytest.raises(ProtectedError):
        Item.objects.filter(item_set__slug="two").delete()
    assert Item.objects.filter(item_set__slug="two").count() == 2  # nothing deleted
    Item.objects.filter(item_set__slug="two", responses__isnull=True).delete()
    report = items_import(fmt="ghigliottina", path=path, set_slug="two", vectors=source, vocabulary=vocab)
    assert report.created == 1 and report.metrics["items_with_blocked_distractor"] == 1
    assert set(Item.objects.get(external_id="fresh").data["choices"]) - {GAME_FAR["solution"]} == set(INNOCENT)
    assert Item.objects.get(external_id="answered").data["choices"] == before


@pytest.mark.django_db
def test_given_choices_with_a_blocked_word_are_imported_as_given_and_named_as_a_warning(tmp_path):
    """A file's own choices are never changed; the command says which hold a blocked word (the
    solution itself is no distractor and is not counted)."""
    rows = [
        {**GAME, "id": "bad", "choices": ["pila", "duro", "cazzo", "rete"], "label": 1},
        {**GAME, "id": "ok", "choices": ["pila", "duro", "mano", "rete"], "label": 1},
        {**GAME, "id": "sol", "solution": "stronzo", "choices": ["pila", "stronzo", "mano", "rete"], "label": 1},
    ]
    path = write_jsonl(tmp_path / "given.jsonl", rows)
    out = StringIO()
    call_command("import_items", str(path), "--format", "ghigliottina", "--set", "given", stdout=out)
    assert Item.objects.get(external_id="bad").data["choices"] == ["pila", "duro", "cazzo", "rete"]
    text = out.getvalue()
    assert "3 new items" in text
    assert "warning: 1 item keeps a distractor on the blocklist" in text and "line 1 (bad): cazzo" in text
    assert "(ok)" not in text and "(sol)" not in text


@pytest.mark.django_db
def test_blocklist_setting_is_the_default(tmp_path, settings):
    extra = tmp_path / "words.txt"
    extra.write_text("pila mano rete\n", encoding="utf-8")
    settings.GHIGLIOTTINA_BLOCKLIST = str(extra)  # replaces glin-profanity: the vulgar words come back
    source = TopicVectors({**VULGAR, **INNOCENT})
    distractors, data, _ = _import_one(tmp_path, "setting", [*VULGAR, *INNOCENT], source)
    assert distractors <= set(VULGAR) and data["distractor_blocklist"] == "words.txt"


def test_blocklist_setting_is_declared_in_base_settings_from_the_environment(monkeypatch):
    """GHIGLIOTTINA_BLOCKLIST is a declared setting like the others, so `diffsettings` shows it and a
    deployment sets it in the environment."""
    monkeypatch.setenv("GHIGLIOTTINA_BLOCKLIST", "none")
    assert runpy.run_path(str(REPO / "quizsite" / "settings" / "base.py"))["GHIGLIOTTINA_BLOCKLIST"] == "none"
    monkeypatch.delenv("GHIGLIOTTINA_BLOCKLIST")
    assert runpy.run_path(str(REPO / "quizsite" / "settings" / "base.py"))["GHIGLIOTTINA_BLOCKLIST"] == ""


def _games() -> list[dict]:
    if not GAMES_615.exists():
        pytest.skip("../shared/data/ghigliottina is not present")
    return [json.loads(line) for line in GAMES_615.read_text(encoding="utf-8").splitlines() if line.strip()]


def _vocabulary_chance(items: list[Item]) -> float:
    """The share of other games' solutions among random draws from the Italian vocabulary under each game's
    length rule: what distractors with no pull towards solutions would show (computed here, not by the
    importer)."""
    vocab = set(italian_vocabulary())
    solutions = {i.answer.lower() for i in items}
    by_len = np.bincount([len(w) for w in vocab], minlength=100)[:100].cumsum()  # words of <= n letters
    sol_by_len = np.bincount([len(w) for w in vocab & solutions], minlength=100)[:100].cumsum()
    shares = []
    for item in items:
        if not item.data["choices"] or item.answer.isdigit():
            continue
        n, own = length_rule(item.answer)[0], int(item.answer.lower() in vocab)
        shares.append((sol_by_len[n] - own) / (by_len[n] - own))
    return float(np.mean(shares))


def _other_solution_share(items: list[Item]) -> tuple[float, int]:
    solutions = [i.answer.lower() for i in items]
    hits = total = 0
    for item in items:
        others = set(solutions) - {item.answer.lower()}
        for choice in item.data["choices"] or []:
            if choice != item.answer:
                total += 1
                hits += choice.lower() in others
    return hits / total, total


@pytest.mark.slow
@pytest.mark.django_db
def test_all_615_games_import_and_other_solutions_come_no_more_often_than_chance_meaningless_vectors(tmp_path):
    """With vectors that carry no meaning, nothing should favour other games' solutions: the picker must not
    slip the games' own words into the candidates (it once did: 30% of the distractors were other games'
    solutions, against about 6% for draws from a real Italian vocabulary)."""
    _games()
    report = items_import(fmt="ghigliottina", path=GAMES_615, set_slug="gh", vectors=HashVectors())
    assert report.created == 615
    items = list(Item.objects.filter(item_set__slug="gh"))
    share, total = _other_solution_share(items)
    chance = _vocabulary_chance(items)
    assert 0.02 < chance < 0.15 and report.metrics["other_solution_chance"] == pytest.approx(chance, abs=0.01)
    sigma = (chance * (1 - chance) / total) ** 0.5
    assert share <= chance + 3 * sigma, (share, chance)


@pytest.mark.slow
@pytest.mark.django_db
def test_import_items_command_imports_all_615_games_with_the_default_configuration():
    """The issue's command on a fresh install: all 615 in, the card's split, quality figures in the report,
    and distractors hard enough: the embedding agent well below chance, the most frequent word and other
    games' solutions no more often than chance allows."""
    _games()
    out = StringIO()
    call_command("import_items", str(GAMES_615), "--format", "ghigliottina", "--set", "gh615", "--split", "card",
                 stdout=out)
    text = out.getvalue()
    items = list(Item.objects.filter(item_set__slug="gh615"))
    assert len(items) == 615 and "615 new items" in text
    assert "split card: 62 train / 553 test" in text
    assert "embedding nearest-choice" in text and "other games' solutions" in text
    four = [i for i in items if i.data["choices"]]
    # no distractor is a vulgar or offensive word (before the blocklist: 15 of the 1,845 were, in 15 games:
    # cazzo twice, culo, merda, troia, stronzi, coglione, coglioni, tette, fica, cagata, porno; venire,
    # venite and carità, listed by LDNOOBW)
    blocked = blocklist_open()
    assert not [(i.external_id, c) for i in four for c in i.data["choices"] if c != i.answer and c in blocked]
    assert "candidate words left out as vulgar or offensive" in text
    assert all(i.data["distractor_blocklist"] == blocked.label for i in items)
    open_games = [i.external_id for i in items if not i.data["choices"]]
    assert all(f"({e})" in text for e in open_games)  # the report names any game left open
    for item in four:
        clues = [c.lower() for c in item.data["clues"]]
        distractors = [c for c in item.data["choices"] if c != item.answer]
        assert len(distractors) == 3 and not set(distractors) & {*clues, item.answer.lower()}
        assert all(len(d) <= item.data["max_distractor_len"] for d in distractors)
        assert item.data["max_distractor_len"] == max(len(item.answer) + 1, SHORT_MAX_LEN if len(item.answer) < 3 else 0)
        assert item.data["distractor_source"].startswith("sentence-transformers:")
    relaxed = [i for i in items if "length_rule" in i.data]
    assert {i.answer for i in relaxed} == {"s", "a", "po", "18", "33"} or all(len(i.answer) < 3 for i in relaxed)
    share, total = _other_solution_share(four)
    chance = _vocabulary_chance(four)
    sigma = (chance * (1 - chance) / total) ** 0.5
    assert share <= chance + 3 * sigma, (share, chance)  # without thinning: 0.125 against 0.058; now 0.060

    # How hard the choices are (README, "La Ghigliottina"). The in-app embedding agent (its kind, given
    # each item as a run gives it, scored as a run scores it; `agent_run embed-ghigliottina-choose --set
    # gh615 --wait` takes some 20 s more) must be well below chance: 1/4 less 5 sd of a chance score, 0.163
    # for 615 items. Measured 0.080 (49/615), the report's nearest-choice figure too: the same model picked
    # the distractors near the clues. With the picker's ranking replaced by a random one (three random
    # eligible words per game, its other rules kept) this failed at 0.311; random words of the longest
    # allowed length gave 0.327. The most frequent word must be the solution no more often than chance
    # allows (1/4 + 3 sd: 0.302): measured 0.262; the random words 0.489 and 0.528.
    agent = REGISTRY["embed-ghigliottina-choose"]()
    outputs = agent.answer_many([question_for(i) for i in four])
    right = [agent_answer_score(i, o.guess, task=agent.task).correct for i, o in zip(four, outputs, strict=True)]
    agent_accuracy = sum(right) / len(four)
    chance_sd = (0.25 * 0.75 / len(four)) ** 0.5
    assert agent_accuracy <= 0.25 - 5 * chance_sd, agent_accuracy
    nearest = re.search(r"embedding nearest-choice (\d\.\d+)", text)
    frequent = re.search(r"most-frequent-word choice (\d\.\d+)", text)
    assert nearest and frequent, text
    assert float(nearest[1]) == pytest.approx(agent_accuracy, abs=0.01)
    assert float(frequent[1]) <= 0.25 + 3 * chance_sd, frequent[1]
