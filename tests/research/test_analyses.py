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


# --- Fig. 5 through the app: item features, the regressions, their CSV and the page ----------------------


def make_fit(tmp_path, rows, *, dims, labels=()):  # type: ignore[no-untyped-def]
    """A succeeded run over hand-made IRT items. Each row: key and relevance, and optionally category (an Item
    is made when the row has one, "" included), item_text, n_clues (Item.data), clue (FitItem.clue) and query
    (the text of the fit's query record; without it the artifact has no record for the key)."""
    from quizsite.items.models import Item, ItemSet

    item_set = ItemSet.objects.get_or_create(slug="hand", defaults={"name": "hand"})[0]
    fit_dir = tmp_path / "fit5"
    fit_dir.mkdir(exist_ok=True)
    queries = [{"id": r["key"], "text": r["query"]} for r in rows if "query" in r]
    run = FitRun.objects.create(
        status=FitRun.Status.SUCCEEDED,
        settings={"model": "caimira", "dims": dims, "seed": 0},
        metrics={"dims": dims},
        dim_labels=list(labels),
        artifact=artifact_pack(fit_dir=fit_dir, queries=queries, agents=[], responses=[]),
        finished_at=timezone.now(),
    )
    for r in rows:
        item = None
        if "category" in r:
            data = {"n_clues": r["n_clues"]} if "n_clues" in r else {}
            item = Item.objects.create(item_set=item_set, external_id=r["key"], kind="tossup",
                                       text=r.get("item_text", ""), category=r["category"], data=data)
        FitItem.objects.create(fit=run, key=r["key"], item=item, clue=r.get("clue"), relevance=r["relevance"],
                               difficulty=[0.0] * dims, effective_difficulty=[0.0] * dims)
    return run


OTHER = "This element has atomic number 6."  # no answer-type word after "this": other
# key: (fields of make_fit, then what item_features must make of them: clues, answer type, words of text)
FEATURE_ROWS = {
    # Science, 10 items (= MIN_CATEGORY_ITEMS): a column of its own; keys sort before the more common History
    "a/00": ({"category": "Science", "clue": 2, "query": "He worked in Leipzig.",
              "item_text": "He worked in Leipzig. For ten points, name this Baroque composer."}, 2, "person", 4),
    "a/01": ({"category": "Science", "n_clues": 4, "item_text": "These poems include Howl. Name this collection."},
             4, "work", 7),  # no query record: the item's text is the text
    **{f"a/{i:02d}": ({"category": "Science", "query": "one two three", "item_text": OTHER}, 1, "other", 3)
       for i in range(2, 10)},
    # History, 12 items: the most common category, the reference level
    "h/00": ({"category": "History", "clue": 3, "n_clues": 5, "query": "", "item_text": OTHER}, 3, "other", 6),
    **{f"h/{i:02d}": ({"category": "History", "query": "one two three", "item_text": OTHER}, 1, "other", 3)
       for i in range(1, 12)},
    # Music, 11 items: a column, before Science's (more items)
    **{f"m/{i:02d}": ({"category": "Music", "query": "one two", "item_text": OTHER}, 1, "other", 2)
       for i in range(11)},
    # Art, 9 items (< MIN_CATEGORY_ITEMS): joins the reference level
    "b/00": ({"category": "Art", "query": "one two", "item_text": "Name this painter."}, 1, "person", 2),
    **{f"b/{i:02d}": ({"category": "Art", "query": "one two", "item_text": OTHER}, 1, "other", 2)
       for i in range(1, 9)},
    # no category, and no item at all: both "(none)", a level of two items, pooled into the reference
    "c/blank": ({"category": "", "n_clues": 2, "query": "one", "item_text": OTHER}, 2, "other", 1),
    "z/none": ({"query": "Name this novel by Tolstoy."}, 1, "work", 5),  # answer type from the query's text
}
CATEGORY = {"a": "Science", "h": "History", "m": "Music", "b": "Art", "c": "", "z": None}


@pytest.fixture
def feature_fit(db, tmp_path):
    rows = [{"key": k, "relevance": [0.5, 0.5], **spec} for k, (spec, *_expected) in FEATURE_ROWS.items()]
    return make_fit(tmp_path, rows, dims=2)


def test_item_features_exact_matrix(feature_fit):
    keys = list(reversed(FEATURE_ROWS))  # the rows follow `keys`, not the key order
    x, names = analyses.item_features(feature_fit, keys)
    # History (12) is the reference; Music (11) then Science (10) by size; Art (9) and "(none)" (2) pooled into
    # the reference; no item is a place, so no place column
    assert names == ["category: Music", "category: Science", "clues", "answer: person", "answer: work",
                     "length (100 words)"]
    expected = []
    for key in keys:
        _spec, clues, kind, words = FEATURE_ROWS[key]
        category = CATEGORY[key[0]]
        expected.append([float(category == "Music"), float(category == "Science"), float(clues),
                         float(kind == "person"), float(kind == "work"), words / 100])
    assert x.shape == (len(keys), 6)
    np.testing.assert_allclose(x, expected)
    assert x[keys.index("a/00")].tolist() == pytest.approx([0, 1, 2, 1, 0, 0.04])
    assert x[keys.index("z/none")].tolist() == pytest.approx([0, 0, 1, 0, 1, 0.05])


def test_item_features_counts_only_the_keys_asked(feature_fit):
    """The levels are counted over the items asked for: with 9 History items Science (10) is the reference
    and no category has a column."""
    keys = [k for k in FEATURE_ROWS if k.startswith("a/")] + [f"h/{i:02d}" for i in range(1, 10)]
    x, names = analyses.item_features(feature_fit, keys)
    assert names == ["clues", "answer: person", "answer: work", "length (100 words)"]
    np.testing.assert_allclose(x[:2], [[2, 1, 0, 0.04], [4, 0, 1, 0.07]])
    assert x.shape == (19, 4)


# A block is six items that differ only in clue count, answer type and length; every level and every outcome
# below is made of whole blocks, so within each category the relevant and the other items have the same mean
# clues, answer types and length. The maximum-likelihood fit then gives those features 0 and each category
# its weighted log odds; with class-balanced weights (w1 on relevant items, w0 on the others, the same in
# every category) the weights cancel in a category's coefficient: log(odds in the category / odds in the
# reference). The intercept is log(w1 / w0 * odds in the reference).
BLOCK = [  # (FitItem.clue, the item's text, words in the query's text)
    (1, "Name this composer.", 10),
    (2, "Name this city.", 25),
    (3, "Name this element.", 40),
    (1, "Name this element.", 15),
    (2, "Name this composer.", 30),
    (3, "Name this city.", 20),
]
BLOCKS = {"History": 8, "Science": 4, "Literature": 1}  # Literature (6 items) joins History, the reference
RELEVANT_BLOCKS = [  # per dimension and category, the blocks with r_jk > 0.6
    {"History": {0, 1}, "Science": {0, 1, 2}, "Literature": set()},  # Science: odds 18/6 against (12+0)/(36+6)
    {"History": {0, 5}, "Science": {3}, "Literature": set()},  # Science: 6/18 against 12/42, about even
    {"History": {0, 1, 2, 3, 4, 5}, "Science": {0}, "Literature": {0}},  # Science: 6/18 against 42/12
    {"History": set(), "Science": set(), "Literature": set()},  # none
]
HIGH, LOW = [0.8, 0.7, 0.9, 0.9], [0.6, 0.1, 0.2, 0.3]  # 0.6 is not over the threshold
DIM_LABELS = ["science-ish", "noise", "history-ish", "unused"]
N_REG = 6 * sum(BLOCKS.values())  # 78


def odds_ratio_log(dim):  # type: ignore[no-untyped-def]
    """log(odds of relevance among Science items / odds among the reference's), counted from the design."""
    def counts(cats):  # type: ignore[no-untyped-def]
        rel = sum(6 * len(RELEVANT_BLOCKS[dim][c]) for c in cats)
        return rel, sum(6 * BLOCKS[c] for c in cats) - rel
    (s1, s0), (r1, r0) = counts(["Science"]), counts(["History", "Literature"])
    return math.log((s1 / s0) / (r1 / r0))


@pytest.fixture
def regression_fit(db, tmp_path):
    rows = []
    for category, n_blocks in BLOCKS.items():
        for b in range(n_blocks):
            for i, (clue, text, words) in enumerate(BLOCK):
                relevance = [HIGH[k] if b in RELEVANT_BLOCKS[k][category] else LOW[k] for k in range(4)]
                rows.append({"key": f"{category}/{b}-{i}", "category": category, "clue": clue, "item_text": text,
                             "query": " ".join(["word"] * words), "relevance": relevance})
    return make_fit(tmp_path, rows, dims=4, labels=DIM_LABELS)


FEATURES = ["category: Science", "clues", "answer: person", "answer: place", "length (100 words)"]


def test_dimension_regressions_find_the_category_that_makes_a_dimension_relevant(regression_fit):
    reg = analyses.dimension_regressions(regression_fit)
    assert reg["features"] == FEATURES and reg["n_items"] == N_REG and reg["threshold"] == 0.6
    dims = reg["dimensions"]
    assert [d["name"] for d in dims] == DIM_LABELS
    assert [d["n_relevant"] for d in dims] == [30, 18, 48, 0]
    terms = [{t["feature"]: t for t in d["terms"]} for d in dims]
    science = [t["category: Science"] for t in terms[:3]]
    assert odds_ratio_log(0) == pytest.approx(math.log(10.5)) and odds_ratio_log(2) == pytest.approx(-math.log(10.5))
    assert [s["coef"] for s in science] == pytest.approx([odds_ratio_log(k) for k in range(3)], abs=1e-6)
    assert science[0]["coef"] > 0 and science[0]["p_value"] < 0.05  # Science makes dimension 1 relevant
    assert science[1]["p_value"] > 0.5  # not dimension 2: log(7/6), far from significant
    assert science[2]["coef"] < 0 and science[2]["p_value"] < 0.05  # and keeps items off dimension 3
    # w1 / w0 = (n / 2 n1) / (n / 2 n0) = n0 / n1
    assert terms[0]["intercept"]["coef"] == pytest.approx(math.log(48 / 30 * 12 / 42), abs=1e-6)
    for k in range(3):
        for name in FEATURES[1:]:  # the same in relevant and other items of every category: no effect
            assert terms[k][name]["coef"] == pytest.approx(0, abs=1e-6), (k, name)
    assert dims[3]["terms"] == [] and dims[3]["note"] == "no item is relevant"


def csv_rows(client, run, what):  # type: ignore[no-untyped-def]
    response = client.get(reverse("research:export_fit", args=[run.pk, what, "csv"]))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_regressions_csv(client, staff, regression_fit):
    client.force_login(staff)
    response = client.get(reverse("research:export_fit", args=[regression_fit.pk, "regressions", "csv"]))
    header = next(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert header == ["dimension", "name", "n_items", "n_relevant", "feature", "coef", "std_err", "p_value", "note"]
    rows = csv_rows(client, regression_fit, "regressions")
    assert len(rows) == 3 * (1 + len(FEATURES)) + 1  # a row per term of each fitted dimension, one for the empty one
    by = {(r["dimension"], r["feature"]): r for r in rows}
    assert [r["feature"] for r in rows if r["dimension"] == "1"] == ["intercept", *FEATURES]
    science = by[("1", "category: Science")]
    assert (science["name"], science["n_items"], science["n_relevant"], science["note"]) == ("science-ish", "78", "30", "")
    assert float(science["coef"]) == pytest.approx(math.log(10.5), abs=1e-6) and float(science["p_value"]) < 0.05
    assert float(by[("2", "category: Science")]["p_value"]) > 0.5
    assert float(by[("3", "category: Science")]["coef"]) == pytest.approx(-math.log(10.5), abs=1e-6)
    assert float(by[("1", "clues")]["coef"]) == pytest.approx(0, abs=1e-6)
    empty = by[("4", "")]
    assert (empty["name"], empty["n_relevant"], empty["coef"], empty["p_value"], empty["note"]) == (
        "unused", "0", "", "", "no item is relevant")


def test_group_accuracy_csv(client, staff, hand_fit):
    """The page's 12 clusters on the four hand-made items: one item each, numbered in key order (equal sizes,
    first item first): C1 s/a1, C2 s/a2, C3 s/b1, C4 s/b2. A cell is the mean over the group's agents of each
    agent's accuracy on the cluster, blank where none of them answered (RULINGS)."""
    client.force_login(staff)
    rows = csv_rows(client, hand_fit, "group_accuracy")
    assert list(rows[0]) == ["group", "label", "n_agents", "cluster", "cluster_size", "accuracy", "n_agents_in_cluster"]
    got = [(r["group"], r["label"], r["n_agents"], r["cluster"], r["cluster_size"],
            None if r["accuracy"] == "" else float(r["accuracy"]), r["n_agents_in_cluster"]) for r in rows]
    expected = {  # group: (label, agents, accuracy and agents answering per cluster)
        "human": ("Humans", 1, [(1.0, 1), (0.0, 1), (1.0, 1), (1.0, 1)]),  # h1
        "retriever": ("Retriever", 1, [(0.0, 1), (None, 0), (None, 0), (None, 0)]),  # bot-r: s/a1 wrong
        # bot-i: a1 right, a2 right, b1 wrong; bot-i2: b1 right, b2 wrong
        "instruct": ("Instruction-tuned LLM", 2, [(1.0, 1), (1.0, 1), (0.5, 2), (0.0, 1)]),
        "ai": ("AI (no sub-type)", 1, [(None, 0), (None, 0), (None, 0), (1.0, 1)]),  # bot-n: b2 right
    }
    assert got == [(g, label, str(n), str(c + 1), "1", acc, str(k))
                   for g, (label, n, cells) in expected.items() for c, (acc, k) in enumerate(cells)]


@pytest.mark.parametrize("what", ["regressions", "group_accuracy"])
def test_figure_csvs_are_for_researchers_only(client, django_user_model, hand_fit, what):
    url = reverse("research:export_fit", args=[hand_fit.pk, what, "csv"])
    response = client.get(url)
    assert response.status_code == 302 and "login" in response["Location"]
    client.force_login(django_user_model.objects.create_user("player", is_staff=True))  # staff alone opens nothing
    assert client.get(url).status_code == 403


def test_fig5_table_on_the_page(client, staff, regression_fit):
    import re

    client.force_login(staff)
    page = client.get(reverse("research:fit_detail", args=[regression_fit.pk])).content.decode()
    section = page[page.index('id="fig5"'):]
    section = section[:section.index("</section>")]
    assert "over 78 items" in section
    assert reverse("research:export_fit", args=[regression_fit.pk, "regressions", "csv"]) in section
    head = re.findall(r"<th>([^<]*) <span class=\"muted\">\((\d+) relevant\)</span></th>", section)
    assert head == [("science-ish", "30"), ("noise", "18"), ("history-ish", "48"), ("unused", "0")]
    table = {m[0]: re.findall(r"<td>(.*?)</td>", m[1]) for m in re.findall(r"<tr><td>([^<]*)</td>(.*?)</tr>", section, re.S)}
    assert list(table) == FEATURES  # History and Literature are the reference: no row
    science = table["category: Science"]
    assert science[0].startswith("2.35 ") and "(p &lt; 0.001)" in science[0]  # log 10.5, z about 4
    assert science[1].startswith("0.15 ")  # log 7/6
    assert science[2].startswith("-2.35 ") and "(p &lt; 0.001)" in science[2]
    assert "no item is relevant" in science[3]



@pytest.fixture
def sqlite_default_parameter_limit(db):  # type: ignore[no-untyped-def]
    """SQLite as built upstream before 3.32 takes at most 999 parameters in a statement (32766 since; Debian's
    build here takes 250000): the limit lowered to 999 so that a few thousand items show what tens of
    thousands would on a stock build."""
    import sqlite3

    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's parameter limit")
    connection.ensure_connection()
    raw = connection.connection
    before = raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    yield 999
    raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, before)


def test_item_features_of_a_fit_with_more_items_than_sqlite_takes_parameters(sqlite_default_parameter_limit, tmp_path):
    """A fit can have tens of thousands of IRT items (a tossup gives one per clue): more than an SQLite statement
    takes parameters, so the items cannot be asked for in one `key IN (...)`."""
    n = 4 * sqlite_default_parameter_limit
    keys = [f"s/{i:05d}" for i in range(n)]
    fit_dir = tmp_path / "fit"
    fit_dir.mkdir()
    run = FitRun.objects.create(
        status=FitRun.Status.SUCCEEDED, settings={"model": "caimira", "dims": 1}, metrics={"dims": 1},
        artifact=artifact_pack(fit_dir=fit_dir, queries=[{"id": k, "text": "a b"} for k in keys], agents=[], responses=[]),
        finished_at=timezone.now(),
    )
    FitItem.objects.bulk_create([FitItem(fit=run, key=k, clue=1 + i % 2, relevance=[0.5], difficulty=[0.0],
                                         effective_difficulty=[0.0]) for i, k in enumerate(keys)])
    x, names = analyses.item_features(run, keys)
    assert names == ["clues", "length (100 words)"] and x.shape == (n, 2)
    assert x[:2].tolist() == [[1.0, 0.02], [2.0, 0.02]] and x[:, 0].sum() == 1.5 * n
