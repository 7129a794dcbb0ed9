"""Fixtures for the irt tests (no Django, no database)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from irt.data import save_embeddings
from irt.synthetic import SyntheticSet, make_synthetic
from tests.irt.irt_testutil import FakeEncoder, write_jsonl

# The problems here are tiny; one intra-op thread is as fast and does not suffer when the shared
# CPUs are oversubscribed (several worker threads spinning on two busy cores are much slower).
torch.set_num_threads(1)



@pytest.fixture(scope="session")
def small_set() -> SyntheticSet:
    """A small CAIMIRA world: 60 agents, 300 items, 24-d embeddings, m = 3, ~16k responses."""
    return make_synthetic(n_agents=60, n_items=300, embed_dim=24, dims=3, density=0.9, seed=1)


@pytest.fixture()
def files(tmp_path: Path, small_set: SyntheticSet) -> dict[str, Path]:
    """The small world as CAIMIRA files (+ embeddings .npz) in a temporary directory."""
    d = small_set.data
    r = d.responses
    write_jsonl(tmp_path / "queries.jsonl", d.items)
    write_jsonl(tmp_path / "agents.jsonl", d.agents)
    write_jsonl(
        tmp_path / "responses.jsonl",
        (
            {"query_id": d.items[q]["id"], "agent_id": d.agents[a]["id"], "ruling": int(y)}
            for a, q, y in zip(r.agent_idx.tolist(), r.item_idx.tolist(), r.ruling.tolist(), strict=True)
        ),
    )
    assert d.embeddings is not None
    save_embeddings(tmp_path / "E.npz", d.item_ids, d.embeddings)
    return {
        "dir": tmp_path,
        "queries": tmp_path / "queries.jsonl",
        "agents": tmp_path / "agents.jsonl",
        "responses": tmp_path / "responses.jsonl",
        "embeddings": tmp_path / "E.npz",
    }


@pytest.fixture()
def fake_encoder() -> FakeEncoder:
    return FakeEncoder()
