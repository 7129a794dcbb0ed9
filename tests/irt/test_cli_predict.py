"""The command line round trip and cold-start prediction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irt
from irt import FitConfig, FitData, fit, load_fit, save_fit
from irt.cli import main
from irt.synthetic import make_synthetic
from tests.irt.irt_testutil import write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def _fit_args(files, out, *extra):
    return ["fit", "--queries", str(files["queries"]), "--agents", str(files["agents"]),
            "--responses", str(files["responses"]), "--out", str(out), "--no-progress", *extra]


def test_cli_round_trip(files, tmp_path, small_set):
    out = tmp_path / "fit"
    assert main(_fit_args(files, out, "--embeddings", str(files["embeddings"]), "--dims", "3", "--seed", "0")) == 0
    m = json.loads((out / "metrics.json").read_text())
    for key in ("train", "val", "seconds", "n_responses", "n_items", "n_agents", "dims", "model"):
        assert key in m
    assert set(m["train"]) >= {"bce", "accuracy"} and set(m["val"]) >= {"bce", "accuracy", "auc"}
    assert m["model"] == "caimira" and m["dims"] == 3 and m["n_items"] == 300 and m["n_agents"] == 60
    agents = [json.loads(x) for x in (out / "agents.jsonl").read_text().splitlines()]
    items = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
    assert len(agents) == 60 and len(agents[0]["skill"]) == 3
    assert len(items) == 300
    assert abs(sum(items[0]["relevance"]) - 1) < 1e-5
    assert np.allclose(items[0]["effective_difficulty"], np.multiply(items[0]["relevance"], items[0]["difficulty"]))

    # predict: a known pair, and a query that the fit never saw (given by its embedding)
    emb_new = np.asarray(small_set.data.embeddings[:2]) * 0.5 + 0.1
    irt.save_embeddings(tmp_path / "new.npz", ["new_a", "new_b"], emb_new)
    write_jsonl(tmp_path / "newq.jsonl", [{"id": "new_a", "text": "a"}, {"id": "new_b", "text": "b"}])
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [
        {"query_id": "q0", "agent_id": "a0"}, {"query_id": "new_a", "agent_id": "a1"}, {"query_id": "new_b", "agent_id": "a2"},
    ])
    rc = main(["predict", "--fit", str(out), "--queries", str(tmp_path / "newq.jsonl"), "--pairs", str(pairs),
               "--out", str(tmp_path / "pred.jsonl"), "--embeddings", str(tmp_path / "new.npz")])
    assert rc == 0
    rows = [json.loads(x) for x in (tmp_path / "pred.jsonl").read_text().splitlines()]
    assert [set(r) for r in rows] == [{"query_id", "agent_id", "p"}] * 3
    assert all(0 < r["p"] < 1 for r in rows)
    fitted = load_fit(out)
    assert rows[0]["p"] == pytest.approx(float(fitted.predict_proba(["q0"], ["a0"])[0]), abs=1e-6)
    # the new query is scored from its embedding with the saved weights and bank mean
    expect = fitted.predict_proba(["new_a"], ["a1"], {"new_a": emb_new[0]})[0]
    assert rows[1]["p"] == pytest.approx(float(expect), abs=1e-6)
    # ... which is sigmoid(r . (s - d)) with the raw-space weights and the kept difficulty mean
    W = {k: v.numpy() for k, v in fitted.model.weights_in_embedding_space().items()}
    z = emb_new[0] @ W["W_R"].T + W["b_R"]
    r = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    d = emb_new[0] @ W["W_D"].T - W["d_mean"]
    s = fitted.skills[1]
    assert rows[1]["p"] == pytest.approx(float(1 / (1 + np.exp(-(r * (s - d)).sum()))), abs=1e-5)
    with pytest.raises(irt.IRTDataError, match="this fit reads 24-d embeddings"):
        fitted.predict_proba(["new_a"], ["a1"], {"new_a": np.ones(5)})


def test_cli_baselines_and_explicit_validation(files, tmp_path):
    lines = files["responses"].read_text().splitlines()
    val = tmp_path / "val.jsonl"
    val.write_text("\n".join(lines[::10]) + "\n")
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(x for i, x in enumerate(lines) if i % 10) + "\n")
    for model in ("1pl", "2pl", "mirt"):
        out = tmp_path / model
        args = _fit_args({**files, "responses": train}, out, "--model", model, "--val-responses", str(val), "--lr", "0.05")
        assert main(args) == 0
        m = json.loads((out / "metrics.json").read_text())
        assert m["model"] == model and m["n_val"] == len(lines[::10])
        assert m["val"]["accuracy"] > m["baseline"]["majority_class"]["accuracy"]


def test_save_fit_replaces_only_when_complete(small_set, tmp_path):
    res = fit(small_set.data, FitConfig(model="1pl", max_epochs=5))
    out = save_fit(res, tmp_path / "fit")
    before = (out / "metrics.json").read_text()

    class Broken:
        def __getattr__(self, name):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        save_fit(Broken(), out)  # type: ignore[arg-type]
    assert (out / "metrics.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit"]


def test_cold_start_items_without_responses():
    """Items with no responses at all are predicted from their embedding alone."""
    s = make_synthetic(n_agents=60, n_items=400, embed_dim=16, dims=2, density=0.9, seed=4)
    d = s.data
    cold = np.arange(400) >= 360  # the last 40 items: no responses in the fit
    keep = ~cold[d.responses.item_idx]
    warm = FitData(
        items=d.items[:360], agents=d.agents, responses=d.responses.subset(keep), embeddings=d.embeddings[:360]
    )
    res = fit(warm, FitConfig(dims=2))
    assert len(res.item_ids) == 360
    new_ids = [q["id"] for q in d.items[360:]]
    A, Q = np.meshgrid(np.arange(60), np.arange(360, 400), indexing="ij")
    p = res.predict_proba(
        [d.item_ids[q] for q in Q.ravel()],
        [d.agent_ids[a] for a in A.ravel()],
        dict(zip(new_ids, d.embeddings[360:], strict=True)),
    )
    assert np.corrcoef(p, s.p_true[A.ravel(), Q.ravel()])[0, 1] > 0.85


def test_predict_api_embeds_new_queries_with_the_fits_embedder(small_set, fake_encoder, tmp_path):
    q = [{"id": q["id"], "text": f"question {i}", "answer": f"ans {i % 7}"} for i, q in enumerate(small_set.data.items)]
    data = irt.with_embeddings(
        FitData(q, small_set.data.agents, small_set.data.responses), model="fake", encoder=fake_encoder, cache=tmp_path
    )
    assert data.embedder == {"model": "fake", "template": "default"}
    res = fit(data, FitConfig(dims=2, max_epochs=20))
    n_before = len(fake_encoder.seen)
    p = irt.predict(res, [("brand_new", "a3")], queries=[{"id": "brand_new", "text": "new text", "answer": "x"}],
                    encoder=fake_encoder, cache=tmp_path)
    assert 0 < p[0] < 1
    assert fake_encoder.seen[n_before:] == ["new text\nAnswer: x"]
    with pytest.raises(irt.IRTDataError, match="neither in the fit nor in the queries"):
        irt.predict(res, [("other", "a3")], encoder=fake_encoder, cache=tmp_path)


def test_baseline_predicts_new_item_as_the_mean_item(small_set):
    res = fit(small_set.data, FitConfig(model="1pl", max_epochs=50))
    skill = res.skills[3]
    assert res.predict_proba(["unseen"], ["a3"])[0] == pytest.approx(1 / (1 + np.exp(-skill)), abs=1e-6)


def test_python_m_irt_entry_point(files, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "fit"
    proc = subprocess.run(
        [sys.executable, "-m", "irt", *_fit_args(files, out, "--model", "1pl", "--epochs", "3")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"model": "1pl"' in proc.stderr and (out / "model.pt").is_file()
    bad = subprocess.run([sys.executable, "-m", "irt", "fit", "--queries", str(tmp_path / "missing.jsonl"),
                          "--agents", "x", "--responses", "y", "--out", str(tmp_path / "f2"), "--model", "1pl"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "missing.jsonl: no such file" in bad.stderr


def test_cli_l1_form_is_written_with_the_fit(files, tmp_path):
    for form in ("paper", None):
        out = tmp_path / f"fit-{form}"
        extra = ["--l1", form] if form else []
        assert main(_fit_args(files, out, "--model", "1pl", "--epochs", "3", *extra)) == 0
        want = form or "mean"
        m = json.loads((out / "metrics.json").read_text())
        assert m["l1"] == want and m["config"]["l1"] == want
        assert json.loads((out / "config.json").read_text())["fit_config"]["l1"] == want
        assert load_fit(out).config.l1 == want
    with pytest.raises(SystemExit):
        main(_fit_args(files, tmp_path / "bad", "--l1", "sum"))


def test_cli_redraws_reach_the_fit(files, tmp_path):
    for extra, want in ((["--redraws", "0"], 0), ([], 2)):
        out = tmp_path / f"fit-{want}"
        assert main(_fit_args(files, out, "--dims", "2", "--epochs", "3", *extra)) == 0
        assert json.loads((out / "metrics.json").read_text())["config"]["redraws"] == want
