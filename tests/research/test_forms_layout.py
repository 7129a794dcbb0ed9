"""The New-fit and Exports forms: every checkbox sits inside its own label, on one line with its text."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.urls import reverse


class Checkboxes(HTMLParser):
    """For each checkbox: the label it is inside (its class and its text)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[dict] = []
        self.found: list[dict] = []

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        attrs = dict(attrs)
        if tag == "label":
            self.stack.append({"class": attrs.get("class") or "", "text": "", "boxes": []})
        elif tag == "input" and attrs.get("type") == "checkbox":
            box = {"name": attrs.get("name"), "label": self.stack[-1] if self.stack else None}
            if self.stack:
                self.stack[-1]["boxes"].append(box)
            self.found.append(box)

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag == "label" and self.stack:
            self.stack.pop()

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self.stack:
            self.stack[-1]["text"] += data


def checkboxes(html: bytes) -> list[dict]:
    parser = Checkboxes()
    parser.feed(html.decode())
    return parser.found


@pytest.mark.parametrize("page", ["research:fit_new", "research:exports"])
def test_each_checkbox_is_inside_its_own_label(client, staff, world, page):
    client.force_login(staff)
    boxes = checkboxes(client.get(reverse(page)).content)
    assert len(boxes) >= 5
    for box in boxes:
        label = box["label"]
        assert label is not None, f"checkbox {box['name']} outside a label"
        assert label["text"].strip(), f"checkbox {box['name']} has no text beside it"
        assert len(label["boxes"]) == 1
    css = (Path(__file__).resolve().parents[2] / "static" / "research" / "research.css").read_text()
    # site.css makes every label a grid (box above text); the research form puts them in a row
    assert '.fitform label.check, .fitform .field label:has(> input[type="checkbox"]) { display: flex;' in css
    if page == "research:fit_new":
        activate = next(b for b in boxes if b["name"] == "activate")
        assert "check" in activate["label"]["class"] and "active fit" in activate["label"]["text"]
    else:
        assert all("check" in b["label"]["class"] for b in boxes)
