"""The fit page's live progress in a real browser: epoch and losses follow the run's progress row, and the
page reloads into the results once the run has finished."""

from __future__ import annotations

import shutil

import pytest
from django.utils import timezone

from quizsite.core import liveness
from quizsite.research import services
from quizsite.research.fits import FitSpec
from quizsite.research.models import FitRun

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed")]


@pytest.mark.django_db(transaction=True)
def test_live_progress_updates_then_reloads(live_server, django_user_model, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop in this thread

    from tests.research.conftest import make_researcher

    make_researcher(django_user_model.objects.create_user("res", password="pw", is_staff=True))
    run = services.fitrun_create(spec=FitSpec(embedder="hashing-16"))
    # running in this (live) process, with a fresh heartbeat: the page views must not reap it
    FitRun.objects.filter(pk=run.pk).update(status="running", attempts=1, worker=liveness.identity(), heartbeat_at=timezone.now(),
                                            progress={"phase": "fitting", "epoch": 3, "max_epochs": 3000,
                                                      "train_loss": 0.7, "val_loss": 0.69, "best_epoch": 3,
                                                      "best_loss": 0.69, "patience": 100, "patience_left": 100})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(f"{live_server.url}/admin/login/?next=/research/fits/{run.pk}/")
        page.fill("#id_username", "res")
        page.fill("#id_password", "pw")
        page.click("input[type=submit]")
        page.wait_for_selector("#epoch")
        for epoch, loss, best in ((10, 0.61, 10), (125, 0.52, 100)):
            FitRun.objects.filter(pk=run.pk).update(progress={
                "phase": "fitting", "epoch": epoch, "max_epochs": 3000, "train_loss": loss + 0.01, "val_loss": loss,
                "best_epoch": best, "best_loss": 0.5, "patience": 100, "patience_left": 100 - (epoch - best)})
            page.wait_for_function(f"document.getElementById('epoch').textContent === '{epoch}'", timeout=5000)
        assert page.text_content("#val-loss") == "0.5200"
        assert page.text_content("#best-epoch") == "100" and page.text_content("#patience-left") == "75"
        # the bar is how close early stopping is (25 epochs without improvement of 100), not epoch / max_epochs
        assert page.eval_on_selector("#progress-bar", "el => el.style.width") == "25%"
        assert page.eval_on_selector("#loss-spark", "el => el.querySelectorAll('polyline').length") == 1
        FitRun.objects.filter(pk=run.pk).update(status="failed", error="ValueError: boom", progress={"phase": "failed"})
        page.wait_for_selector(".error-box", timeout=8000)  # the page reloaded into the finished run
        assert "ValueError: boom" in page.text_content(".error-box") and page.query_selector("#epoch") is None
        browser.close()
