"""Hostile input for every registered importer: bad bytes, deep nesting, NaN/Infinity, wrong types and
oversized tossups end in a one-line ImportError_ naming file:line, never a traceback, never a Python repr
stored as text, and nothing written (imports are transactional)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from quizsite.agents.models import Agent
from quizsite.items.importers import IMPORTERS, ImportError_, items_import
from quizsite.items.importers.limits import MAX_ANSWER_CHARS, MAX_TOSSUP_CHARS, MAX_TOSSUP_WORDS
from quizsite.items.models import Item, ItemSet, Response

TOSSUP = "This clue comes first. This clue comes second. For ten points, name this thing."
CLUES = {"w1": "pane", "w2": "gioco", "w3": "testa", "w4": "osso", "w5": "zoccolo"}
Path_ = tuple[str | int, ...]


def quizbowl(i: int) -> dict:
    return {"id": f"q{i}", "question": TOSSUP, "answer": "<b><u>Thing</u></b> [accept stuff]", "category": "Science"}


def buzz(i: int) -> dict:
    return {
        "date": "Fri Apr 27 2018 14:12:05 GMT-0700 (PDT)", "action": "buzz",
        "object": {"qid": f"t{i}", "question_text": TOSSUP, "answer": "{Thing}", "guess": "thing", "ruling": True,
                   "time_elapsed": 1000, "time_remaining": 5000, "room": "r", "question_info": {"category": "Science"},
                   "user": {"id": f"u{i}", "name": "Player"}},
    }


def query(i: int) -> dict:
    return {"id": f"q{i}", "text": TOSSUP, "answer": "Thing", "clean_answers": ["Thing"], "orig_qid": f"t{i}",
            "n_clues": 1, "total_clues": 1}


def caimira_response(i: int) -> dict:
    return {"query_id": f"q{i}", "agent_id": "a1", "ruling": 1, "prediction": "thing"}


def game(i: int) -> dict:
    return {"id": f"g{i}", **CLUES, "choices": ["pila", "duro", "mano", "rete"], "label": 1, "type": "TV"}


def dig(i: int) -> dict:
    return {"id": f"a{i}", "text": f"Passage number {i} about rivers.", "true_question": "Which rivers?",
            "other_question_1": "Which lakes?", "other_question_2": "Which seas?", "author": "someone"}


def romqa(i: int) -> dict:
    return {"id": f"r{i}", "cluster_id": "c1", "question": "Which rivers flow through Vienna?",
            "candidates": [{"text": "Danube", "is_answer": True}, {"text": "Loire", "is_answer": False}]}


@dataclass
class Format:
    """One importer fed through one file layout; `target` is the file the bad record goes to."""

    fmt: str
    record: Callable[[int], dict]
    text: Path_  # where text is expected
    number: Path_ | None = None  # where a number is expected
    listy: Path_ | None = None  # where a list is expected
    answer: Path_ | None = None  # an answer line (tossup formats)
    tossup: bool = False
    layout: str = "jsonl"  # jsonl, array (one entry per line after "["), csv, xml
    target: str = "items.jsonl"
    others: dict[str, list[dict]] = field(default_factory=dict)  # caimira: the folder's other files

    @property
    def name(self) -> str:
        return self.fmt if self.layout == "jsonl" and self.target == "items.jsonl" else f"{self.fmt}[{self.target}]"


FORMATS = [
    Format("quizbowl", quizbowl, text=("question",), answer=("answer",), tossup=True),
    Format("protobowl-log", buzz, text=("object", "question_text"), number=("object", "time_elapsed"),
           answer=("object", "answer"), tossup=True),
    Format("caimira", query, text=("text",), number=("n_clues",), listy=("clean_answers",), answer=("answer",),
           tossup=True, target="queries.jsonl",
           others={"agents.jsonl": [{"id": "a1", "type": "ai"}], "responses.jsonl": [caimira_response(1)]}),
    Format("caimira", caimira_response, text=("prediction",), number=("ruling",), target="responses.jsonl",
           others={"agents.jsonl": [{"id": "a1", "type": "ai"}], "queries.jsonl": [query(1), query(2)]}),
    Format("caimira", lambda i: {"id": f"a{i}", "name": "Bot", "type": "ai"}, text=("name",), target="agents.jsonl",
           others={"queries.jsonl": [query(1)], "responses.jsonl": [caimira_response(1)]}),
    Format("ghigliottina", game, text=("w1",), number=("label",), listy=("choices",)),
    Format("ghigliottina", game, text=("w1",), number=("label",), listy=("choices",), layout="array", target="g.json"),
    Format("archaeology", dig, text=("text",)),
    Format("romqa", romqa, text=("question",), number=("candidates", 0, "is_answer"), listy=("candidates",)),
    Format("romqa", romqa, text=("question",), listy=("candidates",), layout="array", target="r.json"),
]

# Layouts whose bytes are not JSON: only the byte-level and size cases apply.
RAW_FORMATS = [
    Format("archaeology", dig, text=("text",), layout="csv", target="a.csv"),
    Format("ghigliottina", game, text=("w1",), layout="xml", target="g.xml"),
]


def put(record: dict, path: Path_, value: Any) -> dict:
    record = copy.deepcopy(record)
    node: Any = record
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return record


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


# Each case: (name, which field it needs, value or raw line maker, what the message says).
NAN = float("nan")
CASES: list[tuple[str, str, Any, str]] = [
    ("number-for-text", "text", 42, "must be text, got a number"),
    ("list-for-text", "text", ["a", "b"], "must be text, got a list"),
    ("object-for-text", "text", {"x": 1}, "must be text, got an object"),
    ("bool-for-text", "text", True, "must be text, got true or false"),
    ("nan-for-text", "text", NAN, "NaN or Infinity"),
    ("nul-in-text", "text", "a\x00b", "NUL character"),
    ("nested-for-text", "text", nested(50), "nested deeper than"),
    ("nan-for-number", "number", NAN, "NaN or Infinity"),
    ("infinity-for-number", "number", float("inf"), "NaN or Infinity"),
    ("minus-infinity-for-number", "number", float("-inf"), "NaN or Infinity"),
    ("text-for-number", "number", "12", "must be"),
    ("list-for-number", "number", [1], "must be"),
    ("object-for-list", "listy", {"x": 1}, "must be"),
    ("text-for-list", "listy", "a, b", "must be"),
    ("long-tossup-words", "tossup", " ".join(["word"] * (MAX_TOSSUP_WORDS + 1)), f"more than {MAX_TOSSUP_WORDS:,} words"),
    ("long-tossup-chars", "tossup", "x" * (MAX_TOSSUP_CHARS + 1) + " y", f"longer than {MAX_TOSSUP_CHARS:,} characters"),
    ("long-answer", "answer", "x" * (MAX_ANSWER_CHARS + 1), f"longer than {MAX_ANSWER_CHARS:,} characters"),
]
# Whole bad lines, for every JSON layout.
RAW_LINES: list[tuple[str, bytes, str]] = [
    ("invalid-utf8", b'{"id": "caf\xe9 \xff"}', "not valid UTF-8"),
    ("deep-100000", b"[" * 100_000, "nested deeper than"),
    ("deep-object-100000", b'{"a": ' * 100_000, "nested deeper than"),
    ("lone-surrogate", b'{"id": "x\\ud800y", "text": "a"}', "lone surrogate"),
    ("huge-integer", b'{"id": ' + b"9" * 5000 + b"}", "invalid JSON"),
]


def encode(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode()  # NaN and Infinity come out as JSON's extensions


def write(tmp_path: Path, spec: Format, bad: bytes | dict) -> tuple[Path, str, int]:
    """Write a file (or caimira folder) whose first record is good and whose second is `bad`;
    return what to import, the file that must be named, and the line."""
    good = spec.record(1)
    folder = tmp_path / "in"
    folder.mkdir()
    for name, rows in spec.others.items():
        (folder / name).write_bytes(b"".join(encode(r) + b"\n" for r in rows))
    lines = [encode(good), bad if isinstance(bad, bytes) else encode(bad)]
    target = folder / spec.target
    if spec.layout == "array":
        target.write_bytes(b"[\n" + b",\n".join(lines) + b"\n]\n")
        line = 3
    else:
        target.write_bytes(b"\n".join(lines) + b"\n")
        line = 2
    return (folder if spec.fmt == "caimira" else target), target.name, line


def assert_clean_refusal(exc: ImportError_, file_name: str, line: int, words: str) -> None:
    message = str(exc)
    assert f"{file_name}:{line}: " in message, message
    assert words in message, message
    assert "\n" not in message and "Traceback" not in message
    assert len(message) < 400  # a message, not a dump of the input


def assert_nothing_written() -> None:
    assert not ItemSet.objects.exists() and not Item.objects.exists()
    assert not Agent.objects.exists() and not Response.objects.exists()


def field_cases() -> list[Any]:
    out = []
    for spec in FORMATS:
        for name, needs, value, words in CASES:
            path = spec.answer if needs == "answer" else spec.text if needs == "tossup" else getattr(spec, needs)
            if path is None or (needs == "tossup" and not spec.tossup):
                continue
            out.append(pytest.param(spec, path, value, words, id=f"{spec.name}-{spec.layout}-{name}"))
    return out


def raw_cases() -> list[Any]:
    return [
        pytest.param(spec, raw, words, id=f"{spec.name}-{spec.layout}-{name}")
        for spec in FORMATS for name, raw, words in RAW_LINES
    ]


def test_every_registered_format_is_covered():
    assert {spec.fmt for spec in FORMATS} == set(IMPORTERS)


@pytest.mark.django_db
@pytest.mark.parametrize("spec", FORMATS, ids=lambda s: f"{s.name}-{s.layout}")
def test_the_good_records_import(tmp_path, spec):
    """The base records are valid, so each refusal below is caused by the one bad value."""
    path, _name, _line = write(tmp_path, spec, spec.record(2))
    assert items_import(fmt=spec.fmt, path=path, set_slug="ok").created >= 1


@pytest.mark.django_db
@pytest.mark.parametrize(("spec", "where", "value", "words"), field_cases())
def test_a_bad_field_is_refused_with_its_line(tmp_path, spec, where, value, words):
    path, name, line = write(tmp_path, spec, put(spec.record(2), where, value))
    with pytest.raises(ImportError_) as exc:
        items_import(fmt=spec.fmt, path=path, set_slug="bad")
    assert_clean_refusal(exc.value, name, line, words)
    assert_nothing_written()


@pytest.mark.django_db
@pytest.mark.parametrize(("spec", "raw", "words"), raw_cases())
def test_a_bad_line_is_refused_with_its_line(tmp_path, spec, raw, words):
    path, name, line = write(tmp_path, spec, raw)
    with pytest.raises(ImportError_) as exc:
        items_import(fmt=spec.fmt, path=path, set_slug="bad")
    assert_clean_refusal(exc.value, name, line, words)
    assert_nothing_written()


# --- CSV and XML layouts ------------------------------------------------------------------------------


def csv_file(tmp_path: Path, second: bytes) -> Path:
    path = tmp_path / "a.csv"
    path.write_bytes(b"id,text,true_question,other_question_1,other_question_2\n"
                     b"a1,A passage.,Which rivers?,Which lakes?,Which seas?\n" + second + b"\n")
    return path


def xml_file(tmp_path: Path, clue: bytes) -> Path:
    clues = [w.encode() for w in CLUES.values()]
    first = b"  <game><id>g1</id>" + b"".join(b"<clue>" + c + b"</clue>" for c in clues) + b"<solution>duro</solution></game>\n"
    second = (b"  <game><id>g2</id><clue>" + clue + b"</clue>" + b"".join(b"<clue>" + c + b"</clue>" for c in clues[1:])
              + b"<solution>duro</solution></game>\n")
    path = tmp_path / "g.xml"
    path.write_bytes(b'<?xml version="1.0" encoding="UTF-8"?>\n<games>\n' + first + second + b"</games>\n")
    return path


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("second", "words"),
    [
        (b"a2,caf\xe9 \xff,Which rivers?,Which lakes?,Which seas?", "not valid UTF-8"),
        (b"a2,with a \x00 NUL,Which rivers?,Which lakes?,Which seas?", "NUL character"),
        (b"a2," + b"x" * 20_001 + b",Which rivers?,Which lakes?,Which seas?", "longer than 20,000 characters"),
    ],
    ids=["invalid-utf8", "nul", "long-text"],
)
def test_archaeology_csv_refuses_bad_rows_with_the_line(tmp_path, second, words):
    with pytest.raises(ImportError_) as exc:
        items_import(fmt="archaeology", path=csv_file(tmp_path, second), set_slug="bad")
    assert_clean_refusal(exc.value, "a.csv", 3, words)
    assert_nothing_written()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("clue", "words"),
    [(b"caf\xe9 \xff", "malformed XML"), (b"x" * (MAX_ANSWER_CHARS + 1), f"longer than {MAX_ANSWER_CHARS:,}")],
    ids=["invalid-utf8", "long-clue"],
)
def test_ghigliottina_xml_refuses_bad_games_with_the_line(tmp_path, clue, words):
    with pytest.raises(ImportError_) as exc:
        items_import(fmt="ghigliottina", path=xml_file(tmp_path, clue), set_slug="bad")
    assert_clean_refusal(exc.value, "g.xml", 4, words)
    assert_nothing_written()


@pytest.mark.django_db
def test_a_folder_or_missing_file_is_a_clean_error(tmp_path):
    for fmt in sorted(set(IMPORTERS) - {"caimira"}):
        with pytest.raises(ImportError_, match="not a file"):
            items_import(fmt=fmt, path=tmp_path, set_slug="bad")
    with pytest.raises(ImportError_, match="queries.jsonl: file not found"):
        items_import(fmt="caimira", path=tmp_path, set_slug="bad")
    assert_nothing_written()


# --- the command line ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_import_items_command_refuses_hostile_input_cleanly(tmp_path):
    spec = FORMATS[0]
    path, name, line = write(tmp_path, spec, put(spec.record(2), ("question",), ["a", "b"]))
    with pytest.raises(CommandError) as exc:
        call_command("import_items", str(path), "--format", "quizbowl", "--set", "s")
    message = str(exc.value)
    assert message == f"nothing imported: {path}:{line}: 'question' must be text, got a list"
    assert exc.value.__cause__ is not None and isinstance(exc.value.__cause__, ImportError_)
    assert_nothing_written()

    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"[" * 100_000 + b"\n")
    with pytest.raises(CommandError, match=r"nothing imported: .*deep.jsonl:1: nested deeper than 20 levels$"):
        call_command("import_items", str(path), "--format", "quizbowl", "--set", "s")


@pytest.mark.django_db
def test_json_array_entries_are_named_by_their_line(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("[\n" + json.dumps(romqa(1), indent=2) + ",\n" + json.dumps(romqa(1)) + "\n]\n")
    with pytest.raises(ImportError_) as exc:
        items_import(fmt="romqa", path=path, set_slug="r")
    assert_clean_refusal(exc.value, "r.json", 2 + json.dumps(romqa(1), indent=2).count("\n") + 1, "duplicate id 'r1'")


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["quizbowl", "archaeology", "romqa", "caimira", "protobowl-log"])
@pytest.mark.parametrize("option", ["--vectors", "--blocklist", "--split"])
def test_an_option_the_format_does_not_take_is_a_command_error_naming_the_formats_that_do(tmp_path, fmt, option):
    """`--format quizbowl --blocklist x` once ended in a TypeError traceback from the importer's call."""
    path = tmp_path / "any.jsonl"
    path.write_text("{}\n")
    value = "card" if option == "--split" else "x"
    with pytest.raises(CommandError, match=rf"^{option} is not an option of --format {fmt}; formats that take it: ghigliottina$"):
        call_command("import_items", str(path), "--format", fmt, "--set", "s", option, value)
    with pytest.raises(ImportError_, match=rf"format {fmt!r} takes no option {option[2:]!r}; formats that take it: ghigliottina"):
        items_import(fmt=fmt, path=path, set_slug="s", **{option[2:]: value})
    assert_nothing_written()


# --- import_predictions -------------------------------------------------------------------------------
# Not a registered format (it brings AI answers to items already stored, not items), so the loops above
# miss it; the same hostile input must end the same way.

PREDICTION = {"agent": "bot", "item_set": "t", "item_id": "marked", "guess": "zanzibar"}
PREDICTION_CASES: list[tuple[str, str, Any, str]] = [
    ("object-for-agent", "agent", {"x": 1}, "'agent' must be text, got an object"),
    ("list-for-agent", "agent", ["a", "b"], "'agent' must be text, got a list"),
    ("number-for-agent", "agent", 5, "'agent' must be text, got a number"),
    ("bool-for-agent", "agent", True, "'agent' must be text, got true or false"),
    ("list-for-item-set", "item_set", ["t"], "'item_set' must be text, got a list"),
    ("bool-for-item-id", "item_id", True, "'item_id' must be text, got true or false"),
    ("number-for-guess", "guess", 5, "'guess' must be text or a list of texts, got a number"),
    ("object-for-guess", "guess", {"a": 1}, "'guess' must be text or a list of texts, got an object"),
    ("number-in-guess-list", "guess", ["a", 5], "'guess[1]' must be text, got a number"),
    ("nul-in-guess", "guess", "a\x00b", "NUL character"),
    ("bool-for-word-index", "word_index", True, "'word_index' must be a whole number 0..2000, got true or false"),
    ("negative-word-index", "word_index", -5, "'word_index' must be a whole number 0..2000, got -5"),
    ("huge-word-index", "word_index", 10**30, "'word_index' must be a whole number 0..2000, got 10000"),
    ("fraction-for-word-index", "word_index", 3.5, "'word_index' must be a whole number 0..2000, got 3.5"),
    ("infinity-for-word-index", "word_index", float("inf"), "NaN or Infinity"),
    ("bool-for-clue-index", "clue_index", False, "'clue_index' must be a whole number 0..200, got true or false"),
    ("text-for-confidence", "confidence", "high", "'confidence' must be a number, got text"),
    ("bool-for-confidence", "confidence", True, "'confidence' must be a number, got true or false"),
    ("nan-for-confidence", "confidence", NAN, "NaN or Infinity"),
    ("list-for-meta", "meta", [1], "'meta' must be an object, got a list"),
    ("nested-meta", "meta", {"x": nested(50)}, "nested deeper than"),
    ("number-for-subtype", "subtype", 5, "subtype must be one of"),
]


def predictions_file(tmp_path: Path, bad: bytes | dict) -> Path:
    """A good prediction on line 1, `bad` on line 2."""
    path = tmp_path / "pred.jsonl"
    path.write_bytes(encode(PREDICTION) + b"\n" + (bad if isinstance(bad, bytes) else encode(bad)) + b"\n")
    return path


def assert_predictions_refused(path: Path, words: str) -> None:
    with pytest.raises(CommandError) as exc:
        call_command("import_predictions", str(path))
    message = str(exc.value)
    assert message.startswith(f"nothing imported: {path}:2: "), message
    assert words in message, message
    assert "\n" not in message and "Traceback" not in message and len(message) < 400
    assert not Agent.objects.exists() and not Response.objects.exists()


@pytest.mark.django_db
def test_the_good_prediction_imports(tossup_set, tmp_path):
    call_command("import_predictions", str(predictions_file(tmp_path, {**PREDICTION, "agent": "other"})))
    assert set(Agent.objects.values_list("name", flat=True)) == {"bot", "other"}


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "field_", "value", "words"), PREDICTION_CASES, ids=[c[0] for c in PREDICTION_CASES])
def test_a_bad_prediction_field_is_refused_with_its_line(tossup_set, tmp_path, name, field_, value, words):
    """`{"agent": {"x": 1}}` once created an AI agent named "{'x': 1}", and `word_index: true` was word 1."""
    assert_predictions_refused(predictions_file(tmp_path, {**PREDICTION, field_: value}), words)


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "raw", "words"), RAW_LINES, ids=[r[0] for r in RAW_LINES])
def test_a_bad_prediction_line_is_refused_with_its_line(tossup_set, tmp_path, name, raw, words):
    assert_predictions_refused(predictions_file(tmp_path, raw), words)
