"""Agent pages under /research/agents/ (researchers only): list and register agents, start runs, watch a
run's progress, cancel or resume it, and see how an agent did beside the humans. Thin: forms validate,
selectors read, services write."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from quizsite.core.roles import researcher_required

from . import kinds, runs, selectors, services
from .forms import RegisterForm, StartRunForm
from .models import AgentConfig, AgentRun


def _run(pk: int) -> AgentRun:
    try:
        return selectors.agent_run_get(pk)
    except AgentRun.DoesNotExist:
        raise Http404("no such agent run") from None


@researcher_required
def agent_list(request: HttpRequest) -> HttpResponse:
    runs.agentrun_reap_lost()
    services.agentconfigs_ensure_builtin()
    if request.method == "POST":
        form = RegisterForm(request.POST)
        if form.is_valid():
            d = form.cleaned_data
            version, created = services.agentversion_register(
                name=d["name"],
                kind=d["kind"],
                settings=d["settings_obj"],
                description=d["description"],
                subtype=d["subtype"],
            )
            messages.success(
                request, f"{version} registered." if created else f"{version}: same settings, no new version."
            )
            return redirect("research:agent_detail", name=version.config.name)
    else:
        form = RegisterForm()
    registry = kinds.load_all()
    defaults = {k: json.dumps(cls.defaults, indent=1, sort_keys=True) for k, cls in sorted(registry.items())}
    return render(
        request,
        "agents/list.html",
        {
            "configs": selectors.agent_configs(),
            "form": form,
            "defaults": defaults,
            "runs": selectors.agent_runs(limit=10),
        },
    )


@researcher_required
def agent_detail(request: HttpRequest, name: str) -> HttpResponse:
    runs.agentrun_reap_lost()
    config = get_object_or_404(AgentConfig, name=name)
    if request.method == "POST":
        form = StartRunForm(request.POST, config=config)
        if form.is_valid():
            run = runs.agentrun_start(
                version=form.cleaned_data["version"],
                item_set=form.cleaned_data["item_set"],
                user=request.user,
            )
            return redirect("research:agent_run", pk=run.pk)
    else:
        form = StartRunForm(config=config)
    results = selectors.agent_results(config)
    return render(
        request,
        "agents/detail.html",
        {
            "config": config,
            "versions": config.versions.order_by("-number"),
            "form": form,
            "runs": selectors.agent_runs(config=config, limit=30),
            "results": results,
            "curve_svg": curve_points(results["curve"]),
        },
    )


def curve_points(curve: list[dict]) -> dict[str, str]:
    """SVG polyline points (320x120 box) for the agent's and the humans' accuracy by clue."""
    if not curve:
        return {}
    n = max(1, len(curve) - 1)

    def pts(key: str) -> str:
        return " ".join(
            f"{10 + 300 * i / n:.1f},{110 - 100 * (p[key] or 0):.1f}"
            for i, p in enumerate(curve)
            if p[key] is not None
        )

    return {"agent": pts("accuracy"), "human": pts("human_accuracy")}


@researcher_required
def agent_run(request: HttpRequest, pk: int) -> HttpResponse:
    runs.agentrun_reap_lost()
    return render(request, "agents/run.html", {"run": _run(pk)})


@researcher_required
def agent_run_progress(request: HttpRequest, pk: int) -> JsonResponse:
    runs.agentrun_reap_lost()  # the run page polls this: a dead worker's run is resumed or failed while you watch
    return JsonResponse(selectors.agent_run_progress(_run(pk)))


@researcher_required
@require_POST
def agent_run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    run = runs.agentrun_cancel(run=_run(pk))
    messages.info(
        request, "Cancelled." if run.finished else "Cancelling: the run stops after its current batch."
    )
    return redirect("research:agent_run", pk=pk)


@researcher_required
@require_POST
def agent_run_resume(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        runs.agentrun_resume(run=_run(pk))
        messages.success(request, "Queued again: it answers only what has no answer yet.")
    except ValueError as exc:
        messages.error(request, str(exc))
    return redirect("research:agent_run", pk=pk)
