"""Embedding input: question + answer + the answer's summary, the same text on the CLI and the Django path."""

from __future__ import annotations

import json

import numpy as np
import pytest

import irt
import irt.embed
from irt.cli import main as irt_main
from quizsite.agents.models import Agent
from quizsite.items.importers import items_import
from quizsite.items.models import Item, Response
from quizsite.research import exports, fits, services
from quizsite.research.embedding import hashing_encoder
from quizsite.research.fits import FitSpec
from quizsite.research.prepare import DataSpec, item_queries

QUERIES = [
    {"id": "q1_1", "text": "First clue here.", "answer": "Paris", "orig_qid": "q1", "n_clues": 1, "total_clues": 2,
     "summary": "Paris is the capital of France."},
    {"id": "q1_2", "text": "First clue here. Second clue, for ten points.", "answer": "Paris", "orig_qid": "q1",
     "n_clues": 2, "total_clues": 2, "summary": "Paris is the capital of France."},
    {"id": "solo", "text": "A question without clue structure. Name it.", "answer": "Rome", "summary": "Rome is in Italy."},
]

def _release(folder):  # type: ignore[no-untyped-def]
    folder.mkdir(parents=True)
    rows = {
        "queries": QUERIES,
        # four systems on the three queries: the least data a fit needs (research README); the texts are the queries'
        "agents": [{"id": f"gpt{a}", "name": f"GPT {a}", "type": "ai"} for a in range(4)],
        "responses": [{"query_id": q["id"], "agent_id": f"gpt{a}", "ruling": (i + a) % 2}
                      for a in range(4) for i, q in enumerate(QUERIES)],
    }
    for name, records in rows.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder

class Recorder:
    """An encoder that remembers every text it was asked to embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._encode = hashing_encoder(16)

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return self._encode(texts)

def _cli_texts(queries_path, tmp_path, monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    rec = Recorder()
    monkeypatch.setattr(irt.embed, "load_encoder", lambda *a, **k: rec)
    assert irt_main(["embed", "--queries", str(queries_path), "--out", str(tmp_path / "e.npz"), "--no-cache"]) == 0
    return sorted(rec.texts)

def _django_fit_texts(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    rec = Recorder()
    monkeypatch.setattr(fits, "encoder_for", lambda name: rec)
    spec = FitSpec(data=DataSpec(item_sets=["c"]), embedder="hashing-16", max_epochs=5, dims=2)
    run = fits.fit_run_execute(fit_id=services.fitrun_create(spec=spec).pk)
    assert run.status == "succeeded", run.error
    return sorted(rec.texts)

@pytest.mark.django_db
def test_cli_and_django_embed_identical_text_with_the_summary(tmp_path, monkeypatch, research_cache):
    release = _release(tmp_path / "release")
    items_import(fmt="caimira", path=release, set_slug="c")
    django_texts = _django_fit_texts(monkeypatch)
    assert django_texts == _cli_texts(release / "queries.jsonl", tmp_path, monkeypatch)
    assert "First clue here.\nAnswer: Paris\nSummary: Paris is the capital of France." in django_texts
    exports.caimira_export(spec=DataSpec(item_sets=["c"]), directory=tmp_path / "export")
    assert _cli_texts(tmp_path / "export" / "queries.jsonl", tmp_path, monkeypatch) == django_texts

@pytest.mark.django_db
def test_live_tossups_and_rebuilt_tossups_carry_the_summary(tmp_path):
    items_import(fmt="caimira", path=_release(tmp_path / "release"), set_slug="c")
    rebuilt = Item.objects.get(item_set__slug="c", external_id="q1", kind="tossup")
    assert [irt.item_text(q) for q in item_queries(rebuilt)] == [
        irt.item_text({**q, "answer": "Paris"}) for q in QUERIES[:2]
    ]
    path = tmp_path / "qb.jsonl"
    path.write_text(json.dumps({"id": "t", "question": "It is red. It is a planet.", "answer": "Mars",
                                "summary": "Mars is the fourth planet."}) + "\n")
    items_import(fmt="quizbowl", path=path, set_slug="qb")
    tossup = Item.objects.get(item_set__slug="qb")
    Response.objects.create(agent=Agent.objects.create(kind="human", name="p"), item=tossup, source="live",
                            verdict="accept", correct=True, clue_index=1)
    assert [irt.item_text(q) for q in item_queries(tossup)] == [
        "It is red.\nAnswer: Mars\nSummary: Mars is the fourth planet.",
        "It is red. It is a planet.\nAnswer: Mars\nSummary: Mars is the fourth planet.",
    ]
