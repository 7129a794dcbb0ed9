"""Too little data for a fit is refused at every entry point, and such a fit never becomes the active one.

The minimum (research README, "The least data a fit is made from"): 2 agents, 2 items and 10 rulings, some
of them correct and some wrong. One agent over a few rulings was the defect: the fit ran and became active.
"""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from quizsite.agents.models import Agent
from quizsite.items.models import Response, ResponseOverride
from quizsite.research import fits, selectors, services
from quizsite.research.fits import FitSpec
from quizsite.research.models import FitRun
from quizsite.research.prepare import DataSpec, fit_data_shortfall, prepare

from ..conftest import run_tests_on_postgresql, service_up
from .conftest import make_world

FAST = {"embedder": "hashing-16", "max_epochs": 10, "dims": 2}
FORM = {
    "grouping": "individual",
    "group_sizes": "1,5",
    "model": "caimira",
    "dims": 2,
    "embedder": "hashing-16",
    "template": "{text}",
    "max_epochs": 10,
    "val_fraction": 0.1,
    "seed": 0,
    "n_clusters": 2,
    "activate": "on",
}


@pytest.fixture
def one_player(db, tmp_path):  # type: ignore[no-untyped-def]
    """Three AI systems and one player: the players alone are one agent."""
    return make_world(tmp_path, n_humans=1, n_ai=3)


@pytest.fixture
def always_right(db, tmp_path):  # type: ignore[no-untyped-def]
    """Two players, right on every tossup (and three AI systems to leave out)."""
    world = make_world(tmp_path, n_humans=2, n_ai=3)
    Response.objects.filter(agent__kind="human").update(correct=True, verdict="accept")
    return world


@pytest.fixture
def researcher(client, staff):  # type: ignore[no-untyped-def]
    client.force_login(staff)
    return client


def _active_fit() -> FitRun:
    """A fit of every agent, active: the one a refused or failed fit must leave active."""
    run = fits.fit_run_execute(fit_id=services.fitrun_create(spec=FitSpec(**FAST), label="good").pk)
    assert run.status == "succeeded" and run.is_active, run.error
    return run


def test_the_new_fit_form_refuses_one_agent(
    researcher, one_player, research_cache, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        page = researcher.post(
            reverse("research:fit_new"), {**FORM, "agent_kinds": ["human"], "label": "one player"}
        )
    assert page.status_code == 200
    html = page.content.decode()
    assert "Too little data for a fit" in html and "1 agent (at least 2" in html
    assert not FitRun.objects.exists()


def test_the_new_fit_form_refuses_rulings_that_are_all_correct(researcher, always_right, research_cache):
    page = researcher.post(
        reverse("research:fit_new"), {**FORM, "agent_kinds": ["human"], "label": "all right"}
    )
    assert page.status_code == 200 and "every ruling is correct" in page.content.decode()
    assert not FitRun.objects.exists()


def test_the_new_fit_form_still_starts_a_fit_of_enough_data(researcher, one_player, research_cache):
    page = researcher.post(
        reverse("research:fit_new"), {**FORM, "agent_kinds": ["human", "ai"], "label": "everyone"}
    )
    assert page.status_code == 302 and FitRun.objects.filter(label="everyone").exists()


@pytest.mark.parametrize("wait", [True, False])
def test_fit_caimira_refuses_one_agent(one_player, research_cache, wait):
    args = ["--agent-kinds", "human", "--embedder", "hashing-16", "--epochs", "10", "--dims", "2"]
    with pytest.raises(CommandError, match=r"Too little data for a fit: 1 agent \(at least 2"):
        call_command("fit_caimira", *args, *(["--wait"] if wait else []))
    assert not FitRun.objects.exists()


def test_a_large_selection_is_checked_by_its_run_and_never_becomes_active(
    researcher, always_right, research_cache, monkeypatch, django_capture_on_commit_callbacks
):
    """Above the form's preparing bound only what the rows say at once is checked (one agent); the rest is
    checked by the run after it prepared the data: it fails, saying why, and the active fit stays."""
    good = _active_fit()
    monkeypatch.setattr(selectors, "FIT_CHECK_MAX_ROWS", 3)  # two players: the quick check passes
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher.post(
            reverse("research:fit_new"), {**FORM, "agent_kinds": ["human"], "label": "all right"}
        )
    assert response.status_code == 302
    run = FitRun.objects.get(label="all right")
    assert run.status == "failed" and "every ruling is correct" in run.error and not run.is_active
    good.refresh_from_db()
    assert good.is_active
    page = researcher.get(reverse("research:fit_detail", args=[run.pk])).content.decode()
    assert "every ruling is correct" in page


def test_a_large_selection_of_one_agent_is_refused_at_once(researcher, one_player, monkeypatch):
    monkeypatch.setattr(selectors, "FIT_CHECK_MAX_ROWS", 3)
    page = researcher.post(
        reverse("research:fit_new"), {**FORM, "agent_kinds": ["human"], "label": "one player"}
    )
    assert page.status_code == 200 and "1 agent (at least 2" in page.content.decode()
    assert not FitRun.objects.exists()


def test_a_run_whose_data_shrank_after_it_was_queued_fails_and_the_active_fit_stays(
    one_player, research_cache
):
    """A run queued with enough data is checked again by its own preparation: here the AI systems' rows
    are deleted between the run's creation (what the form queues) and its execution, leaving one player."""
    good = _active_fit()
    spec = FitSpec(**FAST, data=DataSpec(agent_kinds=["human", "ai"]))
    assert selectors.fit_data_check(spec=spec.data) is None  # enough when it is queued
    run = services.fitrun_create(spec=spec, label="shrank")
    Response.objects.filter(agent__kind="ai").delete()
    run = fits.fit_run_execute(fit_id=run.pk)
    assert run.status == "failed" and "1 agent (at least 2" in run.error
    assert not run.is_active and FitRun.objects.get(is_active=True).pk == good.pk


def test_an_older_fit_of_too_little_data_cannot_be_made_active(researcher, one_player, research_cache):
    """A fit that succeeded before the minimum existed keeps its results but cannot become active."""
    good = _active_fit()
    counts = {**good.counts, "agents": 1, "agents_by_kind": {"human": 1}, "responses": 5}
    old = FitRun.objects.create(status=FitRun.Status.SUCCEEDED, settings=good.settings, counts=counts)
    page = researcher.post(reverse("research:fit_activate", args=[old.pk]), follow=True).content.decode()
    assert "Too little data for a fit" in page and "1 agent (at least 2" in page
    old.refresh_from_db()
    good.refresh_from_db()
    assert not old.is_active and good.is_active


def test_the_checks_take_their_arguments_by_keyword(db):
    """New public functions take keyword-only arguments (the project's convention)."""
    with pytest.raises(TypeError):
        fit_data_shortfall({"agents": 1})  # type: ignore[misc]
    with pytest.raises(TypeError):
        selectors.fit_data_check(DataSpec())  # type: ignore[misc]
    assert "1 agent" in (fit_data_shortfall(counts={"agents": 1}) or "")
    assert "no judged responses" in (selectors.fit_data_check(spec=DataSpec()) or "")


def _counts(*, responses: int, positive: int | None) -> dict:
    """Counts of enough agents and items; `positive` None: a run stored before the exact count existed."""
    counts = {"agents": 5, "items": 100, "source_items": 50, "responses": responses}
    rate = round(positive / responses, 4) if positive is not None else None
    return {**counts, "positive_rate": rate, **({"positive": positive} if positive is not None else {})}


@pytest.mark.parametrize("positive", [20_000, 1])
def test_one_ruling_of_the_other_kind_among_many_is_not_refused_on_a_rounding(positive):
    """Over 20,000 rulings one wrong (or one right) ruling rounds the rate to 1.0 (0.0): still some of each."""
    counts = _counts(responses=20_001, positive=positive)
    assert counts["positive_rate"] in (0, 1)  # what the check used to read
    assert fit_data_shortfall(counts=counts) is None


@pytest.mark.parametrize(("positive", "word"), [(20_001, "correct"), (0, "wrong")])
def test_rulings_all_alike_are_refused_on_the_exact_count(positive, word):
    assert f"every ruling is {word}" in (fit_data_shortfall(counts=_counts(responses=20_001, positive=positive)) or "")


def test_prepare_counts_the_correct_rulings_exactly(world):
    prepared = prepare(DataSpec())
    positive = sum(r["ruling"] for r in prepared.responses)
    assert 0 < positive < len(prepared.responses)
    assert prepared.counts["positive"] == positive
    assert prepared.counts["positive_rate"] == round(positive / len(prepared.responses), 4)


def test_a_stored_run_without_the_exact_count_is_activated_unless_its_rate_is_unambiguous(db):
    """Runs stored before `positive` was counted have only the rounded rate. Over 10,000 rulings a rate of
    1.0 may hide a wrong ruling: unknown, so the run is not refused; under that, 1.0 means all correct."""
    many = FitRun.objects.create(status=FitRun.Status.SUCCEEDED, counts=_counts(responses=30_000, positive=None) | {
        "positive_rate": 1.0})
    assert services.fitrun_activate(run=many).is_active
    few = FitRun.objects.create(status=FitRun.Status.SUCCEEDED, counts=_counts(responses=50, positive=None) | {
        "positive_rate": 1.0})
    with pytest.raises(ValueError, match="every ruling is correct"):
        services.fitrun_activate(run=few)
    many.refresh_from_db()
    assert many.is_active


def test_a_run_of_one_wrong_ruling_among_many_is_activated(db):
    run = FitRun.objects.create(status=FitRun.Status.SUCCEEDED, counts=_counts(responses=20_001, positive=20_000))
    assert services.fitrun_activate(run=run).is_active


HUMANS = DataSpec(agent_kinds=["human"])


def test_the_quick_check_of_a_large_selection_is_bounded_and_counts_no_distinct_agents(world, monkeypatch):
    """On millions of rows an unbounded COUNT(*) and a COUNT(DISTINCT agent) over a LEFT JOIN on the
    overrides held the New-fit form for seconds. Now: the size counted up to the bound, an EXISTS for
    "judged", and one agent then any other (each query stops at its first rows)."""
    monkeypatch.setattr(selectors, "FIT_CHECK_MAX_ROWS", 3)
    with CaptureQueriesContext(connection) as ctx:
        assert selectors.fit_data_check(spec=HUMANS) is None  # four players
    sqls = [q["sql"].upper() for q in ctx.captured_queries]
    assert len(sqls) <= 3, sqls
    assert not [q for q in sqls if "COUNT(DISTINCT" in q or "LEFT OUTER JOIN" in q], sqls
    counts = [q for q in sqls if "COUNT(" in q]
    assert len(counts) == 1 and "LIMIT 4" in counts[0], counts
    assert all("EXISTS" in q for q in sqls if "RESPONSEOVERRIDE" in q) and any("RESPONSEOVERRIDE" in q for q in sqls)


def test_the_quick_check_refuses_one_agent_and_passes_two(one_player, monkeypatch, django_user_model):
    monkeypatch.setattr(selectors, "FIT_CHECK_MAX_ROWS", 3)
    assert "1 agent (at least 2" in (selectors.fit_data_check(spec=HUMANS) or "")
    # a second player whose only row is judged through an override (the row itself has no ruling)
    item = one_player["items"][0]
    row = Response.objects.create(agent=Agent.objects.create(kind="human", name="Second"), item=item, source="live",
                                  given="y", correct=None, clue_index=0, word_index=1, n_words=3, room="r")
    assert "1 agent (at least 2" in (selectors.fit_data_check(spec=HUMANS) or "")  # not judged yet
    by = django_user_model.objects.create_user("judge")
    ResponseOverride.objects.create(response=row, by=by, verdict="accept", correct=True)
    assert selectors.fit_data_check(spec=HUMANS) is None


def test_the_quick_check_refuses_a_large_selection_of_no_judged_rows(one_player, monkeypatch):
    monkeypatch.setattr(selectors, "FIT_CHECK_MAX_ROWS", 3)
    Response.objects.update(correct=None)
    assert "no judged responses" in (selectors.fit_data_check(spec=HUMANS) or "")


@pytest.mark.services
@pytest.mark.slow
@pytest.mark.skipif(not service_up("127.0.0.1", 5432), reason="PostgreSQL is not reachable at 127.0.0.1:5432")
def test_fit_data_check_on_postgresql():
    """The quick_check tests of this file again on PostgreSQL: the EXISTS, the bounded count and the
    unordered LIMIT 1 are SQL each database plans its own way."""
    code, out = run_tests_on_postgresql("fitmin", "-k", "quick_check", "tests/research/test_fit_minimum.py")
    assert code == 0 and "3 passed" in out, out[-4000:]


def test_one_tossup_is_one_item_however_many_clue_prefixes_it_has(world):
    """The clue prefixes of one tossup are several IRT items of one question: "2 items" means two items."""
    first = world["items"][0]
    Response.objects.exclude(item=first).delete()
    counts = prepare(DataSpec()).counts
    # enough of everything else: only the one item is short
    assert counts["source_items"] == 1 and counts["items"] >= 2 and counts["agents"] >= 2
    assert counts["responses"] >= 10 and 0 < counts["positive"] < counts["responses"]
    why = fit_data_shortfall(counts=counts) or ""
    assert f"1 item (at least 2: the {counts['items']} IRT items are clue prefixes of one item)" in why
    assert why == selectors.fit_data_check(spec=DataSpec())
    Response.objects.bulk_create(  # the same agents on a second tossup
        Response(agent=r.agent, item=world["items"][1], source="live", given="x", correct=r.correct, clue_index=0,
                 word_index=1, n_words=3, room="r") for r in Response.objects.filter(item=first)
    )
    assert selectors.fit_data_check(spec=DataSpec()) is None
