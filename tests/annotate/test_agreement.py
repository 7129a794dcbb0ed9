"""Agreement and campaign statistics, checked against independent computations."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from quizsite.agents.models import Agent
from quizsite.annotate.agreement import count_table, fleiss_kappa, krippendorff_alpha_nominal
from quizsite.annotate.selectors import campaign_stats
from quizsite.annotate.services import (
    assignment_current,
    assignment_submit,
    participant_consent,
    participant_get_or_create,
)
from quizsite.items.models import Item, Response

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def by_hand_parts(table: np.ndarray) -> tuple[float, float]:
    """Fleiss (1971) written out with loops: P-bar and P-e."""
    n_items, n_cats = table.shape
    n = table[0].sum()
    p_i = [(sum(x * x for x in row) - n) / (n * (n - 1)) for row in table]
    p_j = [sum(table[i][j] for i in range(n_items)) / (n_items * n) for j in range(n_cats)]
    return sum(p_i) / n_items, sum(p * p for p in p_j)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_fleiss_kappa_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    raters = int(rng.integers(2, 7))
    table = np.array([rng.multinomial(raters, rng.dirichlet([1, 1, 1, 1])) for _ in range(25)])
    result = fleiss_kappa(table)
    assert result.kappa == pytest.approx(sm_fleiss_kappa(table, method="fleiss"))
    p_bar, p_e = by_hand_parts(table)
    assert (result.p_bar, result.p_e) == (pytest.approx(p_bar), pytest.approx(p_e))
    assert result.kappa == pytest.approx((p_bar - p_e) / (1 - p_e))


def test_krippendorff_alpha_published_example():
    """Krippendorff (2011), 'Computing Krippendorff's alpha-reliability', nominal example: alpha = 0.743."""
    n = None
    coders = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
        [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
    ]
    units = [[v for v in unit if v is not None] for unit in zip(*coders, strict=True)]
    assert krippendorff_alpha_nominal(count_table(units)) == pytest.approx(0.743, abs=5e-4)


def test_krippendorff_alpha_by_hand():
    # units (a,a) (a,b) (b,b): o_aa = 2, o_ab = o_ba = 1, o_bb = 2; n_a = n_b = 3, n = 6
    # D_o = 2/6, D_e = (36 - 18) / 30 = 0.6, alpha = 1 - (1/3)/0.6 = 4/9
    assert krippendorff_alpha_nominal(count_table([["a", "a"], ["a", "b"], ["b", "b"]])) == pytest.approx(4 / 9)
    assert krippendorff_alpha_nominal(count_table([["a"], ["b", "b"], ["a", "a"]])) == pytest.approx(1.0)
    assert fleiss_kappa(count_table([["a"]])).kappa is None


# what three annotators choose on the four games (the solution is correct: duro, bottiglia, chitarra, pala)
PICKS = {
    "ann1": {"g1": "duro", "g2": "bottiglia", "g3": "chitarra", "g4": "pala"},
    "ann2": {"g1": "duro", "g2": "barca", "g3": "chitarra", "g4": "vela"},
    "ann3": {"g1": "pila", "g2": "bottiglia", "g3": "piano", "g4": "pala"},
}


def run_campaign(make_campaign):  # type: ignore[no-untyped-def]
    campaign = make_campaign("ghigliottina-choose", "ghig", per_item=3)
    for name, picks in PICKS.items():
        p = participant_consent(
            participant=participant_get_or_create(campaign=campaign, agent=Agent.objects.create(kind="human", name=name)),
            now=T0,
        )
        while (a := assignment_current(participant=p, now=T0)) is not None:
            word = picks[a.item.external_id]
            assignment_submit(participant=p, assignment_id=a.pk, post={"choice": a.choices.index(word)}, now=T0)
    return campaign


def test_campaign_agreement_matches_statsmodels_on_the_same_answers(make_campaign):
    campaign = run_campaign(make_campaign)
    stats = campaign_stats(campaign, T0)
    ids = ["g1", "g2", "g3", "g4"]
    # the older categories, each option's own word: no two games share one, so P_e is small
    words = sorted({w for picks in PICKS.values() for w in picks.values()})
    matrix = np.array([[words.index(PICKS[a][i]) for a in PICKS] for i in ids])  # items x raters
    table, _ = aggregate_raters(matrix)
    by_text = stats["choose"]["agreement_by_option_text"]
    assert by_text["fleiss_kappa"] == pytest.approx(sm_fleiss_kappa(table))
    p_bar, p_e = by_hand_parts(table)
    assert by_text["observed_p_bar"] == pytest.approx(p_bar) and by_text["chance_p_e"] == pytest.approx(p_e)
    # the shared categories, each option's role: pila (g1), barca (g2), piano (g3) are distractor 1 of their
    # game, vela (g4) distractor 2; every game has 2 solutions and 1 distractor, so P_i = (4 + 1 - 3) / 6 = 1/3,
    # shares 8/12, 3/12, 1/12: P_e = (64 + 9 + 1) / 144, kappa = (48 - 74) / (144 - 74) = -26/70
    a = stats["agreement"]
    assert a["categories"].startswith("option role")
    assert a["observed_p_bar"] == pytest.approx(1 / 3) and a["chance_p_e"] == pytest.approx(74 / 144)
    assert a["fleiss_kappa"] == pytest.approx(-26 / 70)
    assert a["n_units"] == 4
    roles = [["S", "S", "D1"], ["S", "D1", "S"], ["S", "S", "D1"], ["S", "D2", "S"]]
    assert a["krippendorff_alpha"] == pytest.approx(krippendorff_alpha_nominal(count_table(roles)))
    assert sm_fleiss_kappa(aggregate_raters(np.array([[["S", "D1", "D2"].index(r) for r in u] for u in roles]))[0]) == \
        pytest.approx(a["fleiss_kappa"])
    assert stats["progress"]["answers"] == 12 and stats["progress"]["items_complete"] == 4
    assert stats["accuracy"] == pytest.approx(8 / 12)
    assert [row["accuracy"] for row in stats["items"]] == pytest.approx([2 / 3] * 4)  # one dissent per game
    assert [row["answers"] for row in stats["items"]] == [3] * 4
    assert sorted(r["accuracy"] for r in stats["annotators"]) == pytest.approx([0.5, 0.5, 1.0])

    out = StringIO()
    call_command("agreement", "c", "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["agreement"]["fleiss_kappa"] == pytest.approx(a["fleiss_kappa"])
    text = StringIO()
    call_command("agreement", "c", stdout=text)
    assert "Fleiss kappa" in text.getvalue() and "Krippendorff alpha" in text.getvalue()


def test_human_vs_ai_on_the_same_items(make_campaign):
    campaign = run_campaign(make_campaign)
    bot = Agent.objects.create(kind="ai", name="baseline-bot")
    for ext, correct in (("g1", True), ("g2", False)):
        Response.objects.create(agent=bot, item=Item.objects.get(external_id=ext), source="agent_run", correct=correct, score=float(correct))
    rows = campaign_stats(campaign, T0)["human_vs_ai"]
    assert rows == [{
        "agent": "baseline-bot", "n_items": 2, "ai_accuracy": 0.5,
        "human_accuracy": pytest.approx(4 / 6), "n_human_answers": 6, "ai_mean_score": 0.5,
    }]


def test_romqa_robust_scores(make_campaign):
    campaign = make_campaign("romqa-select", "romqa", per_item=1)
    p = participant_consent(
        participant=participant_get_or_create(campaign=campaign, agent=Agent.objects.create(kind="human", name="x")), now=T0
    )
    answers = {"r1": ["Rhine", "Elbe"], "r2": ["Inn", "Po"], "r3": ["Vienna", "Budapest"], "r4": ["Budapest"]}
    while (a := assignment_current(participant=p, now=T0)) is not None:
        picks = [a.choices.index(t) for t in answers[a.item.external_id]]
        assignment_submit(participant=p, assignment_id=a.pk, post={"pick": picks}, now=T0)
    r = campaign_stats(campaign, T0)["romqa"]
    # r2: precision 1/2, recall 1 -> F1 2/3; all others exact. c1 worst = 2/3, c2 worst = 1
    assert r["f1"] == pytest.approx((1 + 2 / 3 + 1 + 1) / 4)
    assert r["accuracy"] == pytest.approx(3 / 4)
    assert r["robust_f1"] == pytest.approx((2 / 3 + 1) / 2)
    assert r["robust_accuracy"] == pytest.approx(1 / 2)
    assert r["n_clusters"] == 2


def test_written_similarity_figures(make_campaign):
    from quizsite.annotate.services import written_score

    campaign = make_campaign("archaeology-write", "arch", per_item=1)
    p = participant_consent(
        participant=participant_get_or_create(campaign=campaign, agent=Agent.objects.create(kind="human", name="x")), now=T0
    )
    while (a := assignment_current(participant=p, now=T0)) is not None:
        text = a.item.data["true_question"] if a.item.external_id in ("a1", "a2") else "something else"
        assignment_submit(participant=p, assignment_id=a.pk, post={"text": text}, now=T0)
    stats = campaign_stats(campaign, T0)
    assert stats["similarity"]["n_pending"] == 4 and stats["agreement"] is None

    class Sims:  # similarity fixed per text, so the figures can be checked exactly
        name = "fixed:test"
        table = {"What is the answer to question 1?": 1.0, "What is the answer to question 2?": 1.0}

        def vectors(self, words):  # type: ignore[no-untyped-def]
            out = np.zeros((len(words), 2), np.float32)
            for i, w in enumerate(words):
                out[i] = [1, 0] if w in self.table or w.startswith("What") else [0.6, 0.8]
            return out

        def vocabulary(self):  # type: ignore[no-untyped-def]
            return None

    assert written_score(campaign=campaign, source=Sims()) == 4
    s = campaign_stats(campaign, T0)["similarity"]
    assert s["n_scored"] == 4 and s["mean_similarity"] == pytest.approx((1 + 1 + 0.6 + 0.6) / 4)
    assert s["median_similarity"] == pytest.approx(0.8) and s["share_at_or_above_threshold"] == 0.5
    assert s["exact_matches"] == 2
