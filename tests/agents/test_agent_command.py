"""`agent_run`: list, register, run with --wait, queue without it, cancel and resume."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from quizsite.agents import kinds
from quizsite.agents.models import AgentConfig, AgentRun
from quizsite.items.models import Response


@pytest.mark.django_db
def test_list_prints_every_builtin_agent_name_first(capsys):
    call_command("agent_run", "--list")
    names = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert set(kinds.load_all()) <= set(names)
    call_command("agent_run", "--list")  # idempotent: the built-ins are made once
    assert AgentConfig.objects.filter(builtin=True).count() == len(kinds.load_all())


@pytest.mark.django_db
def test_register_run_wait_and_rerun(halves, capsys):
    call_command(
        "agent_run", "--register", "my-bm25", "--kind", "retriever-bm25", "--json", json.dumps({"k": 5})
    )
    assert "my-bm25@v1 registered" in capsys.readouterr().out
    call_command("agent_run", "--register", "my-bm25", "--json", '{"k": 5}')
    assert "unchanged" in capsys.readouterr().out
    call_command("agent_run", "my-bm25", "--set", "halves-late", "--wait")
    out = capsys.readouterr().out
    assert "done" in out and "accuracy" in out
    run = AgentRun.objects.get()
    assert run.status == "done" and Response.objects.filter(agent=run.version.agent).count() == run.total
    call_command("agent_run", "my-bm25@v1", "--set", "halves-late", "--wait")
    assert ", 0 new responses" in capsys.readouterr().out


@pytest.mark.django_db
def test_without_wait_the_run_is_queued_and_its_id_printed(
    halves, capsys, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(
        execute=True
    ):  # Celery is eager in tests: the task runs at commit
        call_command("agent_run", "qb-guesser-tfidf", "--set", "halves-late")
    run_id = int(capsys.readouterr().out.strip())
    assert AgentRun.objects.get(pk=run_id).status == "done"
    call_command("agent_run", "--status", str(run_id))
    assert f"agent run {run_id} done" in capsys.readouterr().out


@pytest.mark.django_db
def test_errors_name_what_is_wrong(demo):
    with pytest.raises(CommandError, match="no agent named 'nope'"):
        call_command("agent_run", "nope", "--set", "demo-tossups", "--wait")
    with pytest.raises(CommandError, match="no item set 'nope'"):
        call_command("agent_run", "qb-guesser-tfidf", "--set", "nope", "--wait")
    with pytest.raises(CommandError, match="not JSON|settings"):
        call_command("agent_run", "--register", "x", "--kind", "retriever-bm25", "--json", "{k: 1}")
    with pytest.raises(CommandError, match="has no items of the kinds"):
        call_command("agent_run", "qb-guesser-tfidf", "--set", "demo-romqa", "--wait")
    assert AgentRun.objects.get().status == "failed"


@pytest.mark.django_db
def test_cancel_and_resume_from_the_command(halves, capsys):
    call_command("agent_run", "--list")
    from quizsite.agents import runs, selectors
    from quizsite.items.models import ItemSet

    run = runs.agentrun_create(
        version=selectors.agentversion_resolve("retriever-bm25"),
        item_set=ItemSet.objects.get(slug="halves-late"),
    )
    call_command("agent_run", "--cancel", str(run.pk))
    assert "cancelled" in capsys.readouterr().out
    call_command("agent_run", "--resume", str(run.pk), "--wait")
    assert AgentRun.objects.get(pk=run.pk).status == "done"
