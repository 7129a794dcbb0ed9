"""Writes of the research app other than fit runs (those are in fits.py): ruling reports and overrides.

A researcher's ruling never rewrites the original response: it is a ResponseOverride row beside it
(who, when, new verdict), and exports carry both. The fit's data preparation uses the latest override.
"""

from __future__ import annotations

from django.db import transaction

from quizsite.items.models import Response, ResponseOverride, RulingReport

VERDICT_CORRECT: dict[str, bool | None] = {Response.Verdict.ACCEPT: True, Response.Verdict.REJECT: False, Response.Verdict.PROMPT: None}


def response_override(*, response: Response, by, verdict: str, note: str = "") -> ResponseOverride:
    """Record a new verdict for a response (accept or reject; the original row stays as it was)."""
    if verdict not in (Response.Verdict.ACCEPT, Response.Verdict.REJECT):
        raise ValueError("an override is accept or reject")
    return ResponseOverride.objects.create(
        response=response, by=by, verdict=verdict, correct=VERDICT_CORRECT[verdict], note=note[:500]
    )


def report_resolve(*, report: RulingReport, by, overrule: bool, verdict: str = Response.Verdict.ACCEPT, note: str = "") -> RulingReport:
    """Answer a player's report: uphold the ruling, or overrule it with a new verdict.

    Every open report on the same response gets the same answer (several players may report one ruling).
    """
    with transaction.atomic():
        report = RulingReport.objects.select_for_update().select_related("response").get(pk=report.pk)
        if report.status != RulingReport.Status.OPEN:
            raise ValueError("this report was already resolved")
        status = RulingReport.Status.OVERRULED if overrule else RulingReport.Status.UPHELD
        if overrule:
            response_override(response=report.response, by=by, verdict=verdict, note=note or report.comment)
        RulingReport.objects.filter(response=report.response, status=RulingReport.Status.OPEN).update(status=status)
        report.refresh_from_db()
        return report
