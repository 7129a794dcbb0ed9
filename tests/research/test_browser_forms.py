"""The New-fit and Exports forms in a real browser: every checkbox is on the same line as its own label's
text, just left of it (site.css alone would put the box above the text)."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed")]

GEOMETRY = """() => [...document.querySelectorAll('form input[type=checkbox]')].map(box => {
  const label = box.closest('label');
  const b = box.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(label);
  const rects = [...range.getClientRects()].filter(r => r.width > 0 && (r.left >= b.right - 1));
  const t = rects.length ? rects[0] : null;
  return {name: box.name, text: label ? label.textContent.trim() : null,
          box: [b.left, b.top, b.right, b.bottom], textRect: t ? [t.left, t.top, t.right, t.bottom] : null};
})"""


def _signed_in(browser, live_server):
    """A 1280 x 1400 page signed in as the researcher "res" (password "pw")."""
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    page.goto(f"{live_server.url}/admin/login/?next=/research/fits/new/")
    page.fill("#id_username", "res")
    page.fill("#id_password", "pw")
    page.click("input[type=submit]")
    return page


@pytest.mark.django_db(transaction=True)
def test_checkboxes_sit_beside_their_labels(live_server, django_user_model, monkeypatch, tmp_path):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from tests.research.conftest import make_researcher

    make_researcher(django_user_model.objects.create_user("res", password="pw", is_staff=True))
    shots = os.environ.get("SCREENSHOT_DIR")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = _signed_in(browser, live_server)
        for path in ("/research/fits/new/", "/research/exports/"):
            page.goto(f"{live_server.url}{path}")
            if shots:
                page.screenshot(
                    path=os.path.join(shots, path.strip("/").replace("/", "_") + ".png"), full_page=True
                )
            boxes = page.evaluate(GEOMETRY)
            assert len(boxes) >= 5
            for box in boxes:
                assert box["text"], box
                assert box["textRect"] is not None, f"{path}: no label text right of checkbox {box['name']}"
                left, top, right, bottom = box["box"]
                t_left, t_top, _t_right, t_bottom = box["textRect"]
                middle = (top + bottom) / 2
                assert t_top <= middle <= t_bottom, f"{path}: {box['name']} is not on its text's line: {box}"
                assert 0 <= t_left - right <= 16, (
                    f"{path}: {box['name']}'s text is not just right of it: {box}"
                )
        browser.close()


OVERFLOW = """() => [...document.querySelectorAll('form.fitform .field')].flatMap(field => {
  const f = field.getBoundingClientRect();
  return [...field.querySelectorAll('select, input:not([type=checkbox]):not([type=radio]):not([type=hidden])')].map(c => {
    const r = c.getBoundingClientRect();
    return {name: c.name, field: [f.left, f.right], control: [r.left, r.right]};
  });
})"""


@pytest.mark.django_db(transaction=True)
def test_no_control_runs_past_its_own_field(live_server, django_user_model, monkeypatch):
    """The Grouping select (long option texts) kept its own width and ran under the Group sizes box, hiding
    its arrow; every select and input must end inside its field's column."""
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from tests.research.conftest import make_researcher

    make_researcher(django_user_model.objects.create_user("res", password="pw", is_staff=True))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = _signed_in(browser, live_server)
        for path in ("/research/fits/new/", "/research/exports/"):
            page.goto(f"{live_server.url}{path}")
            controls = page.evaluate(OVERFLOW)
            assert controls, path
            for c in controls:
                assert c["control"][0] >= c["field"][0] - 1 and c["control"][1] <= c["field"][1] + 1, f"{path}: {c}"
        browser.close()
