"""Importers for the annotation tasks: each format reads, each broken file says where and imports nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quizsite.items.importers import ImportError_, items_import
from quizsite.items.models import Item, ItemSet
from tests.annotate.fakes import FakeVectors
from tests.conftest import SHARED_DATA

GAME = {"w1": "pane", "w2": "gioco", "w3": "testa", "w4": "osso", "w5": "zoccolo", "solution": "duro"}
FOUR = {**GAME, "id": "g1", "choices": ["pila", "duro", "mano", "rete"], "label": 1}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


# --- ghigliottina ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_ghigliottina_four_choice_form_imports_choices_and_label(tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", [FOUR, {**FOUR, "id": "g2", "links": ["x"]}])
    report = items_import(fmt="ghigliottina", path=path, set_slug="g")
    assert report.created == 2
    item = Item.objects.get(external_id="g1")
    assert item.kind == "ghigliottina" and item.answer == "duro"
    assert item.data["clues"] == ["pane", "gioco", "testa", "osso", "zoccolo"]
    assert item.data["choices"][item.data["label"]] == "duro"
    assert item.data["distractor_source"] == "given"
    assert Item.objects.get(external_id="g2").data["links"] == ["x"]
    again = items_import(fmt="ghigliottina", path=path, set_slug="g")
    assert (again.created, again.existing) == (0, 2)


@pytest.mark.django_db
def test_raw_game_gets_three_distractors_by_the_rule_and_records_the_source(tmp_path):
    path = write_jsonl(tmp_path / "raw.jsonl", [{**GAME, "id": "r1"}])
    report = items_import(fmt="ghigliottina", path=path, set_slug="g", vectors=FakeVectors())
    assert report.created == 1 and report.extra == {"with generated distractors": 1}
    data = Item.objects.get(external_id="r1").data
    assert sorted(data["choices"]) == ["duro", "mano", "pila", "rete"]  # close to 3 clues, short, not inflections
    assert data["choices"][data["label"]] == "duro"
    assert data["distractor_source"] == "fake:test"
    # re-import: the existing game is not recomputed, so its choices stay the same
    assert items_import(fmt="ghigliottina", path=path, set_slug="g", vectors=FakeVectors()).existing == 1


@pytest.mark.django_db
def test_evalita_xml_reads_games_and_ids(tmp_path):
    path = tmp_path / "games.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<games>\n  <game>\n    <id>abc</id>\n'
        + "".join(f"    <clue>{GAME[k]}</clue>\n" for k in ("w1", "w2", "w3", "w4", "w5"))
        + "    <solution>duro</solution>\n    <type>TV</type>\n  </game>\n</games>\n",
        encoding="utf-8",
    )
    items_import(fmt="ghigliottina", path=path, set_slug="x", vectors=FakeVectors())
    item = Item.objects.get(external_id="abc")
    assert item.data["type"] == "TV" and item.answer == "duro" and len(item.data["choices"]) == 4


@pytest.mark.django_db
def test_real_xml_and_json_games_parse_without_writing(tmp_path):
    """The shared EVALITA files parse (read in place, never copied); a 4-choice copy avoids distractor work."""
    from quizsite.items.importers.ghigliottina import _parse, _records

    raw = SHARED_DATA / "ghigliottina" / "raw"
    if not raw.exists():
        pytest.skip("../shared/data/ghigliottina is not present")
    xml = _records(raw / "nlp4fun2018_train_v2.xml")
    assert len(xml) == 315 and xml[0][1]["w1"] == "pane" and xml[0][1]["solution"] == "duro"
    js = _records(raw / "ghigliottinai2020_dev.json")
    assert len(js) == 300
    ids = {_parse(raw, n, obj)[0] for n, obj in js}
    assert len(ids) == 300  # content ids are unique


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{k: v for k, v in FOUR.items() if k != "w3"}], "bad.jsonl:1: missing field 'w3'"),
        ([FOUR, {**FOUR, "id": "g2", "label": 4}], "bad.jsonl:2: 'label' must be an index 0..3"),
        ([FOUR, {**FOUR, "id": "g2", "label": 0}], "bad.jsonl:2: label 0 points at 'pila' but the solution is 'duro'"),
        ([FOUR, {**FOUR, "choices": ["a", "b", "duro"]}], "bad.jsonl:2: 'choices' must be a list of 4"),
        ([FOUR, dict(FOUR)], "bad.jsonl:2: duplicate id 'g1' (first on line 1)"),
    ],
)
def test_ghigliottina_errors_name_the_line_and_import_nothing(tmp_path, rows, message):
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(ImportError_) as exc:
        items_import(fmt="ghigliottina", path=path, set_slug="bad")
    assert message in str(exc.value)
    assert not Item.objects.exists() and not ItemSet.objects.exists()


@pytest.mark.django_db
def test_malformed_xml_says_where(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<games>\n<game>\n<clue>pane</clue>\n<clue>gioco</clue\n</game></games>\n", encoding="utf-8")
    with pytest.raises(ImportError_) as exc:
        items_import(fmt="ghigliottina", path=path, set_slug="bad", vectors=FakeVectors())
    assert "broken.xml:5: malformed XML" in str(exc.value)
    assert not Item.objects.exists()


@pytest.mark.django_db
def test_xml_game_with_four_clues_is_refused(tmp_path):
    path = tmp_path / "short.xml"
    path.write_text("<games>\n<game>\n" + "<clue>a</clue>\n" * 4 + "<solution>b</solution>\n</game>\n</games>\n")
    with pytest.raises(ImportError_, match=r"short.xml:2: game has 4 <clue> elements, expected 5"):
        items_import(fmt="ghigliottina", path=path, set_slug="bad", vectors=FakeVectors())


# A game with too few distractors is imported as an open game (tests/items/test_ghigliottina.py).


# --- archaeology -----------------------------------------------------------------------------------

ARCH = {
    "id": "a1",
    "text": "The Nile floods every summer because of monsoon rains over the Ethiopian highlands.",
    "true_question": "Why does the Nile flood?",
    "other_question_1": "How long is the Nile?",
    "other_question_2": "Who built the Aswan dam?",
    "author": "p1",
}


@pytest.mark.django_db
def test_archaeology_csv_and_jsonl(tmp_path):
    import csv

    path = tmp_path / "a.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(ARCH))
        w.writeheader()
        w.writerow(ARCH)
        w.writerow({**ARCH, "id": "a2", "text": "Line one,\nline two with a comma."})
    assert items_import(fmt="archaeology", path=path, set_slug="a").created == 2
    item = Item.objects.get(external_id="a1")
    assert item.answer == "Why does the Nile flood?" and item.data["other_questions"][1] == "Who built the Aswan dam?"
    assert item.data["author"] == "p1"
    j = write_jsonl(tmp_path / "a.jsonl", [{k: v for k, v in ARCH.items() if k != "id"}])
    assert items_import(fmt="archaeology", path=j, set_slug="a2").created == 1
    assert Item.objects.get(item_set__slug="a2").external_id.startswith("a-")


@pytest.mark.django_db
def test_archaeology_errors(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("text,true_question,other_question_1\nx,y,z\n")
    with pytest.raises(ImportError_, match=r"a.csv:1: missing column 'other_question_2'"):
        items_import(fmt="archaeology", path=path, set_slug="a")
    j = write_jsonl(tmp_path / "a.jsonl", [ARCH, {**ARCH, "id": "a2", "true_question": ""}])
    with pytest.raises(ImportError_, match=r"a.jsonl:2: missing field 'true_question'"):
        items_import(fmt="archaeology", path=j, set_slug="a")
    j = write_jsonl(tmp_path / "d.jsonl", [ARCH, ARCH])
    with pytest.raises(ImportError_, match=r"d.jsonl:2: duplicate id 'a1'"):
        items_import(fmt="archaeology", path=j, set_slug="a")
    assert not Item.objects.exists()


# --- romqa -----------------------------------------------------------------------------------------

ROMQA = {
    "id": "q1",
    "cluster_id": "c1",
    "question": "Which rivers flow through Germany and Austria?",
    "candidates": [
        {"text": "Danube", "uri": "Q1653", "is_answer": True},
        {"text": "Inn", "is_answer": True},
        {"text": "Loire", "is_answer": False},
    ],
    "complete_answer": True,
    "constraints": [["flows through", "Germany"]],
}


@pytest.mark.django_db
def test_romqa_reads_candidates_and_cluster(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([ROMQA, {**ROMQA, "id": "q2"}]))
    assert items_import(fmt="romqa", path=path, set_slug="r").created == 2
    item = Item.objects.get(external_id="q1")
    assert item.answer == "Danube / Inn" and item.data["cluster_id"] == "c1"
    assert item.data["candidates"][0] == {"text": "Danube", "uri": "Q1653", "is_answer": True}


@pytest.mark.django_db
def test_romqa_errors(tmp_path):
    bad = {**ROMQA, "id": "q2", "candidates": [{"text": "Danube", "is_answer": "yes"}]}
    path = write_jsonl(tmp_path / "r.jsonl", [ROMQA, bad])
    with pytest.raises(ImportError_, match=r"r.jsonl:2: candidate 1: 'is_answer' must be true or false"):
        items_import(fmt="romqa", path=path, set_slug="r")
    path = write_jsonl(tmp_path / "m.jsonl", [{k: v for k, v in ROMQA.items() if k != "cluster_id"}])
    with pytest.raises(ImportError_, match=r"m.jsonl:1: missing field 'cluster_id'"):
        items_import(fmt="romqa", path=path, set_slug="r")
    assert not Item.objects.exists()


def test_import_items_command_reports_clear_failure(tmp_path, db):
    from django.core.management import CommandError, call_command

    path = write_jsonl(tmp_path / "bad.jsonl", [FOUR, {**FOUR, "id": "g2", "label": 7}])
    with pytest.raises(CommandError, match=r"nothing imported: .*bad.jsonl:2: 'label' must be an index"):
        call_command("import_items", str(path), "--format", "ghigliottina", "--set", "g")


def test_import_items_command_with_a_vec_file(tmp_path, db):
    from io import StringIO

    from django.core.management import call_command

    from tests.annotate.fakes import FakeVectors

    fake = FakeVectors()
    words = list(fake.table)
    matrix = fake.vectors(words)
    vec = tmp_path / "tiny.vec"
    vec.write_text(f"{len(words)} {matrix.shape[1]}\n" + "".join(
        w + " " + " ".join(f"{x:.4f}" for x in row) + "\n" for w, row in zip(words, matrix, strict=True)
    ))
    path = write_jsonl(tmp_path / "raw.jsonl", [{**GAME, "id": "r1"}])
    out = StringIO()
    call_command("import_items", str(path), "--format", "ghigliottina", "--set", "g", "--vectors", str(vec), stdout=out)
    assert "1 with generated distractors" in out.getvalue()
    data = Item.objects.get(external_id="r1").data
    assert sorted(data["choices"]) == ["duro", "mano", "pila", "rete"] and data["distractor_source"] == "fasttext:tiny.vec"
