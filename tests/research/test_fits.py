"""Fit runs: data preparation, the service end to end (eager), failure and cancellation safety."""

from __future__ import annotations

import pytest

from quizsite.items.models import Response, ResponseOverride
from quizsite.research import fits, services
from quizsite.research.artifacts import fit_result_load
from quizsite.research.fits import FitSpec
from quizsite.research.models import FitAgent, FitItem, FitRun
from quizsite.research.prepare import DataSpec, prepare

FAST = {"embedder": "hashing-32", "max_epochs": 30, "dims": 2}


def test_prepare_backfills_buzzes_on_clue_items(world):
    item = world["items"][0]  # 3 clues
    agent = world["agents"][3]  # a player: the first record counts (an AI's answers per clue: test_prepare_clues.py)
    assert agent.kind == "human"
    Response.objects.filter(agent=agent).delete()
    Response.objects.create(agent=agent, item=item, source="live", verdict="prompt", correct=None, clue_index=0)
    Response.objects.create(agent=agent, item=item, source="live", verdict="accept", correct=True, clue_index=1)
    Response.objects.create(agent=agent, item=item, source="live", verdict="reject", correct=False, clue_index=0)  # later: ignored
    prepared = prepare(DataSpec())
    mine = {r["query_id"]: r["ruling"] for r in prepared.responses if r["agent_id"] == agent.public_id}
    assert mine == {"world/t0_2": 1, "world/t0_3": 1}
    texts = {q["id"]: q["text"] for q in prepared.queries}
    assert texts["world/t0_1"] == "This city hosts the Louvre."
    assert texts["world/t0_2"] == "This city hosts the Louvre. It lies on the Seine."
    assert prepared.counts["agents_by_kind"] == {"ai": 3, "human": 4}


def test_prepare_uses_latest_override_and_groups_humans(world, staff):
    item, agent = world["items"][1], world["agents"][0]
    first = Response.objects.filter(agent=agent, item=item).first()
    first_correct = first.correct
    ResponseOverride.objects.create(response=first, by=staff, verdict="accept" if not first_correct else "reject", correct=not first_correct)
    prepared = prepare(DataSpec())
    t = first.clue_index + 1
    rulings = {r["query_id"]: r["ruling"] for r in prepared.responses if r["agent_id"] == agent.public_id}
    assert rulings[f"world/t1_{t}"] == int(not first_correct)
    grouped = prepare(DataSpec(grouping="groups", group_sizes=[2]))
    kinds = grouped.counts["agents_by_kind"]
    assert kinds == {"ai": 3, "human_group": 2}
    group = next(a for a in grouped.agents if a["type"] == "human_group")
    assert len(group["members"]) == 2 and all(m.startswith("h-") for m in group["members"])


def test_fit_run_end_to_end_eager(world, research_cache, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.fitrun_start(spec=FitSpec(**FAST), label="tiny")
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    assert run.is_active
    assert run.counts["agents"] == 7 and run.counts["responses"] > 0
    assert run.metrics["dims"] == 2 and run.metrics["val"] is not None
    assert set(run.timing) >= {"prepare_s", "embed_s", "fit_s", "store_s", "total_s"}
    assert FitAgent.objects.filter(fit=run).count() == 7
    assert FitItem.objects.filter(fit=run).count() == run.counts["items"]
    item = FitItem.objects.filter(fit=run).first()
    assert len(item.relevance) == 2 and abs(sum(item.relevance) - 1) < 1e-5
    assert run.clusters and sum(c["size"] for c in run.clusters) == run.counts["items"]
    result = fit_result_load(run.pk)
    assert result.item_ids == sorted(result.item_ids) and len(result.agent_ids) == 7
    assert run.progress["phase"] == "succeeded"
    assert run.metrics["data"]["meta"]["selection"]["grouping"] == "individual"  # the selection travels with the fit


def test_failed_fit_leaves_active_fit_untouched(world, research_cache):
    good = services.fitrun_create(spec=FitSpec(**FAST))
    fits.fit_run_execute(fit_id=good.pk)
    good.refresh_from_db()
    assert good.is_active
    bad = services.fitrun_create(spec=FitSpec(**{**FAST, "data": DataSpec(item_sets=["no-such-set"])}))
    fits.fit_run_execute(fit_id=bad.pk)
    bad.refresh_from_db()
    good.refresh_from_db()
    assert bad.status == "failed" and "no judged responses" in bad.error
    assert not bad.is_active and good.is_active
    assert not FitAgent.objects.filter(fit=bad).exists() and not FitItem.objects.filter(fit=bad).exists()
    assert bad.artifact is None


def test_failure_inside_irt_fit_writes_nothing(world, research_cache, monkeypatch):
    good = services.fitrun_create(spec=FitSpec(**FAST))
    fits.fit_run_execute(fit_id=good.pk)

    def boom(*args, **kwargs):
        raise FloatingPointError("loss became nan")

    monkeypatch.setattr(fits.irt, "fit", boom)
    bad = services.fitrun_create(spec=FitSpec(**FAST))
    fits.fit_run_execute(fit_id=bad.pk)
    bad.refresh_from_db()
    assert bad.status == "failed" and "loss became nan" in bad.error
    assert FitRun.objects.get(is_active=True).pk == good.pk


def test_cancel_while_fitting_stops_and_keeps_active(world, research_cache, monkeypatch):
    good = services.fitrun_create(spec=FitSpec(**FAST))
    fits.fit_run_execute(fit_id=good.pk)
    run = services.fitrun_create(spec=FitSpec(**{**FAST, "max_epochs": 500}))
    real_fit = fits.irt.fit

    def fit_and_cancel(data, config, on_epoch=None):
        def hook(st):
            if st.epoch == 3:
                FitRun.objects.filter(pk=run.pk).update(cancel_requested=True)
            fits.PROGRESS_EVERY_S = 0
            on_epoch(st)

        return real_fit(data, config, on_epoch=hook)

    monkeypatch.setattr(fits, "PROGRESS_EVERY_S", 0)
    monkeypatch.setattr(fits.irt, "fit", fit_and_cancel)
    fits.fit_run_execute(fit_id=run.pk)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.progress["phase"] == "cancelled"
    assert not FitAgent.objects.filter(fit=run).exists()
    assert FitRun.objects.get(is_active=True).pk == good.pk


def test_cancel_queued_run_never_starts(world, research_cache):
    run = services.fitrun_create(spec=FitSpec(**FAST))
    services.fitrun_cancel(run=run)
    fits.fit_run_execute(fit_id=run.pk)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.started_at is None


def test_spec_validation():
    with pytest.raises(ValueError):
        FitSpec(model="3pl")
    with pytest.raises(ValueError):
        FitSpec(embedder="hashing-x")
    with pytest.raises(ValueError):
        DataSpec(grouping="teams")
    assert FitSpec.from_dict(FitSpec(**FAST).as_dict()).as_dict() == FitSpec(**FAST).as_dict()


def test_fit_caimira_command(world, research_cache, capsys, django_capture_on_commit_callbacks):
    from django.core.management import call_command

    call_command("fit_caimira", "--wait", "--embedder", "hashing-16", "--epochs", "15", "--dims", "2", "--grouping", "groups",
                 "--group-sizes", "2", "--label", "shell")
    out = capsys.readouterr().out
    assert "succeeded" in out and "val:" in out and "'human_group': 2" in out
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        call_command("fit_caimira", "--model", "2pl", "--no-activate")
    assert "queued" in capsys.readouterr().out and len(callbacks) == 1
    queued = FitRun.objects.get(settings__model="2pl")
    assert queued.status == "queued" and queued.reason == "command" and not queued.activate_on_success


def test_periodic_refit_when_enough_new_responses(world, research_cache, settings, django_capture_on_commit_callbacks):
    settings.RESEARCH_REFIT_MIN_NEW_RESPONSES = 3
    assert fits.fits_refit_if_due() is None  # no active fit yet
    active = fits.fit_run_execute(fit_id=services.fitrun_create(spec=FitSpec(**FAST)).pk)
    assert fits.fits_refit_if_due() is None  # nothing new
    item, agent = world["items"][0], world["agents"][0]
    for _ in range(3):
        Response.objects.create(agent=agent, item=item, source="live", verdict="accept", correct=True, clue_index=0)
    with django_capture_on_commit_callbacks(execute=False):
        refit = fits.fits_refit_if_due()
    assert refit is not None and refit.reason == "periodic" and refit.settings == active.settings
    assert fits.fits_refit_if_due() is None  # one refit at a time
    settings.RESEARCH_REFIT_MIN_NEW_RESPONSES = 0
    FitRun.objects.filter(pk=refit.pk).update(status="cancelled")
    assert fits.fits_refit_if_due() is None  # off


def test_live_buzzes_on_a_rebuilt_tossup_meet_the_published_rulings(tmp_path, db, research_cache):
    from django.contrib.auth import get_user_model

    from quizsite.agents.models import Agent
    from quizsite.items.importers import items_import
    from quizsite.items.models import Item
    from quizsite.research.selectors import items_without_fit

    from .test_importers import tiny_caimira

    items_import(fmt="caimira", path=tiny_caimira(tmp_path / "c"), set_slug="c")
    tossup = Item.objects.get(item_set__slug="c", external_id="q1")
    player = Agent.objects.create(kind="human", name="live player")
    Response.objects.create(agent=player, item=tossup, source="live", verdict="accept", correct=True, clue_index=1)
    prepared = prepare(DataSpec(item_sets=["c"]))
    assert {q["id"] for q in prepared.queries} == {"c/q1_1", "c/q1_2", "c/solo"}  # no duplicate items for q1
    by_query = {}
    for r in prepared.responses:
        by_query.setdefault(r["query_id"], {})[r["agent_id"]] = r["ruling"]
    assert by_query["c/q1_2"][player.public_id] == 1 and len(by_query["c/q1_2"]) == 3  # live + 2 published
    solo = Item.objects.get(item_set__slug="c", external_id="solo")
    for i in range(4):  # more players, so the fit has the least data a fit needs (research README)
        other = Agent.objects.create(kind="human", name=f"player {i}")
        Response.objects.create(agent=other, item=tossup, source="live", verdict="accept", correct=i % 2 == 0, clue_index=i % 2)
        Response.objects.create(agent=other, item=solo, source="live", verdict="accept", correct=i % 2 == 1)
    run = fits.fit_run_execute(fit_id=services.fitrun_create(spec=FitSpec(**{**FAST, "data": DataSpec(item_sets=["c"])})).pk)
    assert run.status == "succeeded", run.error
    assert items_without_fit(run) == []  # the rebuilt tossup is in the fit through its prefixes
    from django.test import Client

    from quizsite.research.selectors import tossup_of_prefix

    prefix = Item.objects.get(item_set__slug="c", external_id="q1_2")
    assert tossup_of_prefix(prefix) == tossup and tossup_of_prefix(Item.objects.get(external_id="solo")) is None
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("r", password="pw"))
    page = client.get(f"/research/fits/{run.pk}/items/{prefix.pk}/", follow=True)
    assert page.redirect_chain[-1][0] == f"/research/fits/{run.pk}/items/{tossup.pk}/"
    assert "c/q1_1" in page.content.decode() and "cold start" not in page.content.decode().split("Predicted")[0]


def test_progress_rows_show_items_embedded_and_where_early_stopping_stands(world, research_cache, monkeypatch):
    """Every progress write of a run, as the fit page and progress.json see them."""
    writes: list[dict] = []
    real = services.fitrun_heartbeat

    def record(**kwargs):
        if kwargs.get("progress"):
            writes.append(kwargs["progress"])
        return real(**kwargs)

    monkeypatch.setattr(fits, "PROGRESS_EVERY_S", 0)
    monkeypatch.setattr(services, "fitrun_heartbeat", record)
    run = services.fitrun_create(spec=FitSpec(**{**FAST, "max_epochs": 3000}))
    fits.fit_run_execute(fit_id=run.pk)
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    embedding = [w for w in writes if w["phase"] == "embedding"]
    n_items = run.counts["items"]
    assert embedding[0]["items_done"] == 0 and embedding[-1]["items_done"] == n_items
    assert all(w["items"] == n_items for w in embedding)
    every = [w for w in writes if w["phase"] == "fitting"]
    starts = run.metrics["starts"]
    # the default: one start, and a rival only where it ended with overlapping dimensions (irt.train.skill_overlap)
    assert run.metrics["config"]["starts"] == 1 and all(w["starts"] == max(1, w["start"]) for w in every)
    for screened in starts["screened"]:  # each start counts its own epochs, from 1
        mine = [w["epoch"] for w in every if w["start"] == screened["start"] + 1]
        assert mine[:screened["epochs"]] == list(range(1, screened["epochs"] + 1))
    fitting = [w for w in every if w["start"] == starts["chosen"] + 1]  # the start that went on
    assert [w["epoch"] for w in fitting] == list(range(1, run.metrics["epochs"] + 1))
    last = fitting[-1]  # not always the last row: a kept first start may stop at once, after the second ran
    # the fit stopped where the progress said it would: patience run out at the best epoch it kept, or (the
    # growing patience of a start that kept improving a little) the epoch cap
    assert last["best_epoch"] == run.metrics["best_epoch"]
    if run.metrics["stopped"] == "patience":
        assert last["patience_left"] == 0 and last["epoch"] == last["best_epoch"] + last["patience"]
    else:
        assert run.metrics["stopped"] == "max_epochs" and last["epoch"] == last["max_epochs"] == 3000
    assert last["best_loss"] == pytest.approx(min(w["val_loss"] for w in fitting), abs=1e-5) and last["monitored"] == "val"
    assert all(w["patience_left"] == w["patience"] - (w["epoch"] - w["best_epoch"]) for w in fitting)


def test_fit_runs_with_the_configured_torch_threads_and_restores_them(world, research_cache, settings, monkeypatch):
    import torch

    settings.RESEARCH_FIT_THREADS = 1
    real_fit = fits.irt.fit
    seen = {}

    def observe(data, config, on_epoch=None):
        seen["during"] = torch.get_num_threads()
        return real_fit(data, config, on_epoch=on_epoch)

    monkeypatch.setattr(fits.irt, "fit", observe)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        run = services.fitrun_create(spec=FitSpec(**FAST))
        fits.fit_run_execute(fit_id=run.pk)
        assert torch.get_num_threads() == 2  # the process's own setting is back
    finally:
        torch.set_num_threads(before)
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    assert seen["during"] == 1 and run.metrics["config"]["threads"] == 1
    settings.RESEARCH_FIT_THREADS = 0  # 0: torch's default, nothing set
    assert fits.fit_threads() is None
