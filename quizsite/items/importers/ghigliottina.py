"""`ghigliottina` format (DATA.md): raw games or the 4-choice form, as JSON lines, a JSON array, or the
EVALITA 2018 XML. Raw games get three distractors from a pluggable word-vector source (rules in
quizsite/items/ghigliottina.py); a game for which fewer than three eligible words exist is imported as an
open game and named in the report, never a reason to refuse the file. No distractor the import picks is
a vulgar or offensive word (quizsite/items/blocklist.py; `blocklist` names other sources); choices it does
not pick (games already in the set, a file's own choices) are never changed, and the report warns of any
that hold a blocked word. The report also measures the
distractors: the embedding nearest-choice baseline, a most-frequent-word baseline, and the share of
distractors that are other games' solutions against random vocabulary draws."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from xml.parsers import expat

from quizsite.items.blocklist import Blocklist, blocklist_open, fold
from quizsite.items.ghigliottina import (
    CARD_SPLIT_SCHEME,
    SHORT_MAX_LEN,
    DistractorPicker,
    Pick,
    card_split,
    choices_shuffle,
    most_frequent_choice_accuracy,
    nearest_choice_accuracy,
)
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


SPLITS = ("card",)


def import_ghigliottina(
    *,
    path: Path,
    set_slug: str,
    set_name: str = "",
    vectors: WordVectors | str | Path | None = None,
    split: str = "",
    vocabulary: list[str] | None = None,
    blocklist: str | None = None,
) -> ImportReport:
    """Import games; raw ones get three distractors. A raw game for which fewer than three eligible words
    exist is imported as an open game (no choices) and named in the report. `split="card"` records the
    HF card's proportions (train 62 / test 553 for the 615 games, reproducibly drawn) on each game that
    has no `split` of its own. `vocabulary` replaces the candidate words (tests). `blocklist` names the
    words that are never distractors (`blocklist_open`: "glin-profanity", files, or "none"; default the
    GHIGLIOTTINA_BLOCKLIST setting, else glin-profanity); it is read on every import, so a wrong one is an
    error even when no game needs distractors, and it changes no existing item or given choices: games
    whose stored or given distractors hold a blocked word are a warning in the report."""
    path = Path(path)
    if split and split not in SPLITS:
        raise ImportError_(str(path), 0, f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    parsed = [(lineno, *_parse(path, lineno, obj)) for lineno, obj in _records(path)]
    check_unique_ids(path, [(lineno, ext_id) for lineno, ext_id, _ in parsed])

    report_notes: list[str] = []
    if split:
        assigned = card_split([ext_id for _, ext_id, f in parsed if "split" not in f["data"]])  # own splits win
        for _, ext_id, fields in parsed:
            if ext_id in assigned:
                fields["data"].update(split=assigned[ext_id], split_scheme=CARD_SPLIT_SCHEME)
        counts = {s: sum(1 for _, _, f in parsed if f["data"].get("split") == s) for s in ("train", "test")}
        report_notes.append(f"split {split}: {counts['train']} train / {counts['test']} test ({CARD_SPLIT_SCHEME})")

    try:  # on every import, so a wrong path is an error even when no distractor is to be picked
        blocked = blocklist_open(blocklist)
    except ImportError_:  # names the blocklist file and its line, not the games file
        raise
    except ValueError as exc:
        raise ImportError_(str(path), 0, str(exc)) from None
    existing = existing_external_ids(set_slug)
    kept_blocked = _kept_blocked_distractors(set_slug, parsed, existing, blocked)
    raw = [(lineno, ext_id, fields) for lineno, ext_id, fields in parsed if fields["data"]["choices"] is None]
    todo = [row for row in raw if row[1] not in existing]
    quality: dict[str, Any] = {}
    if todo:
        source = vectors if isinstance(vectors, WordVectors) else None
        try:
            source = source or word_vectors_open(vectors)  # type: ignore[arg-type]
        except ImportError_:  # names the vector file and its line
            raise
        except ValueError as exc:
            raise ImportError_(str(path), 0, str(exc)) from None
        picker = DistractorPicker(
            source, vocabulary=vocabulary, solutions=[f["answer"] for _, _, f in parsed], blocklist=blocked
        )
        picker.warm([c for _, _, f in todo for c in f["data"]["clues"]])
        picks = _pick_all(picker, todo)
        observed, chance = _other_solution_shares(picks)
        if observed > chance > 0:  # thin other games' solutions down to what a random draw gives, and pick again
            picker.keep_other = chance / observed
            picks = _pick_all(picker, todo)
            observed, chance = _other_solution_shares(picks)
        four: list[tuple[list[str], list[str], int]] = []
        opened: list[str] = []
        for (lineno, ext_id, fields), pick in zip(todo, picks, strict=True):
            data = fields["data"]
            data.update(
                distractor_source=source.name,
                distractor_blocklist=blocked.label,
                max_distractor_len=pick.max_len,
            )
            if pick.length_relaxed:
                data["length_rule"] = f"relaxed: solution under {SHORT_MAX_LEN - 1} letters, distractors up to {SHORT_MAX_LEN}"
            if len(pick.distractors) < 3:
                data["open_reason"] = f"only {len(pick.distractors)} of 3 distractors with {source.name}"
                opened.append(f"line {lineno} ({ext_id})")
                continue
            choices, label = choices_shuffle(fields["answer"], pick.distractors, ext_id)
            data.update(choices=choices, label=label)
            four.append((data["clues"], choices, label))
        n_distractors = 3 * len(four)
        quality = {
            "four": four, "opened": opened, "observed": observed, "chance": chance,
            "relaxed": sum(1 for p in picks if p.length_relaxed), "n_distractors": n_distractors,
            "keep_other": picker.keep_other, "source": picker,
        }
        report_notes.append(
            f"distractor blocklist {blocked.label}: {picker.blocked} of {picker.blocked + len(picker.words)} "
            "candidate words left out as vulgar or offensive"
        )

    rows = [(ext_id, fields) for _, ext_id, fields in parsed if ext_id not in existing]
    report = items_write(set_slug=set_slug, set_name=set_name, source=path.name, kind=Item.Kind.GHIGLIOTTINA, rows=rows)
    report.existing += len(parsed) - len(rows)
    report.notes.extend(report_notes)
    if todo:
        four, opened = quality["four"], quality["opened"]
        report.extra["with generated distractors"] = len(four)
        if opened:
            report.extra["open games (too few distractors)"] = len(opened)
            report.notes.append("open games, no choices: " + ", ".join(opened))
        if quality["relaxed"]:
            report.notes.append(
                f"{quality['relaxed']} short solutions: length rule relaxed to at most {SHORT_MAX_LEN} letters"
            )
        if four:
            baseline = nearest_choice_accuracy(quality["source"], four)
            frequent = most_frequent_choice_accuracy(four)
            report.metrics.update(
                nearest_choice_accuracy=baseline, most_frequent_choice_accuracy=frequent,
                other_solution_share=quality["observed"], other_solution_chance=quality["chance"],
                keep_other_solution=quality["keep_other"],
            )
            report.notes.append(
                f"distractor quality on {len(four)} 4-choice items (chance 0.25, lower is harder): "
                f"embedding nearest-choice {baseline:.3f} ({quality['source'].name}), "
                f"most-frequent-word choice {frequent:.3f}"
            )
            report.notes.append(
                f"distractors that are other games' solutions: {quality['observed']:.1%} of {quality['n_distractors']} "
                f"(random vocabulary draws under the same length rule: {quality['chance']:.1%}; "
                f"such candidates kept with probability {quality['keep_other']:.2f})"
            )
    if kept_blocked:
        n = len(kept_blocked)
        named = "; ".join(kept_blocked[:BLOCKED_NAMED]) + (f" and {n - BLOCKED_NAMED} more" if n > BLOCKED_NAMED else "")
        report.metrics["items_with_blocked_distractor"] = n
        report.warnings.append(
            f"{n} item{'s keep' if n > 1 else ' keeps'} a distractor on the blocklist ({blocked.label}), left "
            f"unchanged (imported before, or with the file's own choices): {named}"
        )
    return report


BLOCKED_NAMED = 50  # the warning names this many items with a blocked distractor, then counts the rest


def _kept_blocked_distractors(
    set_slug: str, parsed: list[tuple[int, str, dict[str, Any]]], existing: set[str], blocked: Blocklist
) -> list[str]:
    """"line N (id): word, ..." for each game of the file whose choices the import does not pick and
    that hold a blocked distractor (a choice other than the solution): the stored choices of a game
    already in the set, or the file's own choices of a new 4-choice game. They are named, never changed:
    an existing item's choices may already have responses, and given choices are the data's own."""
    if not blocked:
        return []
    stored: dict[str, tuple[str, dict[str, Any]]] = {}
    if existing:
        rows = Item.objects.filter(item_set__slug=set_slug).values_list("external_id", "answer", "data")
        stored = {ext_id: (answer, data) for ext_id, answer, data in rows}
    named: list[str] = []
    for lineno, ext_id, fields in parsed:
        if ext_id in stored:
            answer, data = stored[ext_id]
        elif fields["data"]["choices"] is not None:
            answer, data = fields["answer"], fields["data"]
        else:
            continue  # a new raw game: its distractors are picked under this blocklist
        solution = fold(answer)
        words = [c for c in (data or {}).get("choices") or [] if isinstance(c, str) and fold(c) != solution and c in blocked]
        if words:
            named.append(f"line {lineno} ({ext_id}): {', '.join(words)}")
    return named


def _pick_all(picker: DistractorPicker, todo: list[tuple[int, str, dict[str, Any]]]) -> list[Pick]:
    return [picker.pick_full(f["data"]["clues"], f["answer"], seed=ext_id) for _, ext_id, f in todo]


def _other_solution_shares(picks: list[Pick]) -> tuple[float, float]:
    """(share of the distractors that are other games' solutions, the share random draws would give)."""
    full = [p for p in picks if len(p.distractors) == 3]
    if not full:
        return 0.0, 0.0
    observed = sum(p.other_solutions for p in full) / (3 * len(full))
    return observed, sum(p.chance for p in full) / len(full)
