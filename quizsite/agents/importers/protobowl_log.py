"""`protobowl-log` format: the Protobowl buzz log, JSON lines, one buzz each (DATA.md).

Each line gives a tossup (qid, text, answer, question_info), a player (user id and name) and a buzz
(guess, ruling, time_elapsed, time_remaining). Tossups become `tossup` items, players human agents
(external id `protobowl:<user id>`; the name stays in the admin, exports use the pseudonym), and every
buzz one response row: nothing is dropped here, not even a player's second buzz on a tossup (the fit's
data preparation keeps the first judged one, as QANTA does).

Buzz position: QANTA reads `time_elapsed / time_remaining` as the fraction of the tossup read (the log's
`time_remaining` holds the total); the word index is that fraction of the tossup's words.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from django.db import transaction

from quizsite.agents.models import Agent
from quizsite.items.importers.base import (
    ImportError_,
    ImportReport,
    answer_field,
    as_text,
    id_field,
    item_set_get_or_create,
    number_field,
    object_field,
    read_records,
    shown,
    text_field,
    tossup_field,
)
from quizsite.items.importers.limits import MAX_MS
from quizsite.items.importers.quizbowl import tossup_item_fields
from quizsite.items.importers.records import existing_import_keys
from quizsite.items.models import Item, Response
from quizsite.items.tossups import TossupText

from .records import agents_get_or_create

# "Fri Apr 27 2018 14:12:05 GMT-0700 (PDT)"; the zone name in brackets is optional.
_DATE = re.compile(r"^\w{3} (\w{3} \d{1,2} \d{4} \d{2}:\d{2}:\d{2}) GMT([+-]\d{2})(\d{2})")
RULINGS = {True: (Response.Verdict.ACCEPT, True), False: (Response.Verdict.REJECT, False), "prompt": (Response.Verdict.PROMPT, None)}


def parse_date(value: str) -> datetime | None:
    match = _DATE.match(value.strip())
    if not match:
        return None
    stamp, hours, minutes = match.groups()
    sign = -1 if hours.startswith("-") else 1
    try:  # the pattern admits "Foo 99 2018 25:61:00" and offsets past a day: those are not dates either
        offset = timezone(timedelta(hours=int(hours), minutes=sign * int(minutes)))
        return datetime.strptime(stamp, "%b %d %Y %H:%M:%S").replace(tzinfo=offset)
    except ValueError:
        return None


def _ruling(path: Path, lineno: int, value: Any) -> bool | str:
    if isinstance(value, bool) or value == "prompt":
        return value
    if type(value) is int and value in (0, 1):  # 0/1 for false/true, as some exports write them
        return bool(value)
    raise ImportError_(str(path), lineno, f"object.ruling must be true, false or \"prompt\", got {shown(value)}")


def import_protobowl_log(*, path: Path, set_slug: str, set_name: str = "") -> ImportReport:
    path = Path(path)
    tossups: dict[str, dict[str, Any]] = {}
    players: dict[str, str] = {}
    buzzes = []
    skipped = 0
    for lineno, line in read_records(path):
        if line.get("action") != "buzz":
            skipped += 1
            continue
        if not isinstance(line.get("object"), dict):
            raise ImportError_(str(path), lineno, "missing object")
        obj = line["object"]
        qid = id_field(path, lineno, obj, "qid", label="object.qid")
        question = tossup_field(path, lineno, obj, "question_text", label="object.question_text")
        answer = answer_field(path, lineno, obj, "answer", label="object.answer")
        user = object_field(path, lineno, obj, "user", label="object.user")
        user_key = id_field(path, lineno, user, "id", label="object.user.id")
        user_name = text_field(path, lineno, user, "name", required=False, label="object.user.name")
        ruling = _ruling(path, lineno, obj.get("ruling"))
        elapsed = number_field(path, lineno, obj, "time_elapsed", minimum=0, maximum=MAX_MS, label="object.time_elapsed")
        total = number_field(path, lineno, obj, "time_remaining", minimum=0, maximum=MAX_MS, label="object.time_remaining")
        guess = text_field(path, lineno, obj, "guess", required=False, label="object.guess")
        room = text_field(path, lineno, obj, "room", required=False, label="object.room")
        info = object_field(path, lineno, obj, "question_info", required=False, label="object.question_info")
        info_text = {
            key: text_field(path, lineno, info, key, required=False, label=f"object.question_info.{key}")
            for key in ("category", "subcategory")
        }
        difficulty = info.get("difficulty")
        if isinstance(difficulty, int) and not isinstance(difficulty, bool):
            difficulty = str(difficulty)
        info_text["difficulty"] = as_text(path, lineno, difficulty, "object.question_info.difficulty", required=False)
        rate = obj.get("playback_rate")
        if rate is not None:
            rate = number_field(path, lineno, obj, "playback_rate", minimum=0, maximum=1000, label="object.playback_rate")
        raw_date = text_field(path, lineno, line, "date", required=False)
        date = parse_date(raw_date)
        if date is None:
            raise ImportError_(str(path), lineno, f"date not in the Protobowl form 'Fri Apr 27 2018 14:12:05 GMT-0700': {raw_date[:80]!r}")
        if qid not in tossups:
            if len(question.split()) < 2:
                raise ImportError_(str(path), lineno, "question_text has fewer than two words")
            tossups[qid] = {"text": question, "answer": answer, "info": info, "info_text": info_text}
        user_id = f"protobowl:{user_key}"[:200]
        players.setdefault(user_id, (user_name or user_key)[:200])
        buzzes.append(
            {
                "qid": qid, "user": user_id, "guess": guess, "ruling": ruling, "date": date,
                "elapsed": elapsed, "fraction": min(max(elapsed / total, 0.0), 1.0) if total > 0 else 1.0,
                "room": room[:100], "playback_rate": rate,
                # The raw values, as earlier versions keyed them, so re-importing an old log adds nothing.
                "key": f"protobowl-log:{line.get('date')}|{user['id']}|{qid}|{elapsed}|{obj.get('guess')}",
            }
        )

    report = ImportReport(item_set=set_slug)
    with transaction.atomic():
        item_set = item_set_get_or_create(slug=set_slug, name=set_name, source=path.name)
        existing = set(Item.objects.filter(item_set=item_set).values_list("external_id", flat=True))
        new_items = []
        for qid, t in tossups.items():
            if qid in existing:
                report.existing += 1
                continue
            info_text = t["info_text"]
            new_items.append(
                Item(
                    item_set=item_set, external_id=qid, kind=Item.Kind.TOSSUP, text=t["text"], answer=t["answer"],
                    category=info_text["category"][:100], subcategory=info_text["subcategory"][:100],
                    difficulty=info_text["difficulty"][:50],
                    data={**tossup_item_fields(t["text"]), "question_info": t["info"]},
                )
            )
        Item.objects.bulk_create(new_items, batch_size=500)
        report.created = len(new_items)
        agents, report.extra["new agents"] = agents_get_or_create(kind=Agent.Kind.HUMAN, names=players, meta={"source": "protobowl"})

        items = {i.external_id: i for i in Item.objects.filter(item_set=item_set, external_id__in=list(tossups))}
        texts = {qid: TossupText(i.data["words"], i.data["clue_ends"], i.data.get("power_index")) for qid, i in items.items()}
        done = existing_import_keys(item_set, "protobowl-log:")
        seen: set[str] = set()
        new_rows, dates = [], []
        for b in buzzes:
            if b["key"] in done or b["key"] in seen:
                continue
            seen.add(b["key"])
            text = texts[b["qid"]]
            word_index = min(text.n_words, max(1, round(b["fraction"] * text.n_words)))
            verdict, correct = RULINGS[b["ruling"]]
            new_rows.append(
                Response(
                    agent=agents[b["user"]], item=items[b["qid"]], source=Response.Source.IMPORT, given=b["guess"],
                    verdict=verdict, correct=correct, word_index=word_index, clue_index=text.clue_of(word_index),
                    n_words=text.n_words, elapsed_ms=int(b["elapsed"]), room=b["room"],
                    meta={"import_key": b["key"], "fraction": round(b["fraction"], 4), "playback_rate": b["playback_rate"]},
                )
            )
            dates.append(b["date"])
        Response.objects.bulk_create(new_rows, batch_size=1000)
        # created_at is when the buzz happened, not the import (date-range filters rely on it); auto_now_add
        # overrides it on insert, so it is set in a second pass.
        for row, date in zip(new_rows, dates, strict=True):
            row.created_at = date
        Response.objects.bulk_update(new_rows, ["created_at"], batch_size=1000)
        report.extra["new responses"] = len(new_rows)
        report.extra["lines skipped (not a buzz)"] = skipped
    return report
