"""Run an agent kind on a set, in this process, as the Celery task would."""

from __future__ import annotations

from quizsite.agents import runner, runs, services
from quizsite.agents.models import AgentRun
from quizsite.items.models import Item, ItemSet, Response


def run_agent(kind: str, slug: str, settings: dict | None = None, name: str = "") -> AgentRun:
    version, _ = services.agentversion_register(name=name or f"t-{kind}", kind=kind, settings=settings or {})
    run = runs.agentrun_create(version=version, item_set=ItemSet.objects.get(slug=slug))
    return runner.agentrun_execute(run_id=run.pk)


def final_accuracy(run: AgentRun) -> float:
    """Accuracy after the last clue: one answer per tossup, the whole question read."""
    rows = Response.objects.filter(
        agent=run.version.agent, item__item_set=run.item_set, item__kind=Item.Kind.TOSSUP
    )
    last = [r.correct for r in rows if r.word_index == r.n_words]
    return sum(last) / len(last)
