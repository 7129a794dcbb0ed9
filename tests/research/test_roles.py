"""Who may use the research side: one rule (quizsite.core.roles) for research pages, exports, ruling
reviews, the annotation manage pages and the API. Plain staff are refused with 403; a researcher (a
superuser, or a member of the `researcher` group) passes; anonymous visitors are sent to sign in."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, reverse
from rest_framework.test import APIClient

from quizsite.annotate import urls as annotate_urls
from quizsite.items.models import Response, ResponseOverride, RulingReport
from quizsite.research import services
from quizsite.research import urls as research_urls
from quizsite.research.fits import FitSpec
from quizsite.research.models import FitRun


def _guarded() -> list[tuple[str, URLPattern]]:
    """Every research URL and every annotate manage URL, by name: a new view is covered without editing this."""
    research = [("research", p) for p in research_urls.urlpatterns if isinstance(p, URLPattern)]
    manage = [("annotate", p) for p in annotate_urls.urlpatterns
              if isinstance(p, URLPattern) and p.name and p.name.startswith("manage")]
    return research + manage


GUARDED = _guarded()


@pytest.fixture
def objects(world, make_campaign_for_roles) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Real objects for the URL arguments, so a researcher reaches the view and not a 404 for a missing pk."""
    run = services.fitrun_create(spec=FitSpec(embedder="hashing-16"))
    response = Response.objects.filter(agent__kind="human").order_by("id").first()
    report = RulingReport.objects.create(response=response, reporter=response.agent, comment="I was right")
    campaign = make_campaign_for_roles()
    return {"run": run, "report": report, "item": world["items"][0], "campaign": campaign}


@pytest.fixture
def make_campaign_for_roles(db, tmp_path):  # type: ignore[no-untyped-def]
    def make():  # type: ignore[no-untyped-def]
        from quizsite.annotate.services import campaign_create
        from quizsite.items.models import ItemSet

        return campaign_create(slug="roles", item_set=ItemSet.objects.get(slug="world"), task="archaeology-author")

    return make


def _url(namespace: str, pattern: URLPattern, objects: dict[str, Any]) -> str:
    values = {"pk": objects["run"].pk, "item_pk": objects["item"].pk, "name": "skills", "fmt": "csv", "what": "agents",
              "slug": objects["campaign"].slug}
    if namespace == "research" and pattern.name == "report_resolve":
        values["pk"] = objects["report"].pk
    if namespace == "annotate" and pattern.name == "manage_review":
        values["pk"] = 1
    kwargs = {k: values[k] for k in pattern.pattern.converters}
    return reverse(f"{namespace}:{pattern.name}", kwargs=kwargs)


def _login(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def researcher_group() -> Group:
    return Group.objects.get_or_create(name="researcher")[0]


def test_the_guarded_list_is_not_empty():
    names = {f"{ns}:{p.name}" for ns, p in GUARDED}
    for expected in ("research:index", "research:exports", "research:export_responses", "research:export_caimira",
                     "research:export_fit", "research:reports", "research:report_resolve", "annotate:manage",
                     "annotate:manage_new", "annotate:manage_detail", "annotate:manage_review"):
        assert expected in names


def test_plain_staff_are_refused_everywhere_with_403(objects, django_user_model):
    staff = _login(django_user_model.objects.create_user("clerk", is_staff=True))
    player = _login(django_user_model.objects.create_user("player"))
    for namespace, pattern in GUARDED:
        url = _url(namespace, pattern, objects)
        for who, client in (("staff", staff), ("player", player)):
            for method in (client.get, client.post):
                answer = method(url)
                assert answer.status_code == 403, (who, method.__name__, url, answer.status_code)
                assert b"Staff status alone is not enough" in answer.content
    # and nothing was done by the POSTs
    assert RulingReport.objects.get(pk=objects["report"].pk).status == "open" and not ResponseOverride.objects.exists()
    assert FitRun.objects.get(pk=objects["run"].pk).status == "queued"
    assert objects["campaign"].__class__.objects.get(pk=objects["campaign"].pk).is_open


def test_anonymous_visitors_are_sent_to_sign_in(objects):
    client = Client()
    for namespace, pattern in GUARDED:
        answer = client.get(_url(namespace, pattern, objects))
        assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/"), pattern.name


@pytest.mark.parametrize("kind", ["group member", "superuser", "staff group member"])
def test_researchers_pass_everywhere(objects, django_user_model, kind):
    if kind == "superuser":
        user = django_user_model.objects.create_superuser("boss", password="pw")
    else:
        user = django_user_model.objects.create_user("analyst", is_staff=kind.startswith("staff"))
        user.groups.add(researcher_group())
    client = _login(user)
    for namespace, pattern in GUARDED:
        answer = client.get(_url(namespace, pattern, objects))
        assert answer.status_code not in (401, 403), (pattern.name, answer.status_code)
        if answer.status_code == 302:
            assert not answer["Location"].startswith("/accounts/login/"), pattern.name
    assert client.get(reverse("research:index")).status_code == 200
    assert client.get(reverse("annotate:manage")).status_code == 200


def test_report_overrule_needs_a_researcher(objects, django_user_model):
    url = reverse("research:report_resolve", args=[objects["report"].pk])
    staff = _login(django_user_model.objects.create_user("clerk", is_staff=True))
    assert staff.post(url, {"decision": "accept"}).status_code == 403
    assert not ResponseOverride.objects.exists()
    member = django_user_model.objects.create_user("analyst")
    member.groups.add(researcher_group())
    assert _login(member).post(url, {"decision": "accept"}).status_code == 302
    assert ResponseOverride.objects.get().verdict == "accept"


def test_api_follows_the_same_rule(world, django_user_model):
    from rest_framework.authtoken.models import Token

    def token_client(user) -> APIClient:  # type: ignore[no-untyped-def]
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
        return api

    staff = django_user_model.objects.create_user("clerk", is_staff=True)
    boss = django_user_model.objects.create_superuser("boss", password="pw")
    for url in ("/api/responses/", "/api/schema/"):
        assert token_client(staff).get(url).status_code == 403
        assert token_client(boss).get(url).status_code == 200


def test_inactive_researchers_are_refused(django_user_model):
    from quizsite.core.roles import is_researcher

    member = django_user_model.objects.create_user("gone", is_active=False)
    member.groups.add(researcher_group())
    assert not is_researcher(member)
    assert is_researcher(django_user_model.objects.create_superuser("boss", password="pw"))
    assert not is_researcher(django_user_model.objects.create_user("clerk", is_staff=True))
