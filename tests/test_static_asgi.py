"""Static files under the ASGI server: served by the static-files middleware in the same bytes, without
Django's warning that it had to read a synchronous file iterator whole to serve it (WhiteNoise has no ASGI
support; every page's CSS and script logged it under uvicorn)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .asgi_http import SYNC_ITERATOR_WARNING, asgi_get

STATIC = Path(__file__).resolve().parents[1] / "static"


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["css/site.css", "js/annotate.js", "favicon.svg"])
def test_a_static_file_is_served_over_asgi_whole_and_without_the_warning(name):
    got = asgi_get(f"/static/{name}")
    assert got.status == 200 and got.body == (STATIC / name).read_bytes()
    assert not [w for w in got.warnings if SYNC_ITERATOR_WARNING in w], got.warnings
