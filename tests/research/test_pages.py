"""Research pages: researchers only, the fit form starts a run, results render with server-made SVG plots."""

from __future__ import annotations

import pytest
from django.urls import reverse

from quizsite.items.models import Item
from quizsite.research import fits, services
from quizsite.research.fits import FitSpec
from quizsite.research.models import FitRun

FAST = {"embedder": "hashing-32", "max_epochs": 30, "dims": 2}


@pytest.fixture
def fitted(world, research_cache):
    run = services.fitrun_create(spec=FitSpec(**FAST), label="tiny")
    return fits.fit_run_execute(fit_id=run.pk)


@pytest.fixture
def browser(client, staff):
    client.force_login(staff)
    return client


def test_pages_are_for_researchers_only(client, django_user_model, fitted):
    for url in (reverse("research:index"), reverse("research:fit_detail", args=[fitted.pk]), reverse("research:reports"),
                reverse("research:export_responses", args=["csv"])):
        assert client.get(url).status_code == 302  # to the admin login
    client.force_login(django_user_model.objects.create_user("player"))
    assert client.get(reverse("research:index")).status_code == 403  # signed in, not a researcher (test_roles.py)


def test_fit_form_starts_a_run(browser, world, research_cache, django_capture_on_commit_callbacks):
    page = browser.get(reverse("research:fit_new"))
    assert page.status_code == 200 and b"Start fit" in page.content
    data = {"agent_kinds": ["human", "ai"], "grouping": "individual", "group_sizes": "1,5", "model": "caimira", "dims": 2,
            "embedder": "hashing-32", "template": "{text}", "max_epochs": 20, "val_fraction": 0.1, "seed": 0, "n_clusters": 3,
            "label": "from the form", "activate": "on", "item_sets": ["world"]}
    with django_capture_on_commit_callbacks(execute=True):
        response = browser.post(reverse("research:fit_new"), data)
    run = FitRun.objects.get(label="from the form")
    assert response.status_code == 302 and response["Location"] == reverse("research:fit_detail", args=[run.pk])
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    assert run.settings["template"] == "{text}" and run.settings["data"]["item_sets"] == ["world"]
    again = browser.get(reverse("research:fit_new") + f"?from={run.pk}")
    assert b'value="{text}"' in again.content


def test_fit_form_rejects_bad_embedder(browser, world):
    data = {"agent_kinds": ["ai"], "grouping": "individual", "group_sizes": "1", "model": "caimira", "dims": 2,
            "embedder": "hashing-zz", "template": "default", "val_fraction": 0.1, "seed": 0, "n_clusters": 3}
    response = browser.post(reverse("research:fit_new"), data)
    assert response.status_code == 200 and b"hashing-&lt;dimension&gt;" in response.content
    assert not FitRun.objects.exists()


def test_fit_detail_plots_and_tables(browser, fitted):
    page = browser.get(reverse("research:fit_detail", args=[fitted.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "Agent skills by kind" in html and "bot-0" in html
    assert "Player 0" not in html  # humans appear under their pseudonym only
    for name in ("skills", "relevance", "clusters", "history"):
        svg = browser.get(reverse("research:fit_plot", args=[fitted.pk, name]))
        assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    progress = browser.get(reverse("research:fit_progress", args=[fitted.pk])).json()
    assert progress["status"] == "succeeded" and progress["progress"]["phase"] == "succeeded"


def test_dimension_labels_are_editable(browser, fitted):
    browser.post(reverse("research:fit_labels", args=[fitted.pk]), {"dim_0": "Science", "dim_1": ""})
    fitted.refresh_from_db()
    assert fitted.dim_names() == ["Science", "dim 2"]
    assert b"Science" in browser.get(reverse("research:fit_plot", args=[fitted.pk, "skills"])).content


def test_item_view_predictions_and_cold_start(browser, fitted):
    item = Item.objects.get(item_set__slug="world", external_id="t0")
    page = browser.get(reverse("research:fit_item", args=[fitted.pk, item.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "world/t0_3" in html and ("✓" in html or "✗" in html)
    fresh = Item.objects.create(item_set=item.item_set, external_id="new", kind="tossup", text="Brand new. Never played.",
                                answer="Nothing", data={"words": ["Brand", "new.", "Never", "played."], "clue_ends": [2, 4], "power_index": None})
    listing = browser.get(reverse("research:fit_items", args=[fitted.pk])).content.decode()
    assert "world/new" in listing and "cold start" in listing.lower()
    cold = browser.get(reverse("research:fit_item", args=[fitted.pk, fresh.pk])).content.decode()
    assert cold.count("cold start") >= 2 and "world/new_2" in cold


def test_compare_activate_cancel(browser, fitted, world, research_cache):
    second = fits.fit_run_execute(fit_id=services.fitrun_create(spec=FitSpec(**{**FAST, "model": "1pl"}), activate=False).pk)
    page = browser.get(reverse("research:fit_compare") + f"?ids={fitted.pk}&ids={second.pk}")
    assert page.status_code == 200 and b"1pl" in page.content and b"caimira" in page.content
    browser.post(reverse("research:fit_activate", args=[second.pk]))
    assert FitRun.objects.get(is_active=True).pk == second.pk
    queued = services.fitrun_create(spec=FitSpec(**FAST))
    browser.post(reverse("research:fit_cancel", args=[queued.pk]))
    queued.refresh_from_db()
    assert queued.status == "cancelled"
    listing = browser.get(reverse("research:fit_list")).content.decode()
    assert f"#{queued.pk}" in listing and "Cancelled" in listing
    assert browser.get(reverse("research:index")).status_code == 200


def test_validation_figures_say_how_many_rulings_they_rest_on(browser, fitted):
    """A fit on a handful of rulings can show validation accuracy 1.000 from a single ruling: the fit page
    and the compare table say how many rulings the training and validation figures rest on."""
    n_train, n_val = fitted.metrics["n_train"], fitted.metrics["n_val"]
    assert n_train > 0 and n_val > 0
    detail = browser.get(reverse("research:fit_detail", args=[fitted.pk])).content.decode()
    assert f"on {n_train} rulings" in detail and f"on {n_val} rulings" in detail
    failed = FitRun.objects.create(status=FitRun.Status.FAILED, settings=fitted.settings, error="ValueError: boom")
    page = browser.get(reverse("research:fit_compare") + f"?ids={fitted.pk}&ids={failed.pk}").content.decode()
    assert "<th>Train / val rulings</th>" in page and f"<td>{n_train} / {n_val}</td>" in page
