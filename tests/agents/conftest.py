"""Item banks for the agent tests, built from the demo content (never from ../shared/data).

Every demo tossup has its own answer, so on the demo set alone a guesser that holds out the asked tossup
can never be right: `halves` gives a bank where answers repeat without any question being seen twice.
Each demo tossup is cut in two tossups with the same answer line: its first three clues ("halves-early")
and its last two ("halves-late"); an agent answering a late half can learn the answer only from the
early half, which is another question.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def demo(db):
    from quizsite.items.demo import demo_load

    demo_load()


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def halves(demo, tmp_path):
    from quizsite.items.importers import items_import
    from quizsite.items.models import Item

    early, late = [], []
    for item in Item.objects.filter(item_set__slug="demo-tossups").order_by("id"):
        words, ends = item.data["words"], item.data["clue_ends"]
        base = {"answer": item.answer, "category": item.category}
        early.append({**base, "id": item.external_id + "-early", "question": " ".join(words[: ends[2]])})
        late.append({**base, "id": item.external_id + "-late", "question": " ".join(words[ends[2] :])})
    items_import(fmt="quizbowl", path=_write(tmp_path / "early.jsonl", early), set_slug="halves-early")
    items_import(fmt="quizbowl", path=_write(tmp_path / "late.jsonl", late), set_slug="halves-late")
    return ["halves-early", "halves-late"]
