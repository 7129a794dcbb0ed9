"""The New-fit and Exports forms in a real browser: every checkbox is on the same line as its own label's
text, just left of it (site.css alone would put the box above the text)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import PHONE, browser_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed")]

DESKTOP = {"width": 1280, "height": 900}
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


# Each checkbox, the text of its own label (the label around it, or the one `for` it; the label's own text
# nodes, not its help or errors), and where both are: the text's line boxes beside the checkbox.
BESIDE = """() => [...document.querySelectorAll('form input[type=checkbox]')].map(box => {
  const label = box.closest('label') || (box.id && document.querySelector(`label[for="${box.id}"]`));
  const b = box.getBoundingClientRect();
  const texts = label ? [...label.childNodes].filter(n => n.nodeType === 3 && n.textContent.trim()) : [];
  const lines = texts.flatMap(node => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return [...range.getClientRects()].filter(r => r.width > 0);
  });
  return {name: box.name, value: box.value, text: texts.map(n => n.textContent.trim()).join(' '),
          box: [b.left, b.top, b.right, b.bottom], lines: lines.map(r => [r.left, r.top, r.right, r.bottom])};
})"""


def _beside(box: dict) -> bool:
    """The checkbox overlaps a line of its label's text vertically, and that line starts (or ends) within
    16 px of it: the two read as one line, the box next to its words."""
    left, top, right, bottom = box["box"]
    for t_left, t_top, t_right, t_bottom in box["lines"]:
        overlaps = top < t_bottom and t_top < bottom
        if overlaps and (0 <= t_left - right <= 16 or 0 <= left - t_right <= 16):
            return True
    return False


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_checkbox_of_the_three_forms_sits_beside_its_label(
    live_server, django_user_model, monkeypatch, viewport
):
    """The New-campaign form's "Invited accounts only" box sat on the line below its label at 1280 px (the
    label's text, then the box, stacked); every checkbox of the New-campaign, New-fit and Exports forms is
    beside its own label's text, on a desktop and on a phone."""
    from django.test import Client

    from tests.research.conftest import make_researcher

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    client = Client()
    client.force_login(make_researcher(django_user_model.objects.create_user("res", password="pw")))
    with browser_page(live_server, client=client, viewport=viewport) as page:
        for path, least in (
            ("/annotate/manage/new/", 1),
            ("/research/fits/new/", 5),
            ("/research/exports/", 5),
        ):
            page.goto(f"{live_server.url}{path}")
            boxes = page.evaluate(BESIDE)
            assert len(boxes) >= least, path
            for box in boxes:
                assert box["text"], f"{path}: checkbox {box['name']} has no label text"
                assert _beside(box), (
                    f"{path} at {viewport['width']} px: {box['name']} is not beside its label: {box}"
                )
        assert page.evaluate("() => window.innerWidth") == viewport["width"]
