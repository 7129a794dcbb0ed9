"""An annotator types a spreadsheet formula as an answer: the responses table keeps it exactly, the CSV
export carries it as text (a leading single quote), JSON lines carries it exactly."""

from __future__ import annotations

import csv
import io
import json

from quizsite.items.models import Response
from quizsite.research import exports

FORMULA = '=HYPERLINK("http://x","click")'


def test_typed_formula_is_kept_and_exported_as_text(make_campaign, client):
    make_campaign("ghigliottina-open", "ghig")
    client.get("/annotate/c/?PROLIFIC_PID=typist")
    client.post("/annotate/c/", {"agree": "yes"})
    assignment = client.get("/annotate/c/item/").context["assignment"]
    client.post("/annotate/c/item/", {"assignment": assignment.pk, "action": "answer", "text": FORMULA})
    response = Response.objects.get()
    assert response.given == FORMULA and response.source == "annotation"
    rows = list(csv.DictReader(io.StringIO(b"".join(exports.stream_responses("csv")).decode())))
    assert [r["given"] for r in rows] == ["'" + FORMULA]
    lines = [json.loads(x) for x in b"".join(exports.stream_responses("jsonl")).decode().splitlines()]
    assert [r["given"] for r in lines] == [FORMULA]
