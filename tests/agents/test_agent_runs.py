"""Agent runs: one response per item and clue position, the raw output kept, idempotent reruns, resuming
after a lost worker (simulated as tests/research/test_fit_liveness.py does), cancelling, the Celery path."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from quizsite.agents import kinds, runner, runs, services
from quizsite.agents.kinds.guesser import TfidfGuesser
from quizsite.agents.models import Agent, AgentAnswer, AgentRun
from quizsite.items.models import Item, ItemSet, Response

from .helpers import run_agent

ELSEWHERE = {
    "host": "elsewhere",
    "pid": 4242,
    "node": "celery@elsewhere",
    "space": "another-machine",
    "start": 1,
}


def n_positions(slug: str) -> int:
    return sum(
        len(i.data["clue_ends"]) for i in Item.objects.filter(item_set__slug=slug, kind=Item.Kind.TOSSUP)
    )


@pytest.mark.django_db
def test_one_response_per_item_and_clue_with_raw_output(halves):
    run = run_agent("qb-guesser-tfidf", "halves-late")
    assert (run.status, run.done, run.total, run.written) == (
        "done",
        n_positions("halves-late"),
        n_positions("halves-late"),
        run.total,
    )
    rows = Response.objects.filter(agent=run.version.agent)
    assert rows.count() == run.total and run.version.agent.kind == Agent.Kind.AI
    keys = list(rows.values_list("item_id", "word_index"))
    assert len(set(keys)) == len(keys)
    for r in rows.select_related("item")[:20]:
        ends = r.item.data["clue_ends"]
        assert (
            r.source == "agent_run"
            and r.word_index == ends[r.clue_index]
            and r.n_words == len(r.item.data["words"])
        )
        assert r.judge_version and r.verdict in ("accept", "prompt", "reject")
        assert r.given == r.meta["guess"] and 0 <= r.meta["confidence"] <= 1 and r.meta["latency_ms"] >= 0
        assert r.meta["raw"]["top"][0][0] == r.given and r.meta["run"] == run.pk
    assert run.correct == rows.filter(correct=True).count()


@pytest.mark.django_db
def test_a_rerun_writes_nothing_twice_and_a_new_setting_is_a_new_version(halves):
    first = run_agent("qb-guesser-tfidf", "halves-late")
    again = run_agent("qb-guesser-tfidf", "halves-late")
    assert again.status == "done" and again.written == 0 and again.done == again.total == first.total
    assert Response.objects.filter(agent=first.version.agent).count() == first.total
    assert again.version == first.version
    other = run_agent("qb-guesser-tfidf", "halves-late", settings={"ngram_max": 1})
    assert other.version != first.version and other.version.number == 2 and other.written == other.total
    assert other.version.settings["ngram_max"] == 1 and first.version.settings["ngram_max"] == 2
    assert other.version.agent != first.version.agent
    # the database refuses a second answer for the same version, item and position
    answer = AgentAnswer.objects.filter(version=first.version).first()
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        AgentAnswer.objects.create(
            version=first.version,
            item=answer.item,
            position=answer.position,
            response=Response.objects.create(agent=first.version.agent, item=answer.item, source="agent_run"),
        )


class Flaky(TfidfGuesser):
    """Dies (raises) on its second batch: the first batch is committed, the rest is not."""

    name = "test-flaky"
    calls = 0

    def answer_many(self, questions):
        Flaky.calls += 1
        if Flaky.calls == 2:
            raise RuntimeError("worker died")
        return super().answer_many(questions)


@pytest.mark.django_db
def test_a_run_whose_worker_was_lost_resumes_where_it_stopped(
    halves, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setitem(kinds.REGISTRY, Flaky.name, Flaky)
    Flaky.calls = 0
    run = run_agent(Flaky.name, "halves-late")
    assert run.status == "failed" and "worker died" in run.error
    kept = set(AgentAnswer.objects.filter(version=run.version).values_list("response_id", flat=True))
    assert len(kept) == runner.BATCH
    # as if the process had been killed while running: status running, stale heartbeat, another machine
    AgentRun.objects.filter(pk=run.pk).update(
        status="running",
        error="",
        finished_at=None,
        worker=ELSEWHERE,
        heartbeat_at=timezone.now() - timedelta(seconds=3600),
    )
    with django_capture_on_commit_callbacks(
        execute=True
    ):  # the reaper queues it; Celery runs eagerly in tests
        reaped = runs.agentrun_reap_lost()
    assert [r.pk for r in reaped] == [run.pk]
    run.refresh_from_db()
    assert run.status == "done", run.error
    assert "no heartbeat" in run.lost and run.attempts == 2
    answers = AgentAnswer.objects.filter(version=run.version)
    assert answers.count() == run.total == run.done and kept <= set(
        answers.values_list("response_id", flat=True)
    )
    assert Response.objects.filter(agent=run.version.agent).count() == run.total
    assert run.written == run.total  # both attempts together


@pytest.mark.django_db
def test_a_failed_run_resumes_on_request(halves, monkeypatch):
    monkeypatch.setitem(kinds.REGISTRY, Flaky.name, Flaky)
    Flaky.calls = 0
    run = run_agent(Flaky.name, "halves-late")
    assert run.status == "failed"
    runs.agentrun_resume(run=run, enqueue=False)
    run = runner.agentrun_execute(run_id=run.pk)
    assert run.status == "done" and Response.objects.filter(agent=run.version.agent).count() == run.total


class CancelsItself(TfidfGuesser):
    """A researcher presses Cancel while the first batch is being answered."""

    name = "test-cancel"

    def answer_many(self, questions):
        live = AgentRun.objects.get(status="running")
        assert runs.agentrun_cancel(run=live).status == "running"  # alive: it stops after this batch
        return super().answer_many(questions)


@pytest.mark.django_db
def test_cancel_stops_a_live_run_after_its_batch_and_a_queued_one_at_once(halves, monkeypatch):
    monkeypatch.setitem(kinds.REGISTRY, CancelsItself.name, CancelsItself)
    run = run_agent(CancelsItself.name, "halves-late")
    assert run.status == "cancelled" and run.done == runner.BATCH < run.total
    assert Response.objects.filter(agent=run.version.agent).count() == runner.BATCH
    version, _ = services.agentversion_register(name="t-queued", kind="qb-guesser-tfidf")
    queued = runs.agentrun_create(version=version, item_set=ItemSet.objects.get(slug="halves-late"))
    assert runs.agentrun_cancel(run=queued).status == "cancelled"
    assert runner.agentrun_execute(run_id=queued.pk).status == "cancelled"
    assert not Response.objects.filter(agent=version.agent).exists()


@pytest.mark.django_db
def test_start_queues_the_celery_task(halves, django_capture_on_commit_callbacks):
    version, _ = services.agentversion_register(name="t-celery", kind="retriever-bm25", settings={"k": 3})
    with django_capture_on_commit_callbacks(execute=True):
        run = runs.agentrun_start(version=version, item_set=ItemSet.objects.get(slug="halves-late"))
    run.refresh_from_db()
    assert run.status == "done" and run.attempts == 1 and run.worker["pid"]
    r = Response.objects.filter(agent=version.agent).first()
    assert len(r.meta["candidates"]) <= 3 and len(r.meta["candidate_verdicts"]) == len(r.meta["candidates"])
    assert r.correct == ("accept" in r.meta["candidate_verdicts"])


@pytest.mark.django_db
def test_bad_settings_are_refused_with_a_reason(db):
    with pytest.raises(ValueError, match="unknown setting 'kk'"):
        services.agentversion_register(name="bad", kind="retriever-bm25", settings={"kk": 3})
    with pytest.raises(ValueError, match="k must be"):
        services.agentversion_register(name="bad", kind="retriever-bm25", settings={"k": 0})
    with pytest.raises(ValueError, match="is not a file"):
        services.agentversion_register(
            name="bad", kind="retriever-bm25", settings={"collection": "/nonexistent.jsonl"}
        )
    with pytest.raises(ValueError, match="unknown agent kind"):
        services.agentversion_register(name="bad", kind="nope")
    assert not Agent.objects.filter(kind="ai").exists()


@pytest.mark.django_db
def test_a_retriever_reads_a_collection_the_user_names(halves, tmp_path):
    import json

    path = tmp_path / "wiki.jsonl"
    docs = [
        {
            "title": "Moby-Dick",
            "text": "Captain Ahab hunts the white whale; Ishmael narrates aboard the Pequod.",
        },
        {
            "title": "Hamlet",
            "text": "The Prince of Denmark, Elsinore, the ghost, Yorick's skull and Ophelia.",
        },
    ]
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    run = run_agent("retriever-bm25", "demo-tossups", settings={"collection": str(path), "k": 1})
    assert run.status == "done", run.error
    right = set(
        Response.objects.filter(agent=run.version.agent, correct=True).values_list(
            "item__external_id", flat=True
        )
    )
    assert right and right <= {
        i.external_id
        for i in Item.objects.filter(item_set__slug="demo-tossups")
        if "Moby" in i.answer or "Hamlet" in i.answer
    }


@pytest.mark.django_db
def test_a_run_whose_process_is_gone_is_resumed_at_once_by_the_redelivered_task(halves, monkeypatch):
    """The worker's process was SIGKILLed a moment ago (its heartbeat is still fresh): the redelivered
    task sees on this machine that the process is gone, and resumes the run in this process."""
    import signal
    import subprocess

    from quizsite.core import liveness

    monkeypatch.setitem(kinds.REGISTRY, Flaky.name, Flaky)
    Flaky.calls = 0
    run = run_agent(Flaky.name, "halves-late")
    proc = subprocess.Popen(["sleep", "30"])
    dead = {**liveness.identity("celery@here"), "pid": proc.pid, "start": None}
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    AgentRun.objects.filter(pk=run.pk).update(
        status="running", error="", finished_at=None, worker=dead, heartbeat_at=timezone.now()
    )
    run = runner.agentrun_execute(run_id=run.pk, worker_name="celery@redelivered")
    assert run.status == "done" and "is gone" in run.lost and run.worker["node"] == "celery@redelivered"
    assert Response.objects.filter(agent=run.version.agent).count() == run.total
