"""Researcher pages under /annotate/manage/ (researchers only: quizsite.core.roles): campaigns, their statistics, authored items."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from quizsite.core.roles import researcher_required

from . import selectors, services
from .forms import CampaignForm, logins
from .models import AuthoredItem, Campaign
from .tasks import AnnotateError, Task

ITEMS_PER_PAGE = 50  # rows of a campaign page's Items table


@researcher_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotate/manage/list.html", {"campaigns": selectors.campaigns_all()})


@researcher_required
@require_http_methods(["GET", "POST"])
def campaign_new(request: HttpRequest) -> HttpResponse:
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = services.campaign_create(created_by=request.user, **form.cleaned_for_service())
        except AnnotateError as exc:
            form.add_error(None, exc.message)
        else:
            return redirect("annotate:manage_detail", slug=campaign.slug)
    return render(request, "annotate/manage/new.html", {"form": form})


@researcher_required
def campaign_detail(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign.objects.select_related("item_set"), slug=slug)
    stats = selectors.campaign_stats(campaign, timezone.now())
    if request.GET.get("format") == "json":
        return JsonResponse(stats, json_dumps_params={"indent": 2})
    link = request.build_absolute_uri(f"/annotate/{campaign.slug}/")
    # The per-item table a page at a time (a campaign may have thousands of items); every total on the page
    # is computed over the whole campaign by campaign_stats, and the JSON report keeps every item.
    items = Paginator(stats["items"], ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "annotate/manage/detail.html", {
        "campaign": campaign, "stats": stats, "items": items, "link": link, "pending": selectors.authored_pending(campaign)[:50],
        "is_write": campaign.task == Task.ARCHAEOLOGY_WRITE,
        "invited": campaign.invited.order_by("username"),
        "practice_items": campaign.training_items.order_by("external_id").values_list("external_id", flat=True),
    })


@researcher_required
@require_POST
def campaign_toggle(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    campaign.is_open = not campaign.is_open
    campaign.save(update_fields=["is_open"])
    return redirect("annotate:manage_detail", slug=slug)


@researcher_required
@require_POST
def campaign_invitations(request: HttpRequest, slug: str) -> HttpResponse:
    """Invite or uninvite accounts, and switch invite-only on or off, from the campaign's page."""
    campaign = get_object_or_404(Campaign, slug=slug)
    names = logins(request.POST.get("logins", ""))
    try:
        if request.POST.get("action") == "uninvite":
            n = services.campaign_uninvite(campaign=campaign, logins=names)
            messages.success(request, f"Withdrew {n} invitation(s).")
        else:
            n = services.campaign_invite(campaign=campaign, logins=names, invite_only=request.POST.get("invite_only") == "on")
            messages.success(request, f"Invited {n} account(s); {'invited accounts only' if campaign.invite_only else 'open to everyone'}.")
    except AnnotateError as exc:
        messages.error(request, exc.message)
    return redirect("annotate:manage_detail", slug=slug)


@researcher_required
@require_POST
def campaign_score(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    n = services.written_score(campaign=campaign)
    messages.success(request, f"Scored {n} written question(s).")
    return redirect("annotate:manage_detail", slug=slug)


@researcher_required
@require_POST
def authored_review(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    authored = get_object_or_404(AuthoredItem, pk=pk, campaign__slug=slug)
    try:
        item = services.authored_review(
            authored=authored, approve=request.POST.get("decision") == "approve", user=request.user,
            note=request.POST.get("note", ""), now=timezone.now(),
        )
    except AnnotateError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Added item {item.external_id}." if item else "Rejected.")
    return redirect("annotate:manage_detail", slug=slug)
