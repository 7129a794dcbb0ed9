"""Small item sets for every annotation task, written here as files and loaded through the importers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ARCHAEOLOGY = [
    {
        "id": f"a{i}",
        "text": f"Passage {i}: the answer to question {i} is explained here at some length.",
        "true_question": f"What is the answer to question {i}?",
        "other_question_1": f"Who wrote passage {i}?",
        "other_question_2": f"When was passage {i} written?",
    }
    for i in range(1, 5)
]
GHIGLIOTTINA = [
    {"id": "g1", "w1": "pane", "w2": "gioco", "w3": "testa", "w4": "osso", "w5": "zoccolo", "solution": "duro",
     "choices": ["pila", "duro", "mano", "rete"], "label": 1},
    {"id": "g2", "w1": "verde", "w2": "nave", "w3": "gioco", "w4": "pomodoro", "w5": "collo", "solution": "bottiglia",
     "choices": ["bottiglia", "barca", "salsa", "prato"], "label": 0},
    {"id": "g3", "w1": "dita", "w2": "corso", "w3": "basso", "w4": "spaghetti", "w5": "cassa", "solution": "chitarra",
     "choices": ["piano", "violino", "chitarra", "tamburo"], "label": 2},
    {"id": "g4", "w1": "remo", "w2": "fornaio", "w3": "altare", "w4": "fico", "w5": "elica", "solution": "pala",
     "choices": ["pane", "pala", "vela", "pale"], "label": 1},
]


def _cands(answers: list[str], others: list[str]) -> list[dict]:
    return [{"text": t, "is_answer": True} for t in answers] + [{"text": t, "is_answer": False} for t in others]


ROMQA = [
    {"id": "r1", "cluster_id": "c1", "question": "Rivers in Germany?", "candidates": _cands(["Rhine", "Elbe"], ["Loire"])},
    {"id": "r2", "cluster_id": "c1", "question": "Rivers in Germany and Austria?", "candidates": _cands(["Inn"], ["Elbe", "Po"])},
    {"id": "r3", "cluster_id": "c2", "question": "Capitals on the Danube?", "candidates": _cands(["Vienna", "Budapest"], ["Prague"])},
    {"id": "r4", "cluster_id": "c2", "question": "Capitals on the Danube, not Vienna?", "candidates": _cands(["Budapest"], ["Vienna"])},
]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def sets(db, tmp_path):  # type: ignore[no-untyped-def]
    from quizsite.items.importers import items_import
    from quizsite.items.models import ItemSet

    items_import(fmt="archaeology", path=_write(tmp_path / "a.jsonl", ARCHAEOLOGY), set_slug="arch")
    items_import(fmt="ghigliottina", path=_write(tmp_path / "g.jsonl", GHIGLIOTTINA), set_slug="ghig")
    items_import(fmt="romqa", path=_write(tmp_path / "r.jsonl", ROMQA), set_slug="romqa")
    return {s.slug: s for s in ItemSet.objects.all()}


@pytest.fixture
def make_campaign(sets):  # type: ignore[no-untyped-def]
    from quizsite.annotate.services import campaign_create

    def make(task: str, set_slug: str, slug: str = "c", **kw):  # type: ignore[no-untyped-def]
        kw.setdefault("completion_code", "CODE-123")
        return campaign_create(slug=slug, item_set=sets[set_slug], task=task, **kw)

    return make
