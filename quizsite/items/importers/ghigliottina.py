"""`ghigliottina` format (DATA.md): raw games or the 4-choice form, as JSON lines, a JSON array, or the
EVALITA 2018 XML. Raw games get three distractors from a pluggable word-vector source."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from xml.parsers import expat

from quizsite.items.ghigliottina import DistractorPicker, choices_shuffle
from quizsite.items.models import Item
from quizsite.items.vectors import WordVectors, word_vectors_open

from .base import (
    ImportError_,
    ImportReport,
    answer_field,
    as_text,
    check_unique_ids,
    check_value,
    id_field,
    list_field,
    read_bytes,
    read_records,
    shown,
    text_field,
)
from .limits import MAX_ANSWER_CHARS
from .writing import existing_external_ids, items_write

CLUES = ("w1", "w2", "w3", "w4", "w5")


def _xml_records(path: Path, data: bytes) -> list[tuple[int, dict[str, Any]]]:
    """`<games><game><id/>?<clue/>x5<solution/><type/>?</game>...` with the line each game starts on."""
    parser = expat.ParserCreate("utf-8")
    games: list[tuple[int, dict[str, Any]]] = []
    current: dict[str, Any] | None = None
    start_line = 0
    text: list[str] = []

    def start(name: str, _attrs: dict) -> None:
        nonlocal current, start_line
        if name == "game":
            current, start_line = {"clues": []}, parser.CurrentLineNumber
        text.clear()

    def end(name: str) -> None:
        nonlocal current
        value = "".join(text).strip()
        text.clear()
        if current is None:
            return
        if name == "clue":
            current["clues"].append(value)
        elif name in ("id", "solution", "type"):
            current[name] = value
        elif name == "game":
            clues = current.pop("clues")
            if len(clues) != 5:
                raise ImportError_(str(path), start_line, f"game has {len(clues)} <clue> elements, expected 5")
            current.update(zip(CLUES, clues, strict=True))
            check_value(path, start_line, current)
            games.append((start_line, current))
            current = None

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text.append
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise ImportError_(str(path), exc.lineno, f"malformed XML: {expat.ErrorString(exc.code)}") from None
    if not games:
        raise ImportError_(str(path), 0, "no <game> elements")
    return games


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    data = read_bytes(path)
    if path.suffix.lower() == ".xml" or data[:64].lstrip().startswith(b"<"):
        return _xml_records(path, data)
    return list(read_records(path))


def _parse(path: Path, lineno: int, obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Check one game; return its id and a partial item (choices still missing for raw games)."""
    clues = [answer_field(path, lineno, obj, k).strip() for k in CLUES]
    four_choice = "choices" in obj or "label" in obj
    if four_choice:
        choices = obj.get("choices")
        if choices is None or obj.get("label") is None:
            raise ImportError_(str(path), lineno, f"missing field {'choices' if choices is None else 'label'!r}")
        if not isinstance(choices, list) or len(choices) != 4:
            raise ImportError_(str(path), lineno, "'choices' must be a list of 4 non-empty words")
        choices = [as_text(path, lineno, c, f"choices[{i}]", max_chars=MAX_ANSWER_CHARS).strip() for i, c in enumerate(choices)]
        label = obj["label"]
        if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label <= 3:
            raise ImportError_(str(path), lineno, f"'label' must be an index 0..3 into choices, got {shown(label)}")
        solution = (answer_field(path, lineno, obj, "solution", required=False) or choices[label]).strip()
        if solution.lower() != choices[label].lower():
            raise ImportError_(
                str(path), lineno, f"label {label} points at {choices[label]!r} but the solution is {solution!r}"
            )
    else:
        solution, choices, label = answer_field(path, lineno, obj, "solution").strip(), None, None
    ext_id = id_field(path, lineno, obj, "id", required=False)
    if not ext_id:  # the 2020 games carry no id: key them by content, so a re-import finds them again
        ext_id = "g-" + hashlib.sha1("|".join([*clues, solution]).lower().encode()).hexdigest()[:12]
    data: dict[str, Any] = {"clues": clues, "choices": choices, "label": label}
    if four_choice:
        data["distractor_source"] = "given"
    for key in ("type", "source", "split"):
        if obj.get(key) is not None:
            data[key] = text_field(path, lineno, obj, key, required=False)
    if obj.get("links") is not None:
        data["links"] = list_field(path, lineno, obj, "links")
    return ext_id, {"text": " · ".join(clues), "answer": solution, "data": data}


def import_ghigliottina(
    *, path: Path, set_slug: str, set_name: str = "", vectors: WordVectors | str | Path | None = None
) -> ImportReport:
    path = Path(path)
    parsed = [(lineno, *_parse(path, lineno, obj)) for lineno, obj in _records(path)]
    check_unique_ids(path, [(lineno, ext_id) for lineno, ext_id, _ in parsed])

    existing = existing_external_ids(set_slug)
    raw = [(lineno, ext_id, fields) for lineno, ext_id, fields in parsed if fields["data"]["choices"] is None]
    todo = [row for row in raw if row[1] not in existing]
    if todo:
        source = vectors if isinstance(vectors, WordVectors) else None
        try:
            source = source or word_vectors_open(vectors)  # type: ignore[arg-type]
        except ValueError as exc:
            raise ImportError_(str(path), 0, str(exc)) from None
        game_words = [w for _, _, f in parsed for w in [*f["data"]["clues"], f["answer"]]]
        picker = DistractorPicker(source, extra_words=game_words)
        for lineno, ext_id, fields in todo:
            distractors = picker.pick(fields["data"]["clues"], fields["answer"])
            if len(distractors) < 3:
                raise ImportError_(
                    str(path), lineno, f"found only {len(distractors)} of 3 distractors with {source.name}; "
                    "name a word-vector file with a larger vocabulary",
                )
            choices, label = choices_shuffle(fields["answer"], distractors, ext_id)
            fields["data"].update(choices=choices, label=label, distractor_source=source.name)

    rows = [(ext_id, fields) for _, ext_id, fields in parsed if ext_id not in existing]
    report = items_write(set_slug=set_slug, set_name=set_name, source=path.name, kind=Item.Kind.GHIGLIOTTINA, rows=rows)
    report.existing += len(parsed) - len(rows)
    if todo:
        report.extra["with generated distractors"] = len(todo)
    return report
