"""Annotator pages: consent, instructions, one item at a time, feedback on training items, the end page.

Identity: a crowd id in the URL (`PROLIFIC_PID`, or MTurk's `workerId`) names the annotator; otherwise the
signed-in account; otherwise a guest key kept in the session (as in play). The participant id is kept in
the session per campaign, so a reload or a return visit resumes where the annotator left off.

A crowd id is no secret, so it names an annotator only in the browser that presented it first
(`services.crowd_identity_claim`, keyed by a random token in the session): any other browser presenting it
gets a 403 page that says the id is in use elsewhere and nothing more. The owning browser needs the id only
once; later URLs without it resume from the session. The end page shows the completion code only after the
campaign's minimum of real answers (`selectors.participant_completion`).

An invite-only campaign (`Campaign.invite_only`) admits only its invited accounts and researchers
(`quizsite.core.roles.may_join_campaign`): an anonymous visitor is sent to sign in, anyone else gets a 403
page; a withdrawn invitation stops the next page, not only the next consent.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from quizsite.agents.models import Agent
from quizsite.agents.services import (
    agent_get_or_create_external,
    agent_get_or_create_for_user,
    agent_get_or_create_guest,
    new_guest_key,
)

from . import selectors, services
from .models import Assignment, Campaign, Participant
from .tasks import AnnotateError, Task

CROWD_IDS = {"PROLIFIC_PID": "prolific", "workerId": "mturk"}
CROWD_EXTRA = ("STUDY_ID", "SESSION_ID", "assignmentId", "hitId")
BROWSER_KEY = "annotate:browser"  # the session's random token that owns its crowd ids


def _session_key(campaign: Campaign) -> str:
    return f"annotate:{campaign.slug}"


def session_remap_participants(session: Any, mapping: dict[int, int]) -> None:
    """After a guest's participants were merged into an account's (quizsite.accounts), point the session's
    campaigns at the kept participants, so the annotator resumes where they were."""
    for key in list(session.keys()):
        if key.startswith("annotate:") and key.count(":") == 1 and session[key] in mapping:
            session[key] = mapping[session[key]]


def _browser_token(request: HttpRequest) -> str:
    token = request.session.get(BROWSER_KEY)
    if not token:
        token = request.session[BROWSER_KEY] = secrets.token_urlsafe(32)
    return token


def _crowd_owned(request: HttpRequest, external: str) -> bool:
    """True without a crowd id, or when this browser owns it (claimed now if nobody had)."""
    return not external or services.crowd_identity_claim(external_id=external, browser_token=_browser_token(request))


def _crowd_in_use(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """The same page whoever the id belongs to and whatever they did: it names nothing of them."""
    return render(request, "annotate/crowd_in_use.html", {"campaign": campaign}, status=403)


def _invitation_refused(request: HttpRequest, campaign: Campaign) -> HttpResponse | None:
    """None when the visitor may take part; else: sign in (anonymous) or a 403 page (not invited)."""
    if selectors.campaign_admits(campaign, request.user):
        return None
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return render(request, "annotate/invite_only.html", {"campaign": campaign}, status=403)


def _participant(request: HttpRequest, campaign: Campaign) -> Participant | None:
    """The session's participant; a crowd participant only while this browser still owns the crowd id
    (a researcher may release it to another browser), which it claims here if it was never claimed."""
    pid = request.session.get(_session_key(campaign))
    if not pid:
        return None
    participant = Participant.objects.select_related("agent", "campaign__item_set").filter(pk=pid, campaign=campaign).first()
    if participant is not None and not _crowd_owned(request, participant.external_id):
        request.session.pop(_session_key(campaign), None)
        return None
    return participant


def _crowd(request: HttpRequest) -> dict[str, str]:
    """Crowd parameters from the URL, kept in the session until consent is given."""
    found = {k: request.GET[k].strip()[:100] for k in (*CROWD_IDS, *CROWD_EXTRA) if request.GET.get(k, "").strip()}
    return found


def _crowd_external(crowd: dict[str, str]) -> str:
    """`prolific:<PROLIFIC_PID>` or `mturk:<workerId>`; empty without a crowd id."""
    for param, platform in CROWD_IDS.items():
        if crowd.get(param):
            return f"{platform}:{crowd[param]}"
    return ""


def _agent(request: HttpRequest, crowd: dict[str, str]) -> tuple[Agent, str]:
    external = _crowd_external(crowd)
    if external:
        platform = external.split(":", 1)[0]
        return agent_get_or_create_external(kind=Agent.Kind.HUMAN, external_id=external, name=f"{platform} worker"), external
    if request.user.is_authenticated:
        return agent_get_or_create_for_user(user=request.user), ""
    if not request.session.get("guest_key"):
        request.session["guest_key"] = new_guest_key()
    return agent_get_or_create_guest(guest_key=request.session["guest_key"], name="annotator"), ""


def index(request: HttpRequest) -> HttpResponse:
    return render(request, "annotate/index.html", {"campaigns": selectors.campaigns_open()})


@require_http_methods(["GET", "POST"])
def start(request: HttpRequest, slug: str) -> HttpResponse:
    """Consent. A new crowd id in the URL starts a new participant even on a browser used before; a crowd id
    another browser presented first is refused (403) before anything else happens."""
    campaign = get_object_or_404(Campaign.objects.select_related("item_set"), slug=slug)
    refused = _invitation_refused(request, campaign)
    if refused is not None:
        return refused
    crowd_key = f"{_session_key(campaign)}:crowd"
    crowd = _crowd(request)
    external = _crowd_external(crowd)
    if external and not _crowd_owned(request, external):
        return _crowd_in_use(request, campaign)
    stored = request.session.get(crowd_key, {})
    if not external and not _crowd_owned(request, _crowd_external(stored)):
        request.session.pop(crowd_key, None)
        request.session.pop(_session_key(campaign), None)
        return _crowd_in_use(request, campaign)
    participant = _participant(request, campaign)
    if external:
        if participant and participant.external_id != external:
            request.session.pop(_session_key(campaign), None)
            participant = None
        request.session[crowd_key] = crowd
    elif crowd and not _crowd_external(stored):
        request.session[crowd_key] = crowd  # study parameters without a worker id
    if participant and participant.consented_at:
        return redirect("annotate:item", slug=slug)
    if not campaign.is_open:
        return render(request, "annotate/closed.html", {"campaign": campaign}, status=410)
    error = ""
    if request.method == "POST":
        if request.POST.get("agree") != "yes":
            error = "To take part, tick the box to say you agree."
        else:
            crowd = request.session.get(crowd_key, {})
            agent, external = _agent(request, crowd)  # the crowd id in the session was claimed above
            participant = services.participant_get_or_create(
                campaign=campaign, agent=agent, external_id=external, meta={k: v for k, v in crowd.items() if k in CROWD_EXTRA}
            )
            services.participant_consent(participant=participant, now=timezone.now())
            request.session[_session_key(campaign)] = participant.pk
            return redirect("annotate:instructions", slug=slug)
    return render(request, "annotate/consent.html", {"campaign": campaign, "error": error})


def _require(request: HttpRequest, slug: str) -> tuple[Campaign, Participant | None]:
    campaign = get_object_or_404(Campaign.objects.select_related("item_set"), slug=slug)
    if not selectors.campaign_admits(campaign, request.user):
        return campaign, None  # back to the start page, which says why (an invitation withdrawn, signed out)
    participant = _participant(request, campaign)
    if participant is None or participant.consented_at is None:
        return campaign, None
    return campaign, participant


def instructions(request: HttpRequest, slug: str) -> HttpResponse:
    campaign, participant = _require(request, slug)
    if participant is None:
        return redirect("annotate:start", slug=slug)
    return render(request, "annotate/instructions.html", {"campaign": campaign})


@require_http_methods(["GET", "POST"])
def item(request: HttpRequest, slug: str) -> HttpResponse:
    campaign, participant = _require(request, slug)
    if participant is None:
        return redirect("annotate:start", slug=slug)
    if campaign.task == Task.ARCHAEOLOGY_AUTHOR:
        return _author(request, campaign, participant)
    now = timezone.now()
    if request.method == "POST":
        try:
            assignment_id = int(request.POST.get("assignment", ""))
        except ValueError:
            messages.error(request, "That form was out of date; here is your current item.")
            return redirect("annotate:item", slug=slug)
        try:
            if request.POST.get("action") == "skip":
                services.assignment_skip(
                    participant=participant, assignment_id=assignment_id, now=now,
                    note=services.skip_note(reason=request.POST.get("reason", ""), note=request.POST.get("note", "")),
                )
            else:
                submitted = services.assignment_submit(
                    participant=participant, assignment_id=assignment_id, post=request.POST, now=now
                )
                if submitted.feedback is not None:
                    request.session[f"{_session_key(campaign)}:feedback"] = submitted.feedback
                    return redirect("annotate:feedback", slug=slug)
        except AnnotateError as exc:
            messages.error(request, exc.message)
        return redirect("annotate:item", slug=slug)

    assignment = services.assignment_current(participant=participant, now=now)
    if assignment is None:
        return redirect("annotate:done", slug=slug)
    remaining_ms = None
    if campaign.task == Task.GHIGLIOTTINA_OPEN:
        started = assignment.served_at or now
        remaining_ms = max(0, campaign.timer_seconds * 1000 - services.ms_between(now, started))
    return render(
        request,
        "annotate/item.html",
        {
            "campaign": campaign,
            "assignment": assignment,
            "item": assignment.item,
            "choices": assignment.choices or [],
            "task_template": f"annotate/tasks/{campaign.task}.html",
            "training": assignment.role == Assignment.Role.TRAINING,
            "progress": selectors.participant_progress(participant),
            "remaining_ms": remaining_ms,
            "skip_reasons": list(services.SKIP_REASONS.items()),
            "choice_keys": min(len(assignment.choices or []), 9),
        },
    )


def _author(request: HttpRequest, campaign: Campaign, participant: Participant) -> HttpResponse:
    now = timezone.now()
    started_key = f"{_session_key(campaign)}:author_started"
    if participant.finished_at:
        return redirect("annotate:done", slug=campaign.slug)
    if request.method == "POST":
        started = request.session.get(started_key)
        duration = int(now.timestamp() * 1000) - started if started else None
        try:
            services.authored_submit(
                participant=participant,
                question=request.POST.get("question", ""),
                text=request.POST.get("text", ""),
                other_1=request.POST.get("other_question_1", ""),
                other_2=request.POST.get("other_question_2", ""),
                duration_ms=duration,
            )
        except AnnotateError as exc:
            messages.error(request, exc.message)
            return render(request, "annotate/author.html", {
                "campaign": campaign, "form": request.POST, "progress": selectors.participant_progress(participant),
            })
        request.session.pop(started_key, None)
        if services.authored_finish_if_done(participant=participant, now=now):
            return redirect("annotate:done", slug=campaign.slug)
        return redirect("annotate:item", slug=campaign.slug)
    request.session.setdefault(started_key, int(now.timestamp() * 1000))
    return render(request, "annotate/author.html", {
        "campaign": campaign, "form": {}, "progress": selectors.participant_progress(participant),
    })


def feedback(request: HttpRequest, slug: str) -> HttpResponse:
    campaign, participant = _require(request, slug)
    if participant is None:
        return redirect("annotate:start", slug=slug)
    shown = request.session.pop(f"{_session_key(campaign)}:feedback", None)
    if shown is None:
        return redirect("annotate:item", slug=slug)
    return render(request, "annotate/feedback.html", {"campaign": campaign, "feedback": shown})


def done(request: HttpRequest, slug: str) -> HttpResponse:
    campaign, participant = _require(request, slug)
    if participant is None:
        return redirect("annotate:start", slug=slug)
    if participant.finished_at is None and campaign.is_open:
        return redirect("annotate:item", slug=slug)
    return render(
        request,
        "annotate/done.html",
        {
            "campaign": campaign,
            "participant": participant,
            "tally": selectors.participant_tally(participant),
            "authoring": campaign.task == Task.ARCHAEOLOGY_AUTHOR,
            "completion": selectors.participant_completion(participant),
        },
    )
