"""Research pages (researchers only: quizsite.core.roles): fits, results, item predictions, exports, ruling reports. Thin: forms and
selectors do the work, services write."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_POST

from quizsite.agents.models import Agent
from quizsite.core.roles import researcher_required
from quizsite.core.streaming import ThreadedFileResponse, streaming_response
from quizsite.items.models import Item, RulingReport

from . import analyses, exports, plots, selectors, services
from .embedding import EMBEDDER_CHOICES
from .forms import FitForm, LabelsForm, group_sizes_parse
from .models import FitRun
from .prepare import DataSpec


def _run(pk: int) -> FitRun:
    try:
        return selectors.fit_run_get(pk)
    except FitRun.DoesNotExist:
        raise Http404("no such fit") from None


@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    services.fitrun_reap_lost()  # every read of the fits also ends those whose worker died
    return render(request, "research/index.html", {
        "active": selectors.fit_active(),
        "runs": selectors.fit_runs(limit=8),
        "open_reports": RulingReport.objects.filter(status=RulingReport.Status.OPEN).count(),
        "item_sets": selectors.item_sets_with_counts(),
    })


@researcher_required
def fit_list(request: HttpRequest) -> HttpResponse:
    services.fitrun_reap_lost()
    page = Paginator(selectors.fit_runs(), 50).get_page(request.GET.get("page"))
    return render(request, "research/fit_list.html", {"page": page})


@researcher_required
def fit_compare(request: HttpRequest) -> HttpResponse:
    ids = [int(i) for i in request.GET.getlist("ids") if i.isdigit()][:8]
    runs = selectors.fit_runs_compare(ids)
    if len(runs) < 2:
        messages.warning(request, "Tick two or more runs to compare them.")
        return redirect("research:fit_list")
    return render(request, "research/fit_compare.html", {"runs": runs})


@researcher_required
def fit_new(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = FitForm(request.POST)
        if form.is_valid():
            run = services.fitrun_start(spec=form.spec, user=request.user, label=form.cleaned_data["label"],
                                     activate=form.cleaned_data["activate"])
            return redirect("research:fit_detail", pk=run.pk)
    else:
        initial = {}
        if request.GET.get("from", "").isdigit():
            initial = FitForm.initial_from(_run(int(request.GET["from"])).settings)
        form = FitForm(initial=initial)
    return render(request, "research/fit_new.html", {"form": form, "embedders": EMBEDDER_CHOICES})


@researcher_required
def fit_detail(request: HttpRequest, pk: int) -> HttpResponse:
    services.fitrun_reap_lost()
    run = _run(pk)
    context = {"run": run, "dim_names": run.dim_names()}
    if run.status == FitRun.Status.SUCCEEDED:
        context.update({
            "agents": selectors.fit_agents(run),
            "kind_summary": selectors.agent_kind_summary(run),
            "labels_form": LabelsForm(dims=run.dims, labels=run.dim_labels),
            "figures": analyses.fit_figures(run),
        })
    return render(request, "research/fit_detail.html", context)


@researcher_required
def fit_progress(request: HttpRequest, pk: int) -> JsonResponse:
    services.fitrun_reap_lost()  # the detail page polls this: a dead worker's fit turns failed while you watch
    run = FitRun.objects.filter(pk=pk).values("status", "progress", "error", "is_active").first()
    if run is None:
        raise Http404("no such fit")
    return JsonResponse({**run, "error": (run["error"] or "").split("\n")[0]})


@researcher_required
@require_POST
def fit_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    run = services.fitrun_cancel(run=_run(pk))
    messages.info(request, "Cancelled." if run.finished else "Cancelling: the fit stops at its next epoch.")
    return redirect("research:fit_detail", pk=pk)


@researcher_required
@require_POST
def fit_activate(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        services.fitrun_activate(run=_run(pk))
        messages.success(request, f"Fit {pk} is now the active fit.")
    except ValueError as exc:
        messages.error(request, str(exc))
    return redirect("research:fit_detail", pk=pk)


@researcher_required
@require_POST
def fit_labels(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(pk)
    form = LabelsForm(request.POST, dims=run.dims, labels=run.dim_labels)
    if form.is_valid():
        services.fitrun_labels_update(run=run, labels=form.labels())
        messages.success(request, "Dimension names saved.")
    return redirect("research:fit_detail", pk=pk)


@researcher_required
@cache_control(private=True, max_age=60)
def fit_plot(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    run = _run(pk)
    if name not in plots.PLOTS:
        raise Http404("no such plot")
    return HttpResponse(plots.PLOTS[name](run), content_type="image/svg+xml")


@researcher_required
def fit_items(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(pk)
    if run.status != FitRun.Status.SUCCEEDED:
        raise Http404("this fit has no items")
    cluster = request.GET.get("cluster")
    rows = selectors.fit_items(run, cluster=int(cluster) if cluster and cluster.isdigit() else None,
                               order=request.GET.get("order", "-effective_total"), search=request.GET.get("q", "").strip())
    page = Paginator(rows, 100).get_page(request.GET.get("page"))
    return render(request, "research/fit_items.html", {
        "run": run, "page": page, "dim_names": run.dim_names(), "cluster": cluster or "", "order": request.GET.get("order", ""),
        "q": request.GET.get("q", ""), "unseen": selectors.items_without_fit(run),
    })


@researcher_required
def fit_item(request: HttpRequest, pk: int, item_pk: int) -> HttpResponse:
    run = _run(pk)
    if run.status != FitRun.Status.SUCCEEDED:
        raise Http404("this fit has no model")
    item = get_object_or_404(Item.objects.select_related("item_set"), pk=item_pk)
    whole = selectors.tossup_of_prefix(item)
    if whole is not None:  # show the whole tossup, every prefix side by side
        return redirect("research:fit_item", pk=pk, item_pk=whole.pk)
    return render(request, "research/fit_item.html", {"run": run, "view": selectors.item_predictions(run, item)})


@researcher_required
def reports(request: HttpRequest) -> HttpResponse:
    return render(request, "research/reports.html", {"open": selectors.reports_open(), "recent": selectors.reports_recent()})


@researcher_required
@require_POST
def report_resolve(request: HttpRequest, pk: int) -> HttpResponse:
    report = get_object_or_404(RulingReport, pk=pk)
    decision = request.POST.get("decision", "")
    if decision not in ("uphold", "accept", "reject"):
        messages.error(request, "Choose uphold, accept or reject.")
        return redirect("research:reports")
    try:
        services.report_resolve(report=report, by=request.user, overrule=decision != "uphold",
                                verdict=decision if decision != "uphold" else "accept", note=request.POST.get("note", ""))
        messages.success(request, f"Report {pk}: {'ruling upheld' if decision == 'uphold' else 'overruled, now ' + decision}.")
    except ValueError as exc:
        messages.error(request, str(exc))
    return redirect("research:reports")


# --- exports -------------------------------------------------------------------------------------------


def _export_spec(request: HttpRequest) -> DataSpec:
    """The export's filters from the query string; ValueError (a 400) for a bad value or an unknown name."""
    g = request.GET
    spec = DataSpec(
        item_sets=[s for s in g.getlist("item_set") if s], item_kinds=[k for k in g.getlist("item_kind") if k],
        agent_kinds=[k for k in g.getlist("agent_kind") if k] or [k.value for k in Agent.Kind],
        since=g.get("since", ""), until=g.get("until", ""), grouping=g.get("grouping", "individual"),
        group_sizes=group_sizes_parse(g.get("group_sizes", "1,5,10,15")),
        groups_per_size=_groups_per_size(g.get("groups_per_size", "")),
        include_practice=g.get("include_practice") in ("1", "on", "true"),
        campaigns=[c for c in g.getlist("campaign") if c],
    )
    selectors.data_spec_names_check(spec)
    return spec


def _groups_per_size(text: str) -> int:
    if not text.strip():
        return 5
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"groups per size must be a positive whole number, not {text.strip()[:40]!r}")
    return int(text)


@researcher_required
def export_page(request: HttpRequest) -> HttpResponse:
    return render(request, "research/exports.html", {
        "item_sets": selectors.item_sets_with_counts(), "item_kinds": Item.Kind.choices, "agent_kinds": Agent.Kind.choices,
        "campaigns": selectors.export_campaigns(),
        "runs": selectors.fit_runs().filter(status=FitRun.Status.SUCCEEDED)[:20],
    })


@researcher_required
def export_responses(request: HttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    if fmt not in exports.FORMATS:
        raise Http404("unknown format")
    try:
        spec = _export_spec(request)
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    content_type, ext = exports.FORMATS[fmt]
    return streaming_response(exports.stream_responses(fmt, spec), content_type=content_type, filename=f"responses.{ext}")


@researcher_required
def export_caimira(request: HttpRequest) -> HttpResponse | ThreadedFileResponse:
    """The caimira folder as a zip (built in a temporary file: it is the prepared data, not the raw table)."""
    try:
        spec = _export_spec(request)
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    archive = tempfile.TemporaryFile()  # noqa: SIM115 - FileResponse closes it, which deletes it
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "caimira"
        exports.caimira_export(spec=spec, directory=folder)
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(folder.iterdir()):
                zf.write(path, f"caimira/{path.name}")
    archive.seek(0)
    return ThreadedFileResponse(archive, as_attachment=True, filename="caimira.zip")  # read block by block under ASGI too


@researcher_required
def export_fit(request: HttpRequest, pk: int, what: str, fmt: str) -> StreamingHttpResponse:
    run = _run(pk)
    if what in exports.FIGURES and run.status == FitRun.Status.SUCCEEDED:
        try:
            chunks = exports.figure_export(run, what, fmt)
        except ValueError:
            raise Http404("nothing to export") from None
        return streaming_response(chunks, content_type="application/json" if fmt == "json" else exports.FORMATS["csv"][0],
                                  filename=f"fit-{run.pk}-{what}.{fmt}")
    if run.status != FitRun.Status.SUCCEEDED or what not in ("agents", "items") or fmt not in ("csv", "jsonl"):
        raise Http404("nothing to export")
    return streaming_response(exports.stream_fit(run, what, fmt), content_type=exports.FORMATS[fmt][0],
                              filename=f"fit-{run.pk}-{what}.{fmt}")


@researcher_required
def romqa(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """RoMQA's figures per agent, humans and AI systems alike; `?format=csv|json` downloads them."""
    sets = [s for s in request.GET.getlist("item_set") if s]
    rows = analyses.romqa_by_agent(sets or None)
    fmt = request.GET.get("format", "")
    if fmt == "json":
        return JsonResponse({"item_sets": sets, "agents": rows})
    if fmt == "csv":
        columns = ["agent", "kind", "group", "n_answers", "n_clusters", "f1", "accuracy", "robust_f1", "robust_accuracy"]
        return streaming_response(exports.stream_csv((tuple(r[c] for c in columns) for r in rows), columns),
                                  content_type=exports.FORMATS["csv"][0], filename="romqa.csv")
    romqa_sets = selectors.item_sets_with_counts().filter(items__kind=Item.Kind.ROMQA).distinct()
    return render(request, "research/romqa.html", {"rows": rows, "item_sets": romqa_sets, "chosen": sets})
