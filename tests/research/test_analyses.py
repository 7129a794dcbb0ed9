"""The paper's analysis figures of a fit (CAIMIRA Fig. 5, 6, 9, 10), checked on small cases computed by hand."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from irt.interpret import balanced_weights, cluster_difficulty, relevance_clusters, relevance_regressions
from quizsite.agents.models import Agent
from quizsite.research import analyses
from quizsite.research.artifacts import artifact_pack
from quizsite.research.models import FitAgent, FitItem, FitRun

# --- pure functions ---------------------------------------------------------------------------------------


def test_cluster_difficulty_by_hand():
    r = [[0.8, 0.2], [0.5, 0.5], [0.1, 0.9]]
    d = [[1.0, -1.0], [3.0, 1.0], [2.0, 0.0]]
    t = cluster_difficulty(np.array(r), np.array(d), np.array([0, 0, 1]))
    # C1 dim 1: (0.8*1 + 0.5*3) / (0.8 + 0.5); dim 2: (0.2*-1 + 0.5*1) / (0.2 + 0.5); Overall: mean(0.8-0.2, 1.5+0.5)
    assert t.weighted[0] == pytest.approx([2.3 / 1.3, 0.3 / 0.7])
    assert t.overall[0] == pytest.approx(1.3)
    assert t.weighted[1] == pytest.approx([2.0, 0.0]) and t.overall[1] == pytest.approx(0.2)
    assert t.sizes.tolist() == [2, 1]
    assert t.as_records()[1]["weighted_difficulty"] == pytest.approx([2.0, 0.0])


def test_relevance_clusters_group_by_relevance_largest_first():
    r = np.array([[0.1, 0.9], [0.9, 0.1], [0.85, 0.15], [0.95, 0.05], [0.15, 0.85]])
    assert relevance_clusters(r, n_clusters=2).tolist() == [1, 0, 0, 0, 1]


def test_balanced_weights():
    w = balanced_weights(np.array([1, 0, 0, 0]))
    assert w.tolist() == pytest.approx([2.0, 2 / 3, 2 / 3, 2 / 3]) and w.sum() == pytest.approx(4)


def test_regression_matches_weighted_newton_and_wald_by_hand():
    """Class-balanced logistic regression solved by Newton's method in numpy, Wald p-values from the
    inverse weighted Fisher information: the coefficients, standard errors and p-values must agree."""
    rng = np.random.default_rng(3)
    n = 200
    x = rng.normal(size=(n, 2))
    y_latent = 1.5 * x[:, 0] - 0.5 + rng.logistic(size=n)
    r0 = np.where(y_latent > 0.8, 0.9, 0.3)
    relevance = np.column_stack([r0, 1 - r0])
    got = relevance_regressions(relevance, x, ["a", "b"])[0]
    y = (r0 > 0.6).astype(float)
    w = np.where(y == 1, n / (2 * y.sum()), n / (2 * (n - y.sum())))
    design = np.column_stack([np.ones(n), x])
    beta = np.zeros(3)
    for _ in range(50):
        p = 1 / (1 + np.exp(-design @ beta))
        info = design.T @ (design * (w * p * (1 - p))[:, None])
        beta = beta + np.linalg.solve(info, design.T @ (w * (y - p)))
    p = 1 / (1 + np.exp(-design @ beta))
    se = np.sqrt(np.diag(np.linalg.inv(design.T @ (design * (w * p * (1 - p))[:, None]))))
    pv = [math.erfc(abs(b / s) / math.sqrt(2)) for b, s in zip(beta, se, strict=True)]
    assert [got.coefficients[k] for k in ("intercept", "a", "b")] == pytest.approx(beta.tolist(), rel=1e-6)
    assert [got.std_errors[k] for k in ("intercept", "a", "b")] == pytest.approx(se.tolist(), rel=1e-6)
    assert [got.p_values[k] for k in ("intercept", "a", "b")] == pytest.approx(pv, rel=1e-5, abs=1e-12)
    assert got.n_relevant == int(y.sum()) and got.coefficients["a"] > 0
    assert (
        relevance_regressions(np.array([[0.9, 0.1]] * 4), x[:4], ["a", "b"])[0].note
        == "every item is relevant"
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("For ten points, name this Baroque composer.", "person"),
        ("It lies on the Seine. Name this capital of France.", "place"),
        ("These poems include Howl. Name this collection.", "work"),
        ("This element has atomic number 6.", "other"),
    ],
)
def test_answer_type(text, kind):
    assert analyses.answer_type(text) == kind


# --- a hand-made fit --------------------------------------------------------------------------------------

ITEMS = {  # key: (relevance, difficulty)
    "s/a1": ([0.9, 0.1], [1.0, 0.0]),
    "s/a2": ([0.8, 0.2], [2.0, 1.0]),
    "s/b1": ([0.1, 0.9], [0.0, -1.0]),
    "s/b2": ([0.3, 0.7], [4.0, -2.0]),
}
RULINGS = {  # agent key: {item key: ruling}
    "h1": {"s/a1": 1, "s/a2": 0, "s/b1": 1, "s/b2": 1},
    "bot-i": {"s/a1": 1, "s/a2": 1, "s/b1": 0},
    "bot-i2": {"s/b1": 1, "s/b2": 0},
    "bot-r": {"s/a1": 0},
    "bot-n": {"s/b2": 1},
}
SUBTYPES = {"bot-i": "instruct", "bot-i2": "instruct", "bot-r": "retriever", "bot-n": ""}


@pytest.fixture
def hand_fit(db, tmp_path):
    empty = tmp_path / "fit"
    empty.mkdir()
    responses = [
        {"query_id": q, "agent_id": a, "ruling": v} for a, rs in RULINGS.items() for q, v in rs.items()
    ]
    blob = artifact_pack(
        fit_dir=empty,
        queries=[{"id": k, "text": "Name this composer."} for k in ITEMS],
        agents=[],
        responses=responses,
    )
    run = FitRun.objects.create(
        status=FitRun.Status.SUCCEEDED,
        settings={"model": "caimira", "dims": 2, "seed": 0},
        metrics={"dims": 2},
        artifact=blob,
        finished_at=timezone.now(),
    )
    for key, (r, d) in ITEMS.items():
        FitItem.objects.create(
            fit=run, key=key, relevance=r, difficulty=d, effective_difficulty=(np.array(r) * d).tolist()
        )
    for key in RULINGS:
        kind = "human" if key.startswith("h") else "ai"
        agent = Agent.objects.create(kind=kind, name=key, subtype=SUBTYPES.get(key, ""))
        skill = [1.0, 0.0] if key == "bot-i" else [3.0, 1.0] if key == "bot-i2" else [0.5, 0.5]
        FitAgent.objects.create(fit=run, key=key, agent=agent, kind=kind, name=key, skill=skill)
    analyses._clusters.cache_clear()
    return run


def test_fig10_on_a_hand_made_fit(hand_fit):
    table = analyses.cluster_difficulty_table(hand_fit, n_clusters=2)
    c1, c2 = table[
        "clusters"
    ]  # the a-items load on dim 1, the b-items on dim 2; equal sizes: first item first
    assert (c1["size"], c2["size"]) == (2, 2)
    assert c1["weighted_difficulty"] == pytest.approx([2.5 / 1.7, 0.2 / 0.3])
    assert c1["overall"] == pytest.approx((0.9 + 1.8) / 2)
    assert c2["weighted_difficulty"] == pytest.approx([1.2 / 0.4, -2.3 / 1.6])
    assert c2["overall"] == pytest.approx((-0.9 - 0.2) / 2)


def test_fig9_and_fig6_by_agent_group(hand_fit):
    acc = analyses.group_cluster_accuracy(hand_fit, n_clusters=2)
    rows = {g["group"]: g for g in acc["groups"]}
    assert [g["group"] for g in acc["groups"]] == ["human", "retriever", "instruct", "ai"]
    assert rows["human"]["accuracy"] == pytest.approx([0.5, 1.0])
    assert rows["instruct"]["accuracy"] == pytest.approx(
        [1.0, 0.25]
    )  # bot-i 2/2 on C1; C2 mean(bot-i 0/1, bot-i2 1/2)
    assert rows["instruct"]["n_agents"] == 2 and rows["instruct"]["n_agents_by_cluster"] == [1, 2]
    assert rows["retriever"]["accuracy"] == [0.0, None]
    assert rows["ai"]["accuracy"] == [None, 1.0]
    skills = {g["group"]: g for g in analyses.group_skills(hand_fit)}
    assert skills["instruct"]["n"] == 2 and skills["instruct"]["mean"] == pytest.approx([2.0, 0.5])


def test_figures_on_the_page_and_exports(client, staff, django_user_model, hand_fit):
    url = reverse("research:fit_detail", args=[hand_fit.pk])
    client.force_login(django_user_model.objects.create_user("player"))
    assert client.get(url).status_code == 403
    assert (
        client.get(reverse("research:export_fit", args=[hand_fit.pk, "figures", "json"])).status_code == 403
    )
    client.force_login(staff)
    page = client.get(url)
    assert page.status_code == 200
    for anchor in (
        b'id="fig10"',
        b'id="fig5"',
        b'id="fig9"',
        b'id="fig6"',
        b"Overall",
        b"Instruction-tuned LLM",
    ):
        assert anchor in page.content
    for name in ("cluster-difficulty", "group-clusters", "group-skills"):
        svg = client.get(reverse("research:fit_plot", args=[hand_fit.pk, name]))
        assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    data = json.loads(
        b"".join(
            client.get(
                reverse("research:export_fit", args=[hand_fit.pk, "figures", "json"])
            ).streaming_content
        )
    )
    # the page's default is 12 clusters; four items make at most four, one item each: Overall = r_j . d_j
    overall = sorted(c["overall"] for c in data["cluster_difficulty"]["clusters"])
    assert overall == pytest.approx(sorted([0.9, 1.8, -0.9, -0.2]))
    body = b"".join(
        client.get(
            reverse("research:export_fit", args=[hand_fit.pk, "cluster_difficulty", "csv"])
        ).streaming_content
    )
    rows = list(csv.reader(io.StringIO(body.decode())))
    assert rows[0] == [
        "cluster",
        "size",
        "weighted_difficulty dim 1",
        "weighted_difficulty dim 2",
        "overall",
        "mean_relevance dim 1",
        "mean_relevance dim 2",
    ]
    assert len(rows) == 5
    assert client.get(reverse("research:export_fit", args=[hand_fit.pk, "figures", "csv"])).status_code == 404


def test_export_command_prints_figures_json(hand_fit, capsys):
    from django.core.management import call_command

    call_command("export", "figures", "--fit", str(hand_fit.pk), "--out", "-", "--format", "json")
    data = json.loads(capsys.readouterr().out)
    assert data["fit"] == hand_fit.pk and len(data["cluster_difficulty"]["clusters"]) == 4


def test_api_figures_and_agent_subtype(staff, django_user_model, hand_fit):
    from .test_api import token_client

    api = token_client(staff)
    data = api.get(f"/api/fits/{hand_fit.pk}/figures/").json()
    groups = {g["group"]: g for g in data["group_cluster_accuracy"]["groups"]}
    assert groups["instruct"]["n_agents"] == 2
    assert sorted(c["overall"] for c in data["cluster_difficulty"]["clusters"]) == pytest.approx(sorted([0.9, 1.8, -0.9, -0.2]))
    agents = {a["name"]: a for a in api.get("/api/agents/").json()["results"]}
    assert agents["bot-r"]["subtype"] == "retriever"
    assert token_client(django_user_model.objects.create_user("api-player")).get(f"/api/fits/{hand_fit.pk}/figures/").status_code == 403
    queued = FitRun.objects.create(settings={"model": "caimira"})
    assert api.get(f"/api/fits/{queued.pk}/figures/").status_code == 404
